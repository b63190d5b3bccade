import fc from "fast-check";
import { dump, load } from "js-yaml";
import { describe, expect, test } from "vitest";
import { decodePlainYaml } from "./plain-yaml.ts";

// The decoder is a fast path in front of js-yaml: whatever it accepts it must read exactly
// as js-yaml's load does; everything else it declines (undefined).

/** What js-yaml's load gives, or "error" when it refuses the text. */
function jsYaml(text: string): unknown {
  try {
    return load(text);
  } catch {
    return "error";
  }
}

function declinesOrAgrees(text: string): void {
  const decoded = decodePlainYaml(text);
  if (decoded !== undefined) expect(decoded, JSON.stringify(text)).toStrictEqual(jsYaml(text));
}

// Strings of every kind: plain-looking words, YAML punctuation, numbers, unicode.
const word = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: "grapheme", maxLength: 6 }),
  fc.string({ unit: "binary", maxLength: 4 }),
  fc.constantFrom(
    "true",
    "False",
    "null",
    "~",
    "y",
    "on",
    "0x1F",
    "0o17",
    "-1",
    "+2.5",
    ".inf",
    "-.Inf",
    ".NaN",
    "1e3",
    "1_000",
    "2026-12-01",
    "-x",
    "?x",
    ":x",
    "a: b",
    "a #b",
    "a#b",
    "#x",
    "'q'",
    '"d"',
    "[a]",
    "a,b",
    "{}",
    "---",
    "...",
    "é ü",
    "\u0085",
    "\u2028",
    "\u00a0",
    "\t",
    "a\nb",
    "\uD800",
    "😀",
    "<<",
    "&a",
    "*a",
    "!t",
    "|",
    ">",
    "%x",
    "@x",
    "http://127.0.0.1:30080",
    "/home/op/lab.kubeconfig",
  ),
);
const key = fc.oneof(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,6}$/), word);
const tree = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    word,
    fc.constantFrom(null, true, 0, 1.5, -3),
    tie("list"),
    tie("map"),
  ),
  list: fc.array(tie("node"), { maxLength: 4 }),
  map: fc.dictionary(key, tie("node"), { maxKeys: 4 }),
})).node;
const dumped = (value: unknown) => dump(value, { noRefs: true, lineWidth: -1 });

/** Trees js-yaml dumps in the style this decoder reads: every leaf a string that is a word. */
const plainStrings = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(fc.stringMatching(/^[a-z/][a-zA-Z0-9./:_-]{0,12}$/), fc.string({ unit: "grapheme", maxLength: 6 })),
    tie("list"),
    tie("map"),
  ),
  list: fc.array(tie("node"), { maxLength: 4 }),
  map: fc.dictionary(fc.stringMatching(/^[a-z][a-zA-Z0-9_-]{0,6}$/), tie("node"), { maxKeys: 4 }),
})).map;

describe("decodePlainYaml reads what js-yaml's dump writes", () => {
  test("mappings and sequences of strings: read, and equal to load", () => {
    fc.assert(
      fc.property(plainStrings, (value) => {
        const text = dumped(value);
        const decoded = decodePlainYaml(text);
        // Declined only for an empty mapping at the top (`{}`: a flow collection on its own), a
        // key dump quotes (`'n':`, a YAML 1.1 boolean), which the decoder does not read, or a
        // number too big to be finite, which js-yaml reads as a string and dump leaves unquoted.
        if (text === "{}\n" || /^ *(?:- )*'[^']*':/m.test(text)) return;
        if (decoded === undefined && /(?:^|[ :-])[-+]?[0-9.]+[eE][-+]?[0-9]{3,}$/m.test(text)) return;
        expect(decoded, text).toStrictEqual(load(text));
      }),
      { numRuns: 2000 },
    );
  });

  test("a config-shaped file is read, not declined", () => {
    const value = {
      apiVersion: "nvkectl.nvke.io/v1",
      kind: "Config",
      activeSite: "1lab",
      sites: [
        { name: "1lab", url: "http://127.0.0.1:30080", kubeconfig: "/home/op/it's here/lab.kubeconfig" },
        { name: "edge-2", url: "https://edge.example.com/api?x=1#top", kubeconfig: "/srv/kube config/é.yaml" },
        { name: "null", url: "https://h", kubeconfig: "/a: b #c" },
      ],
      empty: [],
      nothing: {},
    };
    const text = `# written by a program\n${dumped(value)}`;
    expect(decodePlainYaml(text)).toStrictEqual(value);
  });

  test("any tree of any values: declined, or equal to load", () => {
    fc.assert(
      fc.property(tree, (value) => declinesOrAgrees(dumped(value))),
      { numRuns: 2000 },
    );
  });
});

