import { UserError } from "@nodekit/errors";
import type { NvkeClient } from "@nodekit/nvke-api";
import { errorCodes } from "../errors.ts";

// `nvkectl explain KIND[.field]`, as kubectl explain reads a resource's OpenAPI schema: here
// the controller's own OpenAPI document (`GET /api/docs`), so it describes what that
// controller takes and returns.

type Schema = {
  $ref?: string;
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: Schema | boolean;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  default?: unknown;
  format?: string;
  minimum?: number;
  maximum?: number;
};

interface Document {
  info?: { version?: string };
  components?: { schemas?: Record<string, Schema> };
}

/** Short names for the API's object kinds, as `get` names them; every schema is also known by its own name. */
const KIND_NAMES: Record<string, string> = {
  cluster: "Cluster",
  clusters: "Cluster",
  nodepool: "NodePool",
  nodepools: "NodePool",
  machineimage: "MachineImage",
  machineimages: "MachineImage",
  clusterrelease: "ClusterRelease",
  clusterreleases: "ClusterRelease",
  nodepoolrelease: "NodePoolRelease",
  nodepoolreleases: "NodePoolRelease",
};

/** What a kind is written as, for the objects the CLI sends. */
const REQUESTS: Record<string, string> = {
  Cluster:
    "create cluster -f takes a CreateClusterRequest (explain createclusterrequest), patch cluster a ClusterPatch",
  NodePool:
    "create nodepool -f takes a CreateNodePoolRequest (explain createnodepoolrequest), patch nodepool a NodePoolPatch",
  MachineImage: "create machineimage -f takes a CreateMachineImageRequest",
  ClusterRelease: "create clusterrelease -f takes a CreateClusterReleaseRequest",
  NodePoolRelease: "create nodepoolrelease -f takes a CreateNodePoolReleaseRequest",
};

export interface ExplainOptions {
  client: NvkeClient;
  /** `KIND` or `KIND.field.field`, as kubectl explain takes it. */
  path: string;
  /** Print every field below, as a tree, instead of one level with descriptions. */
  recursive?: boolean;
}

export async function explain(options: ExplainOptions): Promise<string> {
  return explainSchema((await options.client.openApi()) as Document, options.path, options);
}

