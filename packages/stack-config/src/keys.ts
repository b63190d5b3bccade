import * as z from "zod";
import { StackConfigSchema } from "./schema.ts";

/** One key of the stack config, as deploy/README.md lists it. */
export interface StackConfigKey {
  /** Dotted key path, e.g. `images.profiles`. */
  key: string;
  type: string;
  required: boolean;
  /** The default, as YAML would show it (JSON text); undefined when there is none. */
  default?: string;
  meaning: string;
}

interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  const?: unknown;
  additionalProperties?: JsonSchema | boolean;
}

function typeOf(schema: JsonSchema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(" or ");
  if (schema.type === "array") return `list of ${typeOf(schema.items ?? {})}`;
  if (schema.type === "object") return schema.properties ? "mapping" : "mapping of strings";
  if (schema.type === "integer") return "number";
  return Array.isArray(schema.type) ? schema.type.join(" or ") : (schema.type ?? "any");
}

/** Every key of the stack config with its type, default and meaning, from the schema itself. */
export function stackConfigKeys(): StackConfigKey[] {
  const root = z.toJSONSchema(StackConfigSchema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  const rows: StackConfigKey[] = [];
  const walk = (schema: JsonSchema, prefix: string, required: boolean) => {
    for (const [name, child] of Object.entries(schema.properties ?? {})) {
      const key = prefix === "" ? name : `${prefix}.${name}`;
      const isRequired = required && (schema.required ?? []).includes(name) && child.default === undefined;
      if (child.type === "object" && child.properties !== undefined) {
        walk(child, key, isRequired);
        continue;
      }
      const meaning =
        child.description ?? (name === "apiVersion" || name === "kind" ? "The format and its version." : "");
      rows.push({
        key,
        type: typeOf(child),
        required: isRequired,
        ...(child.default === undefined ? {} : { default: JSON.stringify(child.default) }),
        meaning,
      });
    }
  };
  walk(root, "", true);
  return rows;
}