// Edits a person (or a fuzzer) makes to a file: each inserted at a random place.
const edits = fc.constantFrom(
  "# a comment\n",
  " # trailing",
  "\n\n",
  "'",
  '"',
  ":",
  ": ",
  "#",
  " ",
  "  ",
  "\t",
  "- ",
  "-",
  "[",
  "]",
  "{",
  "}",
  ", ",
  "&a ",
  "*a",
  "!!str ",
  "!tag ",
  "|\n",
  ">-\n",
  "---\n",
  "...\n",
  "%YAML 1.2\n",
  "? ",
  "<<: ",
  "true",
  "null",
  "~",
  "0x1",
  "1e3",
  ".inf",
  "\\",
  "\\x41",
  "\\u00e9",
  "\\U0001F600",
  "\\N",
  "\\q",
  "é",
  "😀",
  "\u0085",
  "\u2028",
  "\uFEFF",
  "\r\n",
  "\r",
  "\n  ",
  "\n    ",
);
const config = [
  "# nvkectl site configuration; change it with `nvkectl config` (see docs/sites.md).",
  "apiVersion: nvkectl.nvke.io/v1",
  "kind: Config",
  "activeSite: lab",
  "sites:",
  "  - name: lab",
  "    url: http://127.0.0.1:30080",
  "    kubeconfig: /home/op/lab.kubeconfig",
  "  - name: edge",
  "    url: 'https://edge.example.com'",
  '    kubeconfig: "/home/op/edge \\u00e9.kubeconfig"',
  "",
].join("\n");

function mutate(text: string, changes: ReadonlyArray<[at: number, edit: string]>): string {
  let out = text;
  for (const [at, edit] of changes) {
    const index = at % (out.length + 1);
    out = out.slice(0, index) + edit + out.slice(index);
  }
  return out;
}

describe("decodePlainYaml on edited files: declines, or agrees with js-yaml", () => {
  test("random edits of a config file", () => {
    const changes = fc.array(fc.tuple(fc.nat(), edits), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(changes, (list) => declinesOrAgrees(mutate(config, list))),
      { numRuns: 5000 },
    );
  });

  test("random edits of dumped trees", () => {
    const changes = fc.array(fc.tuple(fc.nat(), edits), { maxLength: 3 });
    fc.assert(
      fc.property(tree, changes, (value, list) => declinesOrAgrees(mutate(dumped(value), list))),
      { numRuns: 3000 },
    );
  });

  test("indentation changed line by line", () => {
    const lines = config.split("\n");
    const shifts = fc.array(fc.integer({ min: -4, max: 4 }), { minLength: lines.length, maxLength: lines.length });
    fc.assert(
      fc.property(shifts, fc.boolean(), (list, crlf) => {
        const text = lines
          .map((line, index) => {
            const shift = list[index] ?? 0;
            return shift >= 0 ? " ".repeat(shift) + line : line.replace(new RegExp(`^ {0,${-shift}}`), "");
          })
          .join(crlf ? "\r\n" : "\n");
        declinesOrAgrees(text);
      }),
      { numRuns: 3000 },
    );
  });

  test("text made of YAML's punctuation", () => {
    const pieces = fc.array(
      fc.oneof(edits, fc.constantFrom("a", "key", "b: c", "\n", "\n- ", "\n  k: ", "'x'", '"y"', "0", "lab")),
      { maxLength: 30 },
    );
    fc.assert(
      fc.property(pieces, (list) => declinesOrAgrees(list.join(""))),
      { numRuns: 5000 },
    );
  });
});

