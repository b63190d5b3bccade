/**
 * Fast checks generated from the zod schemas (issue 25): each schema goes through zod's JSON
 * Schema output (`z.toJSONSchema`) and ajv's standalone code generation, and the code is written
 * beside the schema: the controller's answers (packages/nvke-api/src/answers.generated.ts), the
 * site config (packages/site-config/src/config.generated.ts) and the token cache file
 * (packages/k8s-auth/src/cache.generated.ts). Building zod's schemas (and zod itself) costs a
 * short-lived process more than what it reads (tooling/bench/README.md), so a reader checks
 * with the generated code and loads the schema only when it says no; the schema then decides,
 * and names every problem.
 *
 * A check says yes only when the reader can give back what the schema would return. A part of
 * a schema JSON Schema cannot say (a refinement, a transform) becomes `false` there, so that the
 * check declines every value that has it, unless the reader runs it itself as the same plain
 * function the schema calls: the site config's rules (refinements, the check leaves them out)
 * and the token cache's instants (a transform from text to Date; that check is made from the
 * schema's input). Each such place is named below, and generation fails when the schema has one
 * elsewhere, or none where named. `docs:check` fails when a committed file is not what the
 * schemas generate.
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
import { cacheFileSchema } from "../../packages/k8s-auth/src/cache-schema.ts";
import { SITE_FIELD_RULES } from "../../packages/site-config/src/rules.ts";
import { siteConfigSchema } from "../../packages/site-config/src/schema.ts";

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

/** Whether `schema` gives back something other than its input: a transform, a default, a coercion. */
function changesInput(schema: z.core.$ZodType): boolean {
  const def = schema._zod.def as { type: string; coerce?: boolean };
  return (
    ["transform", "pipe", "default", "prefault", "catch", "success", "codec"].includes(def.type) || def.coerce === true
  );
}

/** Where in the JSON Schema a zod schema is: "#/properties/sites/items". */
const pointer = (path: Array<string | number>): string => ["#", ...path].join("/");

interface JsonSchemaOptions {
  /**
   * "output" (default): the check says yes only when the schema returns the value unchanged,
   * and a refinement makes it decline every value. "input": for a schema that turns a string
   * into a Date; the check says yes when the schema accepts the value, and the reader converts it
   * with the schema's own transform function at each of `transforms` (nothing else may change the value).
   */
  io?: "input" | "output";
  /**
   * Where the schema's transforms are (JSON Schema paths; io "input" only). zod converts a
   * schema used in several places once, so one used again is named where it is first used.
   */
  transforms?: readonly string[];
  /**
   * Where the schema runs a refinement that its reader runs too, as the plain function the
   * schema calls (JSON Schema paths): the check leaves them out, and the reader runs them after it.
   */
  refinements?: readonly string[];
}

/** The JSON Schema of a zod schema as it returns values (or takes them: `io`), without annotations. */
function jsonSchemaOf(schema: z.ZodType, options: JsonSchemaOptions = {}): Record<string, unknown> {
  const io = options.io ?? "output";
  const found = { transforms: new Set<string>(), refinements: new Set<string>() };
  const json = z.toJSONSchema(schema, {
    io,
    target: "draft-7",
    unrepresentable: "throw",
    override(context) {
      const at = pointer(context.path);
      if (hasCustomCheck(context.zodSchema)) {
        if (options.refinements?.includes(at)) found.refinements.add(at);
        else {
          // A rule of zod's own code: JSON Schema cannot say it, so the check declines.
          for (const key of Object.keys(context.jsonSchema)) delete context.jsonSchema[key];
          context.jsonSchema.not = {};
        }
      }
      if (io === "input" && changesInput(context.zodSchema)) {
        const def = context.zodSchema._zod.def as { type: string; out?: z.core.$ZodType };
        // Only a value turned into another by a transform the reader runs too, where it said.
        if (def.type !== "pipe" || def.out?._zod.def.type !== "transform" || !options.transforms?.includes(at)) {
          throw new Error(`jsonSchemaOf: the schema changes its input at ${at} (${def.type}): the check cannot say so`);
        }
        found.transforms.add(at);
      }
      delete context.jsonSchema.description;
      if (context.jsonSchema.type === "object") {
        // zod builds a new object, where a `__proto__` key (JSON.parse makes it an own key) is lost.
        const names = (context.jsonSchema.propertyNames ?? {}) as Record<string, unknown>;
        context.jsonSchema.propertyNames = { ...names, not: { const: "__proto__" } };
        // In input mode a plain object's unknown keys pass, and zod would drop them: decline them.
        if (io === "input" && context.jsonSchema.additionalProperties === undefined) {
          context.jsonSchema.additionalProperties = false;
        }
      }
    },
  }) as Record<string, unknown>;
  delete json.$schema;
  for (const kind of ["transforms", "refinements"] as const) {
    const missing = (options[kind] ?? []).filter((at) => !found[kind].has(at));
    if (missing.length > 0) throw new Error(`jsonSchemaOf: no ${kind} at ${missing.join(", ")}: update the reader`);
  }
  return json;
}