/** The explanation of `KIND[.field…]` from an OpenAPI document. Pure. */
export function explainSchema(document: Document, path: string, options: { recursive?: boolean } = {}): string {
  const schemas = document.components?.schemas ?? {};
  const [kindText = "", ...fields] = path.split(".").filter((part) => part !== "");
  const kind =
    KIND_NAMES[kindText.toLowerCase()] ??
    Object.keys(schemas).find((name) => name.toLowerCase() === kindText.toLowerCase());
  if (kind === undefined || schemas[kind] === undefined) {
    const known = [...new Set(Object.values(KIND_NAMES))].map((name) => name.toLowerCase());
    const others = Object.keys(schemas)
      .filter((name) => !Object.values(KIND_NAMES).includes(name))
      .map((name) => name.toLowerCase());
    throw new UserError(
      errorCodes.EXPLAIN_KIND_UNKNOWN,
      `the controller's API document describes no kind ${JSON.stringify(kindText)}`,
      { why: `it describes ${known.join(", ")}, and the documents ${others.join(", ")}` },
    );
  }
  const resolve = (schema: Schema): Schema => {
    let current = schema;
    for (let depth = 0; current.$ref !== undefined && depth < 20; depth++) {
      const name = current.$ref.replace(/^#\/components\/schemas\//, "");
      current = {
        ...(schemas[name] ?? {}),
        ...(current.description === undefined ? {} : { description: current.description }),
      };
    }
    return current;
  };
  let schema = resolve(schemas[kind] as Schema);
  const walked: string[] = [];
  for (const field of fields) {
    const container = objectOf(schema, resolve);
    const next = container.properties?.[field];
    if (next === undefined) {
      const here = [kind, ...walked].join(".");
      const names = Object.keys(container.properties ?? {});
      throw new UserError(errorCodes.EXPLAIN_FIELD_NOT_FOUND, `${here} has no field ${JSON.stringify(field)}`, {
        why: names.length === 0 ? `${here} has no fields` : `the fields of ${here} are ${names.join(", ")}`,
      });
    }
    walked.push(field);
    schema = resolve(next);
  }

  const lines = [`KIND:     ${kind}`, `VERSION:  ${document.info?.version ?? "v1"}`, ""];
  if (walked.length > 0) lines.push(`FIELD: ${walked.at(-1)} <${typeName(schema, resolve)}>`, "");
  lines.push("DESCRIPTION:", ...wrap(describe(schema, resolve) || "<empty>", "    "), "");
  const request = REQUESTS[kind];
  if (walked.length === 0 && request !== undefined) lines.push(`NOTE: ${request}.`, "");
  const object = objectOf(schema, resolve);
  const properties = Object.entries(object.properties ?? {});
  if (properties.length > 0) {
    lines.push("FIELDS:");
    if (options.recursive) lines.push(...recursiveFields(object, resolve, "  ", 0));
    else {
      for (const [name, property] of properties) {
        const required = object.required?.includes(name) ? " -required-" : "";
        lines.push(`  ${name}\t<${typeName(resolve(property), resolve)}>${required}`);
        lines.push(...wrap(describe(resolve(property), resolve) || "<no description>", "    "), "");
      }
    }
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

/** The object a field's fields are read from: itself, its list's items, its map's values, or a union's object. */
function objectOf(schema: Schema, resolve: (s: Schema) => Schema): Schema {
  if (schema.properties !== undefined) return schema;
  if (schema.items !== undefined) return objectOf(resolve(schema.items), resolve);
  if (typeof schema.additionalProperties === "object") return objectOf(resolve(schema.additionalProperties), resolve);
  for (const option of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    const resolved = objectOf(resolve(option), resolve);
    if (resolved.properties !== undefined) return resolved;
  }
  return schema;
}

/** A type as kubectl explain writes one: string, integer, Object, []Object, map[string]string. */
function typeName(schema: Schema, resolve: (s: Schema) => Schema): string {
  if (schema.$ref !== undefined) return schema.$ref.replace(/^#\/components\/schemas\//, "");
  const union = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])];
  if (union.length > 0) {
    const names = [
      ...new Set(
        union
          .map((option) => resolve(option))
          .filter((o) => o.type !== "null")
          .map((o) => typeName(o, resolve)),
      ),
    ];
    return names.join("|") || "null";
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (type === "array") return `[]${schema.items === undefined ? "any" : typeName(resolve(schema.items), resolve)}`;
  if (type === "object" || schema.properties !== undefined) {
    if (schema.properties === undefined && typeof schema.additionalProperties === "object") {
      return `map[string]${typeName(resolve(schema.additionalProperties), resolve)}`;
    }
    return "Object";
  }
  return type ?? "any";
}

/** The description, and what the schema says besides: allowed values, the default, whether null clears it. */
function describe(schema: Schema, resolve: (s: Schema) => Schema): string {
  const union = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].map((option) => resolve(option));
  const values = schema.enum ?? union.find((option) => option.enum !== undefined)?.enum;
  const parts = [schema.description ?? union.find((option) => option.description !== undefined)?.description ?? ""];
  if (values !== undefined) parts.push(`Possible values: ${values.map((value) => JSON.stringify(value)).join(", ")}.`);
  if (schema.default !== undefined) parts.push(`Default: ${JSON.stringify(schema.default)}.`);
  return parts.filter((part) => part !== "").join(" ");
}

function recursiveFields(object: Schema, resolve: (s: Schema) => Schema, prefix: string, depth: number): string[] {
  const lines: string[] = [];
  for (const [name, property] of Object.entries(object.properties ?? {})) {
    const resolved = resolve(property);
    lines.push(
      `${prefix}${name}\t<${typeName(resolved, resolve)}>${object.required?.includes(name) ? " -required-" : ""}`,
    );
    const inner = objectOf(resolved, resolve);
    if (inner.properties !== undefined && depth < 10)
      lines.push(...recursiveFields(inner, resolve, `${prefix}  `, depth + 1));
  }
  return lines;
}

/** Text in lines of at most 80 columns, each with this indent. */
function wrap(text: string, indentation: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && indentation.length + line.length + 1 + word.length > 80) {
      lines.push(`${indentation}${line}`);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(`${indentation}${line}`);
  return lines;
}
