import { describe, expect, test } from "vitest";
import { type LocatedDocument, readYamlDocuments } from "./read.ts";

const source = "input.yaml";

/** The one document of `text`; fails the test when there is not exactly one. */
function only(text: string): LocatedDocument {
  const { documents, problems } = readYamlDocuments(text, { source });
  expect(problems).toEqual([]);
  expect(documents).toHaveLength(1);
  return documents[0] as LocatedDocument;
}

describe("lineOf", () => {
  const text = [
    "# leading comment", // 1
    "", // 2
    "apiVersion: v1", // 3
    "metadata:", // 4
    "  name: lab", // 5
    "spec:", // 6
    "  hosts:", // 7
    "    - name: node-1", // 8
    "      ip: 10.0.0.1", // 9
    "    - {name: node-2, ip: 10.0.0.2}", // 10
    "    -", // 11
    "      name: node-3", // 12
    "  empty:", // 13
  ].join("\n");

  test.each([
    [[], 3],
    [["apiVersion"], 3],
    [["metadata"], 4],
    [["metadata", "name"], 5],
    [["spec", "hosts"], 7],
    [["spec", "hosts", 0], 8],
    [["spec", "hosts", 0, "name"], 8],
    [["spec", "hosts", 0, "ip"], 9],
    [["spec", "hosts", 1, "ip"], 10],
    [["spec", "hosts", 2], 12],
    [["spec", "hosts", 2, "name"], 12],
    [["spec", "empty"], 13],
  ] as const)("places %j on line %i: a field at its key, an item at the item", (path, line) => {
    expect(only(text).lineOf(path)).toBe(line);
  });

  test("answers for a path that is not in the file with its nearest ancestor that is", () => {
    const document = only(text);

    expect(document.lineOf(["metadata", "labels"])).toBe(4);
    expect(document.lineOf(["spec", "hosts", 1, "attestation", "tpm"])).toBe(10);
    expect(document.lineOf(["spec", "hosts", 7])).toBe(7);
    expect(document.lineOf(["kind"])).toBe(3);
  });

  test("an empty value is placed at its key, an empty item at its list", () => {
    const document = only("a:\n  b:\n  c:\n    -\n    - x\n");

    expect(document.value).toEqual({ a: { b: null, c: [null, "x"] } });
    expect(document.lineOf(["a", "b"])).toBe(2);
    expect(document.lineOf(["a", "c", 0])).toBe(3);
    expect(document.lineOf(["a", "c", 1])).toBe(5);
  });

  test("tells a key with a dot from a nested key, and the key '0' from the first item", () => {
    const document = only("a.b: 1\na:\n  b: 2\n'0': zero\nlist:\n  - first\n");

    expect(document.lineOf(["a.b"])).toBe(1);
    expect(document.lineOf(["a", "b"])).toBe(3);
    expect(document.lineOf(["0"])).toBe(4);
    expect(document.lineOf(["list", 0])).toBe(6);
    expect(document.lineOf(["list", "0"])).toBe(5);
  });

  test("reads quoted and escaped keys as the keys they spell", () => {
    const document = only(`"a b": 1\n'it''s': 2\n"tab\\tkey": 3\n`);

    expect(document.value).toEqual({ "a b": 1, "it's": 2, "tab\tkey": 3 });
    expect(document.lineOf(["a b"])).toBe(1);
    expect(document.lineOf(["it's"])).toBe(2);
    expect(document.lineOf(["tab\tkey"])).toBe(3);
  });

  test("places an alias at the alias; what it points to is not inside it", () => {
    const document = only("base: &b\n  port: 1\ncopy: *b\n");

    expect(document.value).toEqual({ base: { port: 1 }, copy: { port: 1 } });
    expect(document.lineOf(["base", "port"])).toBe(2);
    expect(document.lineOf(["copy", "port"])).toBe(3);
  });

  test("counts lines the same with CRLF line ends", () => {
    expect(only("a: 1\r\nb:\r\n  c: x\r\n").lineOf(["b", "c"])).toBe(3);
  });

  test("reads JSON, multi-line or not, with the same lines", () => {
    const document = only('{\n  "name": "lab",\n  "hosts": [\n    {"ip": "10.0.0.1"},\n    {"ip": 7}\n  ]\n}\n');

    expect(document.value).toEqual({ name: "lab", hosts: [{ ip: "10.0.0.1" }, { ip: 7 }] });
    expect(document.lineOf(["name"])).toBe(2);
    expect(document.lineOf(["hosts", 1, "ip"])).toBe(5);
    expect(only('{"a": {"b": [1, 2]}}').lineOf(["a", "b", 1])).toBe(1);
  });
});

describe("readYamlDocuments", () => {
  test("reads every document, each with lines of its own", () => {
    const { documents, problems } = readYamlDocuments("kind: A\nname: a\n---\nkind: B\nname: b\n", { source });

    expect(problems).toEqual([]);
    expect(documents.map((document) => document.value)).toEqual([
      { kind: "A", name: "a" },
      { kind: "B", name: "b" },
    ]);
    expect(documents.map((document) => document.lineOf(["name"]))).toEqual([2, 5]);
  });

  test.each([
    ["", []],
    ["# only a comment\n", []],
    ["---\n", [null]],
    ["~\n", [null]],
  ])("%j holds %j", (text, values) => {
    const { documents, problems } = readYamlDocuments(text, { source });

    expect(problems).toEqual([]);
    expect(documents.map((document) => document.value)).toEqual(values);
  });

  test("invalid YAML is one problem with its line and column, and no documents", () => {
    expect(readYamlDocuments("a: 1\nb: [1,\n  c: {\n", { source })).toEqual({
      documents: [],
      problems: [
        {
          severity: "error",
          source,
          line: expect.any(Number),
          column: expect.any(Number),
          message: expect.stringMatching(/^is not valid YAML: /),
        },
      ],
    });
    expect(readYamlDocuments("name: a\nport: 1\nname: b\n", { source }).problems).toEqual([
      { severity: "error", source, line: 3, column: 1, message: "is not valid YAML: duplicated mapping key" },
    ]);
  });

  test("the syntax problem names the language the caller accepts", () => {
    const { problems } = readYamlDocuments('{\n  "a": 1\n  "b": 2\n}\n', { source, language: "YAML or JSON" });

    expect(problems).toEqual([
      {
        severity: "error",
        source,
        line: 3,
        column: expect.any(Number),
        message: expect.stringMatching(/^is not valid YAML or JSON: /),
      },
    ]);
  });

  test("more documents than allowed is one problem naming the count", () => {
    const text = "a: 1\n---\na: 2\n---\na: 3\n";

    expect(readYamlDocuments(text, { source, maxDocuments: 1 })).toEqual({
      documents: [],
      problems: [{ severity: "error", source, message: "holds 3 YAML documents; expected one per file" }],
    });
    expect(readYamlDocuments(text, { source, maxDocuments: 2 }).problems[0]?.message).toBe(
      "holds 3 YAML documents; expected at most 2 per file",
    );
    expect(readYamlDocuments(text, { source, maxDocuments: 1, fileKind: "a pins file" }).problems[0]?.message).toBe(
      "holds 3 YAML documents; a pins file holds exactly one",
    );
    expect(readYamlDocuments(text, { source, maxDocuments: 3 }).documents).toHaveLength(3);
  });
});
