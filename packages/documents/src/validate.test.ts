import { formatProblem } from "@nodekit/errors";
import { describe, expect, test } from "vitest";
import * as z from "zod";
import { parseYamlWith } from "./parse-yaml.ts";
import { readYamlDocuments } from "./read.ts";
import { validateDocument } from "./validate.ts";

const source = "pins.yaml";

/** The problems of validating `text` against `schema`, formatted as the CLIs print them. */
function formatted(schema: z.ZodType, text: string): string[] {
  return parseYamlWith(schema, text, { source }).problems.map(formatProblem);
}

describe("validateDocument", () => {
  const Pins = z.strictObject({
    kubernetes: z.string(),
    channel: z.enum(["stable", "rapid"]),
    replicas: z.number().int().min(1).max(9).default(3),
    images: z.array(z.strictObject({ name: z.string(), tag: z.string().regex(/^v\d+/) })),
  });

  test("returns the schema's output, defaults filled in, when there is no problem", () => {
    const [document] = readYamlDocuments("kubernetes: v1.31.2\nchannel: stable\nimages: []\n", { source }).documents;
    if (document === undefined) throw new Error("no document");

    expect(validateDocument(Pins, document, { source })).toEqual({
      value: { kubernetes: "v1.31.2", channel: "stable", replicas: 3, images: [] },
      problems: [],
    });
  });

  test("reports every problem, in line order, with path, line and the value found", () => {
    const text = [
      "images:", // 1
      "  - name: controller", // 2
      "    tag: latest", // 3
      "  - name: agent", // 4
      "channel: beta", // 5
      "replicas: 0", // 6
      "kubernetes: 1.31", // 7
    ].join("\n");

    expect(parseYamlWith(Pins, text, { source }).problems).toEqual([
      {
        severity: "error",
        source,
        line: 3,
        path: ["images", 0, "tag"],
        value: "latest",
        message: "must match the pattern /^v\\d+/",
      },
      { severity: "error", source, line: 4, path: ["images", 1, "tag"], message: "is required" },
      { severity: "error", source, line: 5, path: ["channel"], value: "beta", message: 'must be "stable" or "rapid"' },
      { severity: "error", source, line: 6, path: ["replicas"], value: 0, message: "must be at least 1" },
      {
        severity: "error",
        source,
        line: 7,
        path: ["kubernetes"],
        value: 1.31,
        message: "must be a string, not a number",
      },
    ]);
  });

  test("checks a value built in code the same way, without lines", () => {
    expect(validateDocument(Pins, { value: { kubernetes: "v1", channel: "stable", images: {} } }, { source })).toEqual({
      problems: [{ severity: "error", source, path: ["images"], message: "must be a list, not a mapping" }],
    });
  });

  test("names each unknown field on its own line with the fields that are known, and never quotes its value", () => {
    expect(formatted(Pins, "kubernetes: v1\nchannel: stable\nimages: []\ntoken: s3cret\nreplica: 2\n")).toEqual([
      "pins.yaml:4: field token: is not a known field; the fields here are kubernetes, channel, replicas, images",
      "pins.yaml:5: field replica: is not a known field; the fields here are kubernetes, channel, replicas, images",
    ]);
  });

  test("a missing field is required, on the line of the mapping that lacks it", () => {
    expect(formatted(Pins, "images:\n  - {tag: v1}\n")).toEqual([
      "pins.yaml:1: field kubernetes: is required",
      "pins.yaml:1: field channel: is required",
      "pins.yaml:2: field images[0].name: is required",
    ]);
  });

  test("a schema's own messages win over these", () => {
    const Site = z.strictObject(
      {
        name: z.string({ error: "must be the site's name" }).refine((name) => name === name.toLowerCase(), {
          message: "must be lowercase",
        }),
      },
      { error: (issue) => (issue.code === "unrecognized_keys" ? "is not a site field" : undefined) },
    );

    expect(formatted(Site, "name: 7\n")).toEqual(["pins.yaml:1: field name: 7 must be the site's name"]);
    expect(formatted(Site, "name: Lab\ncolour: red\n")).toEqual([
      'pins.yaml:1: field name: "Lab" must be lowercase',
      "pins.yaml:2: field colour: is not a site field",
    ]);
  });

  test("a rule across fields reports at the field it names, with that field's value", () => {
    const Ports = z
      .strictObject({ low: z.number(), high: z.number() })
      .refine((ports) => ports.low <= ports.high, { path: ["high"], message: "must not be below low" });

    expect(formatted(Ports, "low: 9000\nhigh: 80\n")).toEqual(["pins.yaml:2: field high: 80 must not be below low"]);
  });

  test("a document that is not a mapping is one problem, without its text quoted", () => {
    expect(parseYamlWith(Pins, "just some text\n", { source }).problems).toEqual([
      { severity: "error", source, line: 1, message: "must be a mapping, not a string" },
    ]);
  });
});

