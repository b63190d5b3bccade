import { describe, expect, test } from "vitest";
import * as z from "zod";
import { parseYamlWith } from "./parse-yaml.ts";

const source = "stack.yaml";
const Stack = z.strictObject({ name: z.string().default("default"), nodes: z.number().default(1) });

describe("parseYamlWith", () => {
  test("reads YAML and JSON alike", () => {
    expect(parseYamlWith(Stack, "name: edge\nnodes: 3\n", { source })).toEqual({
      value: { name: "edge", nodes: 3 },
      problems: [],
    });
    expect(parseYamlWith(Stack, '{"name": "edge", "nodes": 3}', { source })).toEqual({
      value: { name: "edge", nodes: 3 },
      problems: [],
    });
  });

  test.each(["", "# nothing yet\n", "---\n", "~\n"])("%j is empty: a problem by default", (text) => {
    expect(parseYamlWith(Stack, text, { source })).toEqual({
      problems: [{ severity: "error", source, message: "is empty" }],
    });
    expect(parseYamlWith(Stack, text, { source, empty: { message: "is empty; expected a Stack" } })).toEqual({
      problems: [{ severity: "error", source, message: "is empty; expected a Stack" }],
    });
  });

  test("an empty file can stand for a value instead, validated like a document", () => {
    expect(parseYamlWith(Stack, "", { source, empty: { value: {} } })).toEqual({
      value: { name: "default", nodes: 1 },
      problems: [],
    });
    expect(parseYamlWith(Stack, "", { source, empty: { value: { nodes: "1" } } })).toEqual({
      problems: [{ severity: "error", source, path: ["nodes"], value: "1", message: "must be a number, not a string" }],
    });
  });

  test("reads one document only", () => {
    expect(parseYamlWith(Stack, "name: a\n---\nname: b\n", { source, fileKind: "a stack file" })).toEqual({
      problems: [{ severity: "error", source, message: "holds 2 YAML documents; a stack file holds exactly one" }],
    });
  });

  test("invalid YAML is its only problem", () => {
    expect(parseYamlWith(Stack, "name: [a\nnodes: 1\n", { source }).problems).toEqual([
      expect.objectContaining({
        source,
        line: expect.any(Number),
        message: expect.stringMatching(/^is not valid YAML/),
      }),
    ]);
  });
});