describe("decodePlainYaml", () => {
  test("reads comments, blank lines, a leading ---, compact and indentless sequences, quotes and CRLF", () => {
    const text = [
      "--- # the one document",
      "# header",
      "",
      "name: lab   # trailing comment",
      "empty:",
      "list:",
      "- a",
      "-   b # c",
      "- - nested",
      "  - deeper",
      "- key: value",
      "  other: 'it''s'",
      "-",
      'quoted: "tab\\there \\u00e9 \\U0001F600 \\x41 \\\\ \\" \\/ \\_"',
      "url: http://127.0.0.1:30080/a#b",
      "number-like: 1lab",
      "dash: -x",
      "colon: a:b",
      "none: []",
      "nested:",
      "    deep:",
      "        deeper: yes",
      "",
    ].join("\r\n");
    expect(decodePlainYaml(text)).toStrictEqual({
      name: "lab",
      empty: null,
      list: ["a", "b", ["nested", "deeper"], { key: "value", other: "it's" }, null],
      quoted: 'tab\there é 😀 A \\ " / \u00a0',
      url: "http://127.0.0.1:30080/a#b",
      "number-like": "1lab",
      dash: "-x",
      colon: "a:b",
      none: [],
      nested: { deep: { deeper: "yes" } },
    });
    expect(decodePlainYaml(text)).toStrictEqual(load(text));
  });

  const declined: Array<[what: string, text: string]> = [
    ["a flow sequence", "a: [x, y]\n"],
    ["a flow mapping", "a: {x: 1}\n"],
    ["an anchor", "a: &x b\nc: *x\n"],
    ["an alias", "a: *x\n"],
    ["a tag", "a: !!str b\n"],
    ["a local tag", "a: !mine b\n"],
    ["a literal block scalar", "a: |\n  text\n"],
    ["a folded block scalar", "a: >-\n  text\n"],
    ["two documents", "a: b\n---\nc: d\n"],
    ["a document end marker", "a: b\n...\n"],
    ["a directive", "%YAML 1.2\n---\na: b\n"],
    ["text after ---", "--- a\n"],
    ["a tab in indentation", "a:\n\tb: c\n"],
    ["a tab anywhere", "a: b\tc\n"],
    ["a quoted key", "'a': b\n"],
    ["a key with a space", "a b: c\n"],
    ["a key resolving to a boolean", "true: b\n"],
    ["__proto__", "__proto__: b\n"],
    ["a duplicate key", "a: b\na: c\n"],
    ["a complex key", "? a\n: b\n"],
    ["a merge key", "<<: b\n"],
    ["a multi-line plain scalar", "a: b\n  c\n"],
    ["a multi-line quoted scalar", "a: 'b\n  c'\n"],
    ["a multi-line double-quoted scalar", 'a: "b\n  c"\n'],
    ["an unknown escape", 'a: "\\q"\n'],
    ["a short \\x escape", 'a: "\\x4"\n'],
    ["a line continuation escape", 'a: "b\\\n  c"\n'],
    ["a comment without a space", "a: 'b'#c\n"],
    ["text after a quoted scalar", "a: 'b' c\n"],
    ["a nested mapping on one line", "a: b: c\n"],
    ["a value ending with a colon", "a: b:\n"],
    ["null", "a: null\n"],
    ["~", "a: ~\n"],
    ["true", "a: true\n"],
    ["False", "a: False\n"],
    ["an integer", "a: 12\n"],
    ["a hexadecimal integer", "a: 0x1F\n"],
    ["an octal integer", "a: 0o17\n"],
    ["a float", "a: 1.5e3\n"],
    [".inf", "a: -.inf\n"],
    [".nan", "a: .NaN\n"],
    ["a bad indentation", "a:\n    b: c\n  d: e\n"],
    ["a sequence item in a mapping", "a: b\n- c\n"],
    ["a top-level scalar", "just text\n"],
    ["an empty file", ""],
    ["only comments", "# nothing\n\n"],
    ["a byte-order mark", "\uFEFFa: b\n"],
    ["a lone CR", "a: b\rc: d\n"],
    ["NEL", "a: b\u0085c\n"],
    ["a line separator", "a: b\u2028c\n"],
    ["a control character", "a: b\u0001\n"],
    ["a deeper comment after a scalar", "a: b\n  # more\n"],
    ["too deep", `${Array.from({ length: 60 }, (_, depth) => `${" ".repeat(depth * 2)}k:`).join("\n")} v\n`],
  ];
  test.each(declined)("declines %s", (_what, text) => {
    expect(decodePlainYaml(text)).toBeUndefined();
  });
});

