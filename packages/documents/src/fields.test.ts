import { describe, expect, test } from "vitest";
import * as z from "zod";
import { apiVersionField, checkedString, kindField, strictMapping, typeMessage } from "./fields.ts";
import { validateDocument } from "./validate.ts";

const Schema = strictMapping({
  apiVersion: apiVersionField("example.dev/v1"),
  kind: kindField("Example"),
  port: z.number({ error: typeMessage("a port number") }),
  name: checkedString((value) => (value.includes(" ") ? "must not contain spaces" : undefined)).optional(),
  nested: strictMapping({ on: z.boolean({ error: typeMessage("true or false") }) }).optional(),
});

const messages = (value: unknown) => {
  const result = Schema.safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
};

describe("schema fields", () => {
  test("a valid document passes", () => {
    expect(
      messages({ apiVersion: "example.dev/v1", kind: "Example", port: 80, name: "a", nested: { on: true } }),
    ).toEqual([]);
  });

  test("absent fields are required, wrong types say what they must be", () => {
    expect(messages({ port: "80", nested: { on: "yes" } })).toEqual([
      "apiVersion: is required",
      "kind: is required",
      "port: must be a port number",
      "nested.on: must be true or false",
    ]);
  });

  test("another version or kind names the one this reader takes", () => {
    expect(messages({ apiVersion: "example.dev/v2", kind: "Other", port: 1 })).toEqual([
      'apiVersion: is not supported; this version reads "example.dev/v1"',
      'kind: must be "Example"',
    ]);
  });

  test("an unknown field lists the known ones; a non-mapping is named", () => {
    expect(messages({ apiVersion: "example.dev/v1", kind: "Example", port: 1, nested: { on: true, off: 1 } })).toEqual([
      "nested: is not a known field; the fields here are on",
    ]);
    expect(messages({ apiVersion: "example.dev/v1", kind: "Example", port: 1, nested: [1] })).toEqual([
      "nested: must be a mapping",
    ]);
  });

  test("a checked string gives its rule's reason, through validateDocument with its location", () => {
    const document = { value: { apiVersion: "example.dev/v1", kind: "Example", port: 1, name: "a b" } };
    const { problems, value } = validateDocument(Schema, document, { source: "example.yaml" });
    expect(value).toBeUndefined();
    expect(problems).toEqual([
      { severity: "error", source: "example.yaml", path: ["name"], value: "a b", message: "must not contain spaces" },
    ]);
  });
});
