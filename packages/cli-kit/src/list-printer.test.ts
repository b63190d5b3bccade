import { escapeJsonControl } from "@nodekit/errors";
import fc from "fast-check";
import { dump, load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { createListPrinter, kubeList } from "./output.ts";

const columns = [
  { header: "name", value: (row: { name: string; n: number }) => row.name },
  { header: "n", value: (row: { name: string; n: number }) => row.n, wide: true },
];

async function render(format: "json" | "yaml" | "table" | "wide", pages: { name: string; n: number }[][]) {
  let text = "";
  const printer = createListPrinter(format, columns, async (chunk) => {
    text += chunk;
  });
  for (const page of pages) await printer.add(page);
  const count = await printer.end();
  return { text, count };
}

const item = fc.record({ name: fc.string(), n: fc.integer() });

describe("createListPrinter", () => {
  it("streams -o json page by page into exactly what printing the whole List prints", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(item, { maxLength: 4 }), { maxLength: 4 }), async (pages) => {
        const { text } = await render("json", pages);
        expect(text).toBe(`${JSON.stringify(kubeList(pages.flat()), null, 2)}\n`);
      }),
    );
  });

  it("streams -o json of any JSON, control characters escaped, as printing the whole List would", async () => {
    const anything = fc
      .jsonValue({ maxDepth: 3 })
      .chain((value) => fc.record({ name: fc.string({ unit: "binary" }), value: fc.constant(value) }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(anything, { maxLength: 5 }), { maxLength: 5 }), async (pages) => {
        let text = "";
        const printer = createListPrinter(
          "json",
          [{ header: "name", value: (row: { name: string }) => row.name }],
          async (chunk) => {
            text += chunk;
          },
        );
        for (const page of pages) await printer.add(page);
        await printer.end();
        expect(text).toBe(`${escapeJsonControl(JSON.stringify(kubeList(pages.flat()), null, 2))}\n`);
      }),
    );
    // Characters JSON leaves as they are and a terminal would act on are escaped, on every page.
    const { text } = await render("json", [[{ name: "a\u0085b\u202e", n: 1 }], [{ name: "\u007f", n: 2 }]]);
    expect(text).toContain('"a\\u0085b\\u202e"');
    expect(text).toContain('"\\u007f"');
  });

  it("streams -o yaml into one List, as printing it whole", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(item, { maxLength: 4 }), { maxLength: 4 }), async (pages) => {
        const { text } = await render("yaml", pages);
        expect(load(text)).toEqual(kubeList(pages.flat()));
        expect(text).toBe(dump(kubeList(pages.flat()), { noRefs: true, lineWidth: -1, sortKeys: false }));
      }),
    );
  });

  it("prints one table with the columns sized over every page; wide adds the wide columns", async () => {
    const pages = [[{ name: "a", n: 1 }], [{ name: "longer-name", n: 22 }]];
    expect((await render("table", pages)).text).toBe("NAME\na\nlonger-name\n");
    expect((await render("wide", pages)).text).toBe("NAME          N\na             1\nlonger-name   22\n");
  });

  it("prints nothing for an empty table (the command says so on stderr) and an empty List for json", async () => {
    expect(await render("table", [])).toEqual({ text: "", count: 0 });
    expect(JSON.parse((await render("json", [[]])).text)).toEqual({
      apiVersion: "v1",
      items: [],
      kind: "List",
      metadata: { resourceVersion: "" },
    });
  });
});
