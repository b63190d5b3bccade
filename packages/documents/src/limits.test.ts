import { describe, expect, test } from "vitest";
import * as z from "zod";
import { parseYamlWith } from "./parse-yaml.ts";
import { readYamlDocuments } from "./read.ts";
import { decodeUtf8 } from "./text.ts";

const source = "cluster.yaml";

/** The "billion laughs" file: each level repeats the one before it `fanout` times. */
function aliasBomb(levels: number, fanout = 9): string {
  const lines = ["a0: &a0 [lol]"];
  for (let level = 1; level <= levels; level++) {
    lines.push(`a${level}: &a${level} [${Array.from({ length: fanout }, () => `*a${level - 1}`).join(", ")}]`);
  }
  return `${lines.join("\n")}\n`;
}

describe("aliases", () => {
  test("an alias bomb of a few hundred bytes is one located problem, found without expanding it", () => {
    const text = aliasBomb(9); // 9^9 ≈ 387 million strings once expanded
    expect(text.length).toBeLessThan(800);

    const { documents, problems } = readYamlDocuments(text, { source });

    expect(documents).toEqual([]);
    expect(problems).toEqual([
      {
        severity: "error",
        source,
        line: 5, // a4: its sixth *a3 takes the count past 10,000
        column: 35,
        message: "repeats more than 10000 nodes through aliases (here *a3); write the values out, or use fewer aliases",
      },
    ]);
  });

  test("the same bomb inside a field the schema leaves open is stopped before validation", () => {
    const Open = z.strictObject({ infra: z.strictObject({ machineTemplate: z.strictObject({ spec: z.unknown() }) }) });
    const bomb = aliasBomb(8)
      .split("\n")
      .map((line) => (line === "" ? line : `      ${line}`))
      .join("\n");
    const { value, problems } = parseYamlWith(Open, `infra:\n  machineTemplate:\n    spec:\n${bomb}`, { source });
    expect(value).toBeUndefined();
    expect(problems[0]?.message).toMatch(/^repeats more than 10000 nodes through aliases/);
  });

  test.each([
    ["a list", "spec:\n  a: &x [1, *x]\n", 2, 13],
    ["a mapping", "spec: &self\n  child: *self\n", 2, 10],
  ])("an alias inside the node it names (%s) is a located problem, not a cyclic value", (_kind, text, line, column) => {
    expect(readYamlDocuments(text, { source }).problems).toEqual([
      {
        severity: "error",
        source,
        line,
        column,
        message: expect.stringMatching(
          /^has an alias \*\w+ inside the node &\w+ it repeats: the value would contain itself$/,
        ),
      },
    ]);
  });

  test("ordinary aliases still read, as the same values", () => {
    const { documents, problems } = readYamlDocuments("base: &b {port: 1}\nprod: *b\nlist: [*b, *b]\n", { source });
    expect(problems).toEqual([]);
    expect(documents[0]?.value).toEqual({ base: { port: 1 }, prod: { port: 1 }, list: [{ port: 1 }, { port: 1 }] });
  });

  test("the limit can be raised or lowered", () => {
    const text = "a: &a [1, 2, 3]\nb: [*a, *a]\n";
    expect(readYamlDocuments(text, { source, maxAliasNodes: 8 }).problems).toEqual([]);
    expect(readYamlDocuments(text, { source, maxAliasNodes: 7 }).problems).toHaveLength(1);
  });
});

test("text longer than the limit is one problem", () => {
  expect(readYamlDocuments("a: 1\n".repeat(10), { source, maxLength: 49 }).problems).toEqual([
    { severity: "error", source, message: "is 50 characters long; at most 49 are read" },
  ]);
});

describe("decodeUtf8", () => {
  test("UTF-8 is text; a byte-order mark is dropped", () => {
    expect(decodeUtf8(Buffer.from("name: é\n"), { source })).toEqual({ text: "name: é\n", problems: [] });
    expect(decodeUtf8(Buffer.from("\uFEFFa: 1\n"), { source })).toEqual({ text: "a: 1\n", problems: [] });
  });

  test("Latin-1 is a problem at the first byte that is not UTF-8", () => {
    const bytes = Buffer.concat([
      Buffer.from("name,ip\nnode-1,10.0.0.1\ncaf"),
      Buffer.from([0xe9]),
      Buffer.from(",x\n"),
    ]);
    expect(decodeUtf8(bytes, { source: "hosts.csv" })).toEqual({
      problems: [
        {
          severity: "error",
          source: "hosts.csv",
          line: 3,
          column: 4,
          message: "is not UTF-8 text (byte 0xe9 is not part of a UTF-8 character); save the file as UTF-8",
        },
      ],
    });
  });

  test("UTF-16 is named as such", () => {
    const bytes = Buffer.from("\uFEFFa: 1\n", "utf16le");
    expect(decodeUtf8(bytes, { source }).problems[0]?.message).toBe(
      "is UTF-16 text, not UTF-8; save it as UTF-8 (without a byte-order mark)",
    );
  });

  test("overlong forms and surrogates are not UTF-8", () => {
    expect(decodeUtf8(Buffer.from([0x61, 0xc0, 0xaf]), { source }).problems[0]?.column).toBe(2);
    expect(decodeUtf8(Buffer.from([0x61, 0x62, 0xed, 0xa0, 0x80]), { source }).problems[0]?.column).toBe(3);
  });
});
