import { describe, expect, test } from "vitest";
import { compareSortValues, compileSortKey, compileTemplate, TemplateError } from "./jsonpath.ts";

// kubectl's JSONPath support page, with this CLI's objects.
const list = {
  items: [
    {
      name: "a",
      id: "1",
      labels: { team: "x" },
      status: { phase: "Ready", nodes: [{ name: "a-0" }, { name: "a-1" }] },
    },
    { name: "b", id: "2", labels: {}, status: { phase: "Provisioning", nodes: [] } },
  ],
};
const render = (template: string, data: unknown = list) => compileTemplate(template).render(data);

describe("kubectl's JSONPath templates", () => {
  test.each([
    ["{.items[*].name}", "a b"],
    ["{.items[0].status.phase}", "Ready"],
    ["{range .items[*]}{.name}{'\\t'}{.status.phase}{\"\\n\"}{end}", "a\tReady\nb\tProvisioning\n"],
    ["{range .items[*]}[{.name}: {range .status.nodes[*]}{.name} {end}]{end}", "[a: a-0 a-1 ][b: ]"],
    ['{.items[?(@.status.phase=="Ready")].name}', "a"],
    ["{.items[0].labels}", '{"team":"x"}'],
    ["name={.items[1].name}, nothing={.items[1].missing}.", "name=b, nothing=."],
    ["{@.items[1].id}", "2"],
    ["{$.items[1].id}", "2"],
    ["plain text", "plain text"],
  ])("%s prints %j", (template, expected) => {
    expect(render(template)).toBe(expected);
  });

  test("applies to one object as well as to a list", () => {
    expect(render("{.name} is {.status.phase}", list.items[0])).toBe("a is Ready");
  });

  test.each([
    ["{.items[*].name", /^has an unclosed action at character 1/],
    ["{range .items[*]}{.name}", /^has a \{range \.items\[\*\]\} without its \{end\}$/],
    ["{.name}{end}", /^has an \{end\} without a \{range\} before it$/],
    ["{}", /^has an empty action \{\}$/],
    ["{.items[0}", /^has unbalanced brackets in \{\.items\[0\}$/],
  ])("%s is refused: %s", (template, message) => {
    expect(() => compileTemplate(template)).toThrow(TemplateError);
    expect(() => compileTemplate(template)).toThrow(message);
  });
});

describe("--sort-by keys", () => {
  test("read a field by JSONPath, with or without braces", () => {
    expect(compileSortKey(".status.phase")(list.items[0])).toBe("Ready");
    expect(compileSortKey("{.id}")(list.items[1])).toBe("2");
    expect(compileSortKey(".missing")(list.items[1])).toBeUndefined();
    expect(() => compileSortKey("")).toThrow(/^is empty/);
  });

  test("numbers sort by value, text as text, missing values first", () => {
    // (Array.prototype.sort puts undefined itself last without asking: sort wrapped values, as the printer does.)
    const rows = [10, 2, undefined, 33].map((value) => ({ value }));
    expect(rows.sort((a, b) => compareSortValues(a.value, b.value)).map((row) => row.value)).toEqual([
      undefined,
      2,
      10,
      33,
    ]);
    expect(["b", "a", "c"].sort(compareSortValues)).toEqual(["a", "b", "c"]);
  });
});
