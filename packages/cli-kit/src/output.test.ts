import { describe, expect, it } from "vitest";
import { formatTable, renderOutput } from "./output.ts";

interface Row {
  name: string;
  ip: string;
  tpm?: string;
}
const columns = [
  { header: "name", value: (r: Row) => r.name },
  { header: "ip", value: (r: Row) => r.ip },
  { header: "tpm", value: (r: Row) => r.tpm, wide: true },
];
const rows: Row[] = [
  { name: "node-a", ip: "10.0.0.1", tpm: "abc" },
  { name: "b", ip: "2001:db8::1" },
];

describe("renderOutput", () => {
  it("prints a kubectl-style table: upper-case headers, aligned, no trailing blanks", () => {
    expect(renderOutput("table", { rows, columns })).toMatchInlineSnapshot(`
      "NAME     IP
      node-a   10.0.0.1
      b        2001:db8::1
      "
    `);
  });

  it("adds wide columns with -o wide and shows <none> for empty cells", () => {
    expect(renderOutput("wide", { rows, columns })).toMatchInlineSnapshot(`
      "NAME     IP            TPM
      node-a   10.0.0.1      abc
      b        2001:db8::1   <none>
      "
    `);
  });

  it("prints the data, not the table, as JSON and YAML", () => {
    const data = { items: rows };
    expect(JSON.parse(renderOutput("json", { rows, columns, data }))).toEqual(data);
    expect(renderOutput("yaml", { rows, columns })).toBe(
      "- name: node-a\n  ip: 10.0.0.1\n  tpm: abc\n- name: b\n  ip: 2001:db8::1\n",
    );
  });

  it("returns nothing for an empty table", () => {
    expect(renderOutput("table", { rows: [], columns })).toBe("");
    expect(renderOutput("json", { rows: [], columns })).toBe("[]\n");
  });
});

describe("formatTable", () => {
  it("keeps the last column unpadded", () => {
    expect(formatTable(["A", "B"], [["x", ""]])).toBe("A   B\nx\n");
  });
});

describe("what the controller sent cannot drive the terminal", () => {
  it("table cells are one line, their control characters escaped; json stays the same value", async () => {
    const rows = [{ name: "a", message: "\u001b[2Jfailed\nsee \u202elogs" }];
    const columns = [
      { header: "name", value: (r: (typeof rows)[number]) => r.name },
      { header: "message", value: (r: (typeof rows)[number]) => r.message },
    ];
    expect(renderOutput("table", { rows, columns })).toBe("NAME   MESSAGE\na      \\x1b[2Jfailed\\nsee \\u202elogs\n");
    const json = renderOutput("json", { rows, columns });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
    expect(json).not.toMatch(/[\u001b\u202e]/);
    expect(JSON.parse(json)).toEqual(rows);
  });
});