describe("decodePlainYaml declines every text with a character it does not read", () => {
  // The pattern the decoder ran over every text before it first asked whether the text is plain
  // ASCII (which this pattern cannot match): any text it matches must still be declined.
  const UNREAD =
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
    /[\x00-\x09\x0B\x0C\x0E-\x1F\x7F-\x9F\u2028\u2029\uFEFF\uFFFE\uFFFF]|\r(?!\n)|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:[^\uD800-\uDBFF]|^)[\uDC00-\uDFFF]/;
  const config = "apiVersion: nvkectl.nvke.io/v1\nkind: Config\nsites:\n  - name: lab\n    url: http://127.0.0.1:1\n";

  test("each code unit the pattern matches, anywhere in a config file", () => {
    const unread: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      const char = String.fromCharCode(code);
      if (UNREAD.test(char)) unread.push(char);
    }
    expect(unread.length).toBeGreaterThan(2000);
    for (const [i, char] of unread.entries()) {
      const at = (i * 7) % (config.length + 1);
      const text = config.slice(0, at) + char + config.slice(at);
      expect(UNREAD.test(text)).toBe(true);
      expect(decodePlainYaml(text), JSON.stringify(text)).toBeUndefined();
    }
  });

  test("random texts: whatever the pattern matches is declined", () => {
    const text = fc.oneof(
      fc.string({ unit: "binary", maxLength: 40 }).map((s) => `key: ${s}\n`),
      fc
        .tuple(fc.nat(config.length), fc.string({ unit: "binary", minLength: 1, maxLength: 3 }))
        .map(([at, s]) => config.slice(0, at) + s + config.slice(at)),
    );
    fc.assert(
      fc.property(text, (value) => {
        if (UNREAD.test(value)) expect(decodePlainYaml(value)).toBeUndefined();
      }),
      { numRuns: 5000 },
    );
  });
});

describe("decodePlainYaml on number-like plain scalars", () => {
  test("a value that starts like a number: declined, or equal to load", () => {
    const value = fc.oneof(
      fc.stringMatching(/^[-+.]?[0-9][0-9a-fA-FxoeE.+_-]{0,6}$/),
      fc.stringMatching(/^[-+]?\.?[0-9a-zA-Z.]{0,5}$/),
      fc.constantFrom("+1", "-1", "+.5", "-.inf", "+.INF", ".nan", "0x1F", "0o17", "1e3", "+1e-3", "-0", "+", "-", "."),
    );
    fc.assert(
      fc.property(value, (scalar) => {
        const text = `key: ${scalar}\nlist:\n  - ${scalar}\n`;
        let expected: unknown;
        try {
          expected = load(text);
        } catch {
          expect(decodePlainYaml(text)).toBeUndefined();
          return;
        }
        const decoded = decodePlainYaml(text);
        if (decoded !== undefined) expect(decoded, text).toStrictEqual(expected);
      }),
      { numRuns: 3000 },
    );
    expect(decodePlainYaml("key: +1\n")).toBeUndefined();
    expect(decodePlainYaml("key: .5\n")).toBeUndefined();
    expect(decodePlainYaml("key: v1.2\n")).toEqual({ key: "v1.2" });
  });
});

describe("decodePlainYaml on scalars that start with an indicator", () => {
  test("each of YAML's indicators first, with a space or not after it: declined, or equal to load", () => {
    for (const indicator of "-?:,[]{}#&*!|>'\"%@`") {
      for (const scalar of [indicator, `${indicator}x`, `${indicator} x`, `a${indicator}`]) {
        const text = `key: ${scalar}\n`;
        let expected: unknown;
        try {
          expected = load(text);
        } catch {
          expect(decodePlainYaml(text), text).toBeUndefined();
          continue;
        }
        const decoded = decodePlainYaml(text);
        if (decoded !== undefined) expect(decoded, text).toStrictEqual(expected);
      }
      // A plain scalar never starts with an indicator, except `-`, `?` and `:` before a non-space
      // (and `# x` after the key is a comment: the value is null).
      const reads = decodePlainYaml(`key: ${indicator}x\n`) !== undefined;
      expect([indicator, reads]).toEqual([indicator, "-?:#".includes(indicator)]);
    }
  });
});