/** An ajv that writes standalone code checking as zod does. */
function standaloneAjv(): Ajv {
  // Lengths as zod counts them (UTF-16 code units), patterns as zod runs them (no `u` flag),
  // formats left to the patterns zod writes beside them: the checks run no runtime of ajv's.
  return new Ajv({
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
}

/** The standalone code of the checks `ajv` holds (`[name, type]` each), as a typed module. */
function checkModule(ajv: Ajv, checks: Array<[string, string]>, header: string[]): string {
  const code = standalone.default(ajv, Object.fromEntries(checks.map(([name]) => [`${name}Code`, name])));
  if (/\brequire\(|^import /m.test(code)) throw new Error("checkModule: the generated code needs ajv's runtime");
  const typed = checks.map(
    ([name, type]) => `export const ${name} = ${name}Code as unknown as (value: unknown) => value is ${type};`,
  );
  return [
    "// @ts-nocheck",
    ...header,
    code
      .replace(/^"use strict";/, "")
      .replace(/export const (\w+Code) = /g, "const $1 = ")
      // One line per function and constant (ajv writes the code as one line).
      .replace(/;(?=function validate|const \w+ = )/g, ";\n"),
    ...typed,
    "",
  ].join("\n");
}

/** packages/nvke-api/src/answers.generated.ts: the controller answers' checks as standalone code. */
export function answerChecks(): [string, string] {
  const ajv = standaloneAjv();
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
  const types = "Cluster, ClusterRelease, List, MachineImage, NodePool, NodePoolRelease";
  return [
    "packages/nvke-api/src/answers.generated.ts",
    checkModule(ajv, checks, [
      "// Generated by tooling/docs/validators.ts from the zod schemas in schemas.ts (zod's JSON Schema",
      "// output compiled by ajv's standalone mode): run ./run pnpm docs:gen after changing a schema.",
      "// Each check says yes only when the schema would return the value unchanged.",
      `import type { ${types} } from "./schemas.ts";`,
    ]),
  ];
}

/**
 * packages/site-config/src/config.generated.ts: the config file's shape. The schema refines each
 * site's fields and the file as a whole with the plain functions of rules.ts; the check leaves
 * those out and the reader (store.ts) runs the same functions after it.
 */
export function siteConfigCheck(): [string, string] {
  const ajv = standaloneAjv();
  const refinements = [
    "#",
    ...Object.keys(SITE_FIELD_RULES).map((field) => `#/properties/sites/items/properties/${field}`),
  ];
  ajv.addSchema({ $id: "isSiteConfigShape", ...jsonSchemaOf(siteConfigSchema, { refinements }) });
  return [
    "packages/site-config/src/config.generated.ts",
    checkModule(
      ajv,
      [["isSiteConfigShape", "SiteConfig"]],
      [
        "// Generated by tooling/docs/validators.ts from the zod schema in schema.ts (zod's JSON Schema",
        "// output compiled by ajv's standalone mode): run ./run pnpm docs:gen after changing it.",
        "// The check says yes when the value has the schema's shape; the rules of rules.ts, which the",
        "// schema refines it with, are not in it: store.ts runs them after it.",
        'import type { SiteConfig } from "./rules.ts";',
      ],
    ),
  ];
}

/**
 * packages/k8s-auth/src/cache.generated.ts: the token cache file as JSON has it. The schema turns
 * each instant into a Date with `toInstant` (instant.ts), which the reader runs after the check.
 */
export function tokenCacheCheck(): [string, string] {
  const ajv = standaloneAjv();
  const transforms = ["#/properties/state/oneOf/0/properties/issuedAt"];
  ajv.addSchema({ $id: "isCacheFileJson", ...jsonSchemaOf(cacheFileSchema, { io: "input", transforms }) });
  return [
    "packages/k8s-auth/src/cache.generated.ts",
    checkModule(
      ajv,
      [["isCacheFileJson", "CacheFileJson"]],
      [
        "// Generated by tooling/docs/validators.ts from the zod schema in cache-schema.ts (zod's JSON",
        "// Schema of its input compiled by ajv's standalone mode): run ./run pnpm docs:gen after changing it.",
        "// The check says yes when the schema accepts the value; cache.ts then turns its instants",
        "// into Dates with the schema's own transform.",
        'import type { CacheFileJson } from "./cache-schema.ts";',
      ],
    ),
  ];
}
