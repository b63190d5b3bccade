/**
 * Fast checks generated from the zod schemas (issue 25): each schema goes through zod's JSON
 * Schema output (`z.toJSONSchema`, output mode) and ajv's standalone code generation, and the
 * code is written beside the schemas (packages/nvke-api/src/answers.generated.ts). A check says
 * yes only when the schema would return the value unchanged; anything else goes to the zod
 * schema itself, which names every problem. Building the controller API's ~150 zod schemas
 * costs a short-lived process ≈ 20–40 ms of CPU (tooling/bench/README.md), so a read checks the
 * controller's answer with the generated code and loads the schemas only when it says no.
 *
 * A part of a schema JSON Schema cannot say (a refinement, a transform) becomes `false` there:
 * the check then declines every value that has it, and zod decides. `docs:check` fails when
 * the committed file is not what the schemas generate.
 */
import {
  ClusterReleaseSchema,
  ClusterSchema,
  HealthSchema,
  listSchema,
  MachineImageSchema,
  NodePoolReleaseSchema,
  NodePoolSchema,
} from "@nodekit/nvke-api";
import { Ajv } from "ajv";
import standalone from "ajv/dist/standalone/index.js";
import * as z from "zod";

/** The objects the NVKE client checks: a check for each, and for a page of each (`<name>List`). */
const OBJECTS: Record<string, { schema: z.ZodType; type: string }> = {
  isCluster: { schema: ClusterSchema, type: "Cluster" },
  isNodePool: { schema: NodePoolSchema, type: "NodePool" },
  isMachineImage: { schema: MachineImageSchema, type: "MachineImage" },
  isClusterRelease: { schema: ClusterReleaseSchema, type: "ClusterRelease" },
  isNodePoolRelease: { schema: NodePoolReleaseSchema, type: "NodePoolRelease" },
};

/** Whether zod checks `schema` with code of its own (refine, superRefine), which JSON Schema leaves out. */
function hasCustomCheck(schema: z.core.$ZodType): boolean {
  const def = schema._zod.def as { type: string; checks?: z.core.$ZodCheck[] };
  return def.type === "custom" || (def.checks ?? []).some((check) => check._zod.def.check === "custom");
}

/** The JSON Schema of a zod schema as it returns values (output mode), without annotations. */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, {
    io: "output",
    target: "draft-7",
    unrepresentable: "throw",
    override(context) {
      // A rule of zod's own code: JSON Schema cannot say it, so the check declines.
      if (hasCustomCheck(context.zodSchema)) {
        for (const key of Object.keys(context.jsonSchema)) delete context.jsonSchema[key];
        context.jsonSchema.not = {};
      }
      delete context.jsonSchema.description;
      // zod builds a new object, where a `__proto__` key (JSON.parse makes it an own key) is lost.
      if (context.jsonSchema.type === "object") {
        const names = (context.jsonSchema.propertyNames ?? {}) as Record<string, unknown>;
        context.jsonSchema.propertyNames = { ...names, not: { const: "__proto__" } };
      }
    },
  }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/** packages/nvke-api/src/answers.generated.ts: the controller answers' checks as standalone code. */
export function answerChecks(): [string, string] {
  // Lengths as zod counts them (UTF-16 code units), patterns as zod runs them (no `u` flag),
  // formats left to the patterns zod writes beside them: the checks run no runtime of ajv's.
  const ajv = new Ajv({
    code: { source: true, esm: true, lines: false },
    strict: true,
    unicode: false,
    unicodeRegExp: false,
    validateFormats: false,
    messages: false,
    // A page's items are checked by the object's own function, not a copy of it.
    inlineRefs: false,
    logger: {
      log() {},
      // `unicode: false` is deprecated, and still what makes ajv count lengths as zod does.
      warn(message: unknown) {
        if (!String(message).startsWith("DEPRECATED: option unicode")) throw new Error(String(message));
      },
      error(message: unknown) {
        throw new Error(String(message));
      },
    },
  });
  const checks: Array<[string, string]> = [];
  for (const [name, { schema, type }] of Object.entries(OBJECTS)) {
    ajv.addSchema({ $id: name, ...jsonSchemaOf(schema) });
    // The page's own schema (items, continue) from zod's, its items the object's check by reference.
    const page = jsonSchemaOf(listSchema(z.object({}))) as { properties: { items: { items: unknown } } };
    page.properties.items.items = { $ref: name };
    ajv.addSchema({ $id: `${name}List`, ...page });
    checks.push([name, type], [`${name}List`, `List<${type}>`]);
  }
  ajv.addSchema({ $id: "isHealth", ...jsonSchemaOf(HealthSchema) });
  checks.push(["isHealth", '{ status: "ok" }']);
  const code = standalone.default(ajv, Object.fromEntries(checks.map(([name]) => [`${name}Code`, name])));
  if (/\brequire\(|^import /m.test(code)) throw new Error("answerChecks: the generated code needs ajv's runtime");
  const typed = checks.map(
    ([name, type]) => `export const ${name} = ${name}Code as unknown as (value: unknown) => value is ${type};`,
  );
  const types = "Cluster, ClusterRelease, List, MachineImage, NodePool, NodePoolRelease";
  return [
    "packages/nvke-api/src/answers.generated.ts",
    [
      "// @ts-nocheck",
      "// Generated by tooling/docs/validators.ts from the zod schemas in schemas.ts (zod's JSON Schema",
      "// output compiled by ajv's standalone mode): run ./run pnpm docs:gen after changing a schema.",
      "// Each check says yes only when the schema would return the value unchanged.",
      `import type { ${types} } from "./schemas.ts";`,
      code
        .replace(/^"use strict";/, "")
        .replace(/export const (\w+Code) = /g, "const $1 = ")
        // One line per function and constant (ajv writes the code as one line).
        .replace(/;(?=function validate|const \w+ = )/g, ";\n"),
      ...typed,
      "",
    ].join("\n"),
  ];
}
