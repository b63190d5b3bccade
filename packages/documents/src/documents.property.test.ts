import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { dump, load } from "js-yaml";
import { describe, expect, test } from "vitest";
import * as z from "zod";
import type { FieldPath } from "./locate.ts";
import { parseYamlWith } from "./parse-yaml.ts";
import { readYamlDocuments } from "./read.ts";

const source = "input.yaml";

// Text made of YAML's own punctuation, indentation and scalars, so that most samples get
// deep into the parser before they go wrong, plus plain random strings.
const yamlish = fc.oneof(
  fc
    .array(
      fc.constantFrom(
        "a",
        "key",
        "0",
        "1.5",
        "true",
        "~",
        ":",
        ": ",
        "- ",
        "-",
        "\n",
        "\r\n",
        "  ",
        "    ",
        "\t",
        "[",
        "]",
        "{",
        "}",
        ", ",
        "'",
        '"',
        "\\",
        "# c",
        "&x ",
        "*x",
        "!!str ",
        "!!int ",
        "---\n",
        "...\n",
        "? ",
        "|\n",
        ">-\n",
        "<<: ",
        "%YAML 1.2\n",
        "é",
        "\u0000",
      ),
      { maxLength: 40 },
    )
    .map((parts) => parts.join("")),
  fc.string({ maxLength: 60 }),
);

describe("reading any text", () => {
  test("never throws, and gives either documents or problems, each problem with a line when it has one", () => {
    fc.assert(
      fc.property(yamlish, (text) => {
        const { documents, problems } = readYamlDocuments(text, { source });

        expect(documents.length > 0 && problems.length > 0).toBe(false);
        for (const problem of problems) {
          expect(problem.source).toBe(source);
          if (problem.line !== undefined) expect(problem.line).toBeGreaterThanOrEqual(1);
        }
        const lineCount = text.split("\n").length;
        for (const document of documents) {
          const line = document.lineOf([]);
          if (line !== undefined) expect(line).toBeLessThanOrEqual(lineCount);
        }
      }),
      { numRuns: 2000 },
    );
  });

  test("validating it never throws, and gives a value exactly when there is no problem", () => {
    const Schema = z.strictObject({ a: z.string(), key: z.array(z.number()).optional() });
    fc.assert(
      fc.property(yamlish, (text) => {
        const { value, problems } = parseYamlWith(Schema, text, { source });

        expect(value === undefined).toBe(problems.length > 0);
      }),
      { numRuns: 2000 },
    );
  });
});

// A nested document of mappings and lists; keys are drawn from characters YAML must quote.
type Tree = string | number | boolean | null | Tree[] | { [key: string]: Tree };
const key = fc.string({ unit: fc.constantFrom(..."ab.:- #\"'[]{}0é"), minLength: 1, maxLength: 6 });
const { tree } = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie("tree"), { maxLength: 4 }),
    fc.dictionary(key, tie("tree"), { maxKeys: 4 }),
  ),
}));

function leafPaths(value: Tree, path: FieldPath = []): FieldPath[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => leafPaths(item, [...path, index]));
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([name, item]) => leafPaths(item, [...path, name]));
  }
  return [path];
}

/** A schema that accepts exactly the shape of `value`, except that it wants a string at `wrong`. */
function schemaFor(value: Tree, wrong: FieldPath | undefined): z.ZodType {
  if (wrong?.length === 0) return z.string();
  const child = (item: Tree, at: string | number) => schemaFor(item, wrong?.[0] === at ? wrong.slice(1) : undefined);
  if (Array.isArray(value)) {
    return z.tuple(value.map((item, index) => child(item, index)) as [z.ZodType, ...z.ZodType[]]);
  }
  if (typeof value === "object" && value !== null) {
    return z.strictObject(Object.fromEntries(Object.entries(value).map(([name, item]) => [name, child(item, name)])));
  }
  if (typeof value === "string") return z.string();
  if (typeof value === "number") return z.number();
  if (typeof value === "boolean") return z.boolean();
  return z.null();
}

const MARKER = 987654321;

/** A mapping at the root with at least one leaf, one of which is picked to hold the wrong type. */
const withWrongLeaf = fc
  .dictionary(key, tree, { minKeys: 1, maxKeys: 5 })
  .filter((root) => !JSON.stringify(root).includes(String(MARKER)))
  .chain((root) => {
    const leaves = leafPaths(root);
    return leaves.length === 0 ? fc.constant(undefined) : fc.constantFrom(...leaves).map((leaf) => ({ root, leaf }));
  })
  .filter((picked) => picked !== undefined);

function setAt(value: Tree, path: FieldPath, leaf: Tree): Tree {
  if (path.length === 0) return leaf;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((item, index) => (index === head ? setAt(item, rest, leaf) : item));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([name, item]) => [name, name === head ? setAt(item, rest, leaf) : item]),
    );
  }
  return value;
}

function safeLoad(text: string): unknown {
  try {
    return load(text);
  } catch {
    return undefined;
  }
}

describe("a wrong-typed leaf in a generated document", () => {
  test.each([
    ["YAML", (value: Tree) => dump(value)],
    ["flow-style YAML", (value: Tree) => dump(value, { flowLevel: 2 })],
    ["JSON", (value: Tree) => JSON.stringify(value, null, 2)],
  ])("written as %s, is reported once, at its path and on its line", (_format, write) => {
    fc.assert(
      fc.property(withWrongLeaf, ({ root, leaf }) => {
        const document = setAt(root, leaf, MARKER);
        const schema = schemaFor(document, leaf);
        const text = write(document);
        // js-yaml's dump can write text it cannot read back (a key "... a" becomes a
        // document-end marker); such renderings say nothing about our locator.
        fc.pre(isDeepStrictEqual(safeLoad(text), document));
        const expectedLine = text.split("\n").findIndex((line) => line.includes(String(MARKER))) + 1;

        const { value, problems } = parseYamlWith(schema, text, { source });

        expect(value).toBeUndefined();
        expect(problems).toEqual([
          {
            severity: "error",
            source,
            line: expectedLine,
            path: leaf,
            value: MARKER,
            message: "must be a string, not a number",
          },
        ]);
      }),
      { numRuns: 300 },
    );
  });
});