describe("messages", () => {
  test.each([
    [z.string(), "42", "must be a string, not a number"],
    [z.number(), "'42'", "must be a number, not a string"],
    [z.number().int(), "1.5", "must be a whole number"],
    [z.int(), "x", "must be a whole number, not a string"],
    [z.number(), "[1]", "must be a number, not a list"],
    [z.boolean(), "yes", "must be true or false, not a string"],
    [z.array(z.string()), "{a: 1}", "must be a list, not a mapping"],
    [z.strictObject({}), "[1]", "must be a mapping, not a list"],
    [z.record(z.string(), z.string()), "~", "must be a mapping, not null"],
    [z.literal("v1"), "v2", 'must be "v1"'],
    [z.enum(["a", "b"]), "c", 'must be "a" or "b"'],
    [z.string().min(1), "''", "must not be empty"],
    [z.string().min(3), "ab", "must be at least 3 characters long"],
    [z.string().max(2), "abc", "must be at most 2 characters long"],
    [z.string().length(2), "abc", "must be exactly 2 characters long"],
    [z.array(z.number()).min(1), "[]", "must not be empty"],
    [z.array(z.number()).max(1), "[1, 2]", "must have at most 1 item"],
    [z.number().min(1), "0", "must be at least 1"],
    [z.number().positive(), "0", "must be greater than 0"],
    [z.number().lt(10), "10", "must be less than 10"],
    [z.number().multipleOf(5), "7", "must be a multiple of 5"],
    [z.string().startsWith("v"), "'1.0'", 'must start with "v"'],
    [z.string().endsWith("/"), "a", 'must end with "/"'],
    [z.string().includes("@"), "a", 'must contain "@"'],
    [z.url(), "not a url", "is not a valid URL"],
    [z.email(), "nobody", "is not a valid email address"],
    [z.uuid(), "abc", "is not a valid uuid"],
    [z.iso.datetime(), "yesterday", "is not a valid date and time (ISO 8601, e.g. 2025-01-31T12:00:00Z)"],
    [z.string().refine(() => false), "x", "is not valid"],
    [z.union([z.string(), z.number()]), "[1]", "must be a string or a number, not a list"],
    [z.union([z.literal("auto"), z.number()]), "manual", 'must be "auto" or a number, not a string'],
  ])("%#: a field given %j says %j", (schema, yaml, message) => {
    expect(parseYamlWith(z.strictObject({ field: schema }), `field: ${yaml}\n`, { source }).problems).toEqual([
      expect.objectContaining({ line: 1, path: ["field"], message }),
    ]);
  });

  test("a missing field is required whatever its type", () => {
    const Every = z.strictObject({
      text: z.string(),
      version: z.literal("v1"),
      mode: z.enum(["a", "b"]),
      size: z.union([z.string(), z.number()]),
    });

    expect(parseYamlWith(Every, "{}\n", { source }).problems.map((problem) => problem.message)).toEqual([
      "is required",
      "is required",
      "is required",
      "is required",
    ]);
  });

  test("a record's keys are checked, each at its own line, without quoting the value", () => {
    const Labels = z.strictObject({ labels: z.record(z.string().regex(/^[a-z]+$/), z.string()) });

    expect(formatted(Labels, "labels:\n  app: x\n  Team: y\n")).toEqual([
      "pins.yaml:3: field labels.Team: is not an allowed key",
    ]);
  });

  describe("unions", () => {
    const Endpoint = z.strictObject({
      endpoint: z.union([z.string(), z.strictObject({ host: z.string(), port: z.number().int() })]),
    });
    const Source = z.strictObject({
      source: z.discriminatedUnion("type", [
        z.strictObject({ type: z.literal("git"), url: z.string() }),
        z.strictObject({ type: z.literal("oci"), image: z.string() }),
      ]),
    });

    test("when one form got past the type check, its problems are reported", () => {
      expect(formatted(Endpoint, "endpoint:\n  host: a\n  port: http\n")).toEqual([
        'pins.yaml:3: field endpoint.port: "http" must be a number, not a string',
      ]);
    });

    test("when no form fits the type, the types that would are named", () => {
      expect(formatted(Endpoint, "endpoint: [a]\n")).toEqual([
        "pins.yaml:1: field endpoint: must be a string or a mapping, not a list",
      ]);
    });

    test("when several forms come close, the union says none matched", () => {
      const Either = z.strictObject({
        limit: z.union([z.strictObject({ cpu: z.number() }), z.strictObject({ memory: z.string() })]),
      });

      expect(formatted(Either, "limit: {}\n")).toEqual([
        "pins.yaml:1: field limit: does not match any of the allowed forms",
      ]);
    });

    test("a form whose own literal field differs is ruled out", () => {
      const Kinds = z.strictObject({
        item: z.union([
          z.strictObject({ kind: z.literal("a"), size: z.number() }),
          z.strictObject({ kind: z.literal("b"), name: z.string() }),
        ]),
      });

      expect(formatted(Kinds, "item:\n  kind: b\n  name: 1\n")).toEqual([
        "pins.yaml:3: field item.name: 1 must be a string, not a number",
      ]);
    });

    test("a discriminated union names the discriminator's values", () => {
      expect(formatted(Source, "source:\n  type: svn\n")).toEqual([
        'pins.yaml:2: field source.type: "svn" must be "git" or "oci"',
      ]);
      expect(formatted(Source, "source:\n  url: x\n")).toEqual([
        'pins.yaml:1: field source.type: is required: "git" or "oci"',
      ]);
      expect(formatted(Source, "source:\n  type: oci\n  image: 3\n")).toEqual([
        "pins.yaml:3: field source.image: 3 must be a string, not a number",
      ]);
    });
  });
});
