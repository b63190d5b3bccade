import { loadAll } from "js-yaml";
import { describe, expect, it } from "vitest";
import { compareSortValues, compileSortKey, compileTemplate } from "./jsonpath.ts";
import { createWatchPrinter, formatOne, formatTable, renderOutput } from "./output.ts";

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
  it("prints a kubectl-style table: upper-case headers, aligned, no trailing blanks", async () => {
    expect(await renderOutput("table", { rows, columns })).toMatchInlineSnapshot(`
      "NAME     IP
      node-a   10.0.0.1
      b        2001:db8::1
      "
    `);
  });

  it("adds wide columns with -o wide and shows <none> for empty cells", async () => {
    expect(await renderOutput("wide", { rows, columns })).toMatchInlineSnapshot(`
      "NAME     IP            TPM
      node-a   10.0.0.1      abc
      b        2001:db8::1   <none>
      "
    `);
  });

  it("prints the data, not the table, as JSON and YAML", async () => {
    const data = { items: rows };
    expect(JSON.parse(await renderOutput("json", { rows, columns, data }))).toEqual(data);
    // A list prints as kubectl prints one: a List whose items are the rows.
    expect(await renderOutput("yaml", { rows, columns })).toBe(
      "apiVersion: v1\nitems:\n  - name: node-a\n    ip: 10.0.0.1\n    tpm: abc\n  - name: b\n    ip: 2001:db8::1\nkind: List\nmetadata:\n  resourceVersion: ''\n",
    );
    expect(JSON.parse(await renderOutput("json", { rows, columns }))).toEqual({
      apiVersion: "v1",
      items: rows,
      kind: "List",
      metadata: { resourceVersion: "" },
    });
  });

  it("returns nothing for an empty table", async () => {
    expect(await renderOutput("table", { rows: [], columns })).toBe("");
    expect(JSON.parse(await renderOutput("json", { rows: [], columns })).items).toEqual([]);
  });
});

describe("formatTable", () => {
  it("keeps the last column unpadded", () => {
    expect(formatTable(["A", "B"], [["x", ""]])).toBe("A   B\nx\n");
  });
});

describe("kubectl's get habits", () => {
  interface Pool {
    name: string;
    desired: number;
    labels: Record<string, string>;
  }
  const view = {
    kind: "nodepool",
    name: (p: Pool) => p.name,
    labels: (p: Pool) => p.labels,
    columns: [
      { header: "name", value: (p: Pool) => p.name },
      { header: "desired", value: (p: Pool) => p.desired },
    ],
  };
  const pools: Pool[] = [
    { name: "workers", desired: 10, labels: { team: "a", gpu: "no" } },
    { name: "gpus", desired: 2, labels: {} },
  ];

  it("-o name prints kind/name per object", async () => {
    expect(await renderOutput("name", { ...view, rows: pools })).toBe("nodepool/workers\nnodepool/gpus\n");
    expect(await formatOne("name", view, pools[1] as Pool)).toBe("nodepool/gpus\n");
  });

  it("--no-headers leaves out the header; --show-labels adds LABELS (sorted k=v, <none> when empty)", async () => {
    expect(await renderOutput("table", { ...view, rows: pools }, { noHeaders: true, showLabels: true })).toBe(
      "workers   10   gpu=no,team=a\ngpus      2    <none>\n",
    );
  });

  it("--sort-by orders by the field's value: numbers as numbers", async () => {
    const options = { sortKey: compileSortKey(".desired"), compare: compareSortValues };
    expect(await renderOutput("table", { ...view, rows: pools }, options)).toBe(
      "NAME      DESIRED\ngpus      2\nworkers   10\n",
    );
  });

  it("-o jsonpath renders a list as {items: [...]} and one object as itself", async () => {
    const template = compileTemplate("{range .items[*]}{.name}={.desired}{'\\n'}{end}");
    expect(await renderOutput("jsonpath=…", { ...view, rows: pools }, { template })).toBe("workers=10\ngpus=2\n");
    expect(await formatOne("jsonpath=…", view, pools[0] as Pool, true, { template: compileTemplate("{.name}") })).toBe(
      "workers",
    );
  });
});

describe("createWatchPrinter (-w)", () => {
  interface Row {
    name: string;
    phase: string;
  }
  const columns = [
    { header: "name", value: (r: Row) => r.name },
    { header: "phase", value: (r: Row) => r.phase },
  ];
  async function watch(format: "table" | "yaml" | "json", events: Row[][]) {
    let text = "";
    const printer = createWatchPrinter(format, columns, async (chunk) => {
      text += chunk;
    });
    for (const event of events) await printer.print(event);
    return text;
  }

  it("keeps table rows aligned under the one header, widening a column only when a value needs it", async () => {
    const text = await watch("table", [
      [{ name: "tenant-a", phase: "Provisioning" }],
      [{ name: "b", phase: "Ready" }],
      [{ name: "a-much-longer-name", phase: "Ready" }],
      [{ name: "c", phase: "Deleting" }],
    ]);
    expect(text).toBe(
      [
        "NAME       PHASE",
        "tenant-a   Provisioning",
        "b          Ready",
        "a-much-longer-name   Ready",
        "c                    Deleting",
        "",
      ].join("\n"),
    );
  });

  it("-o yaml is a YAML stream: --- between documents, each a whole document", async () => {
    const text = await watch("yaml", [[{ name: "a", phase: "Provisioning" }], [{ name: "a", phase: "Ready" }]]);
    expect(text).toBe("name: a\nphase: Provisioning\n---\nname: a\nphase: Ready\n");
    expect(loadAll(text)).toEqual([
      { name: "a", phase: "Provisioning" },
      { name: "a", phase: "Ready" },
    ]);
  });

  it("-o json prints each object whole, one after another", async () => {
    const text = await watch("json", [[{ name: "a", phase: "Provisioning" }], [{ name: "a", phase: "Ready" }]]);
    expect(text).toBe(
      `${JSON.stringify({ name: "a", phase: "Provisioning" }, null, 2)}\n${JSON.stringify({ name: "a", phase: "Ready" }, null, 2)}\n`,
    );
  });
});

describe("what the controller sent cannot drive the terminal", () => {
  it("table cells are one line, their control characters escaped; json stays the same value", async () => {
    const rows = [{ name: "a", message: "\u001b[2Jfailed\nsee \u202elogs" }];
    const columns = [
      { header: "name", value: (r: (typeof rows)[number]) => r.name },
      { header: "message", value: (r: (typeof rows)[number]) => r.message },
    ];
    expect(await renderOutput("table", { rows, columns })).toBe(
      "NAME   MESSAGE\na      \\x1b[2Jfailed\\nsee \\u202elogs\n",
    );
    const json = await renderOutput("json", { rows, columns });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
    expect(json).not.toMatch(/[\u001b\u202e]/);
    expect(JSON.parse(json).items).toEqual(rows);
  });
});
