import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { ipIdentity, normalizeEkThumbprint, normalizeIp } from "./fields.ts";
import { type Host, parseHostsCsv } from "./hosts-csv.ts";

const source = "hosts.csv";

const dnsLabel = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/);
const ip = fc.oneof(fc.ipV4(), fc.ipV6()).map(normalizeIp);
const thumbprint = fc.stringMatching(/^[0-9a-f]{64}$/);

/** A host, and how its row is written: quoting, padding, thumbprint spelling, blank lines before it. */
const hostRow = fc.record({
  host: fc.record({ name: dnsLabel, ip, tpmEkThumbprint: fc.option(thumbprint, { nil: undefined }) }),
  quote: fc.boolean(),
  pad: fc.constantFrom("", " ", "\t", "  "),
  upper: fc.boolean(),
  pairs: fc.boolean(),
  blankLinesBefore: fc.nat({ max: 2 }),
});

const sameHost = (a: Host, b: Host) =>
  a.name === b.name ||
  ipIdentity(a.ip) === ipIdentity(b.ip) ||
  (a.tpmEkThumbprint !== undefined && a.tpmEkThumbprint === b.tpmEkThumbprint);

const uniqueHostRows = (minLength: number) =>
  fc.uniqueArray(hostRow, { minLength, maxLength: 25, comparator: (a, b) => sameHost(a.host, b.host) });

const csvLayout = fc.record({
  columns: fc.shuffledSubarray(["name", "ip", "tpm_ek_thumbprint"] as const, { minLength: 3, maxLength: 3 }),
  lineEnd: fc.constantFrom("\n", "\r\n", "\r"),
  bom: fc.boolean(),
  finalLineEnd: fc.boolean(),
});

type HostRow = typeof hostRow extends fc.Arbitrary<infer Row> ? Row : never;
type CsvLayout = typeof csvLayout extends fc.Arbitrary<infer Layout> ? Layout : never;

function writeCsv(rows: readonly HostRow[], layout: CsvLayout): string {
  const lines: string[] = [layout.columns.join(",")];
  for (const row of rows) {
    for (let blank = 0; blank < row.blankLinesBefore; blank += 1) lines.push("");
    const cells = layout.columns.map((column) => {
      let value: string;
      if (column === "name") value = row.host.name;
      else if (column === "ip") value = row.host.ip;
      else {
        value = row.host.tpmEkThumbprint ?? "";
        if (row.pairs) value = (value.match(/../g) ?? []).join(":");
        if (row.upper) value = value.toUpperCase();
      }
      return `${row.pad}${row.quote ? `"${value}"` : value}${row.pad}`;
    });
    lines.push(cells.join(","));
  }
  const text = lines.join(layout.lineEnd) + (layout.finalLineEnd ? layout.lineEnd : "");
  return layout.bom ? `\uFEFF${text}` : text;
}

describe("properties of parseHostsCsv", () => {
  test("any set of valid, unique hosts survives being written as CSV and read back", () => {
    fc.assert(
      fc.property(uniqueHostRows(1), csvLayout, (rows, layout) => {
        const { hosts, problems } = parseHostsCsv(writeCsv(rows, layout), { source });

        expect(problems).toEqual([]);
        expect(hosts).toEqual(
          rows.map(({ host }) => (host.tpmEkThumbprint === undefined ? { name: host.name, ip: host.ip } : { ...host })),
        );
      }),
    );
  });

  test("a duplicated row yields exactly one duplicate-name problem, on the later row, naming the earlier", () => {
    fc.assert(
      fc.property(
        uniqueHostRows(1).chain((rows) =>
          fc.tuple(fc.constant(rows), fc.nat({ max: rows.length - 1 }), fc.nat({ max: rows.length })),
        ),
        ([rows, copied, insertAt]) => {
          const row = rows[copied];
          if (row === undefined) throw new Error("copied index out of range");
          const withCopy = [...rows.slice(0, insertAt), row, ...rows.slice(insertAt)].map((entry) => ({
            ...entry,
            blankLinesBefore: 0,
          }));
          const positions = withCopy.flatMap((entry, index) => (entry.host === row.host ? [index] : []));
          const [earlier = -1, later = -1] = positions;

          const { problems } = parseHostsCsv(writeCsv(withCopy, layoutWithLf), { source });

          const duplicateNames = problems.filter(
            (problem) => problem.column === "name" && problem.message.startsWith("is a duplicate host name"),
          );
          expect(duplicateNames).toEqual([
            {
              severity: "error",
              source,
              line: later + 2,
              row: later + 1,
              column: "name",
              value: row.host.name,
              message: `is a duplicate host name: row ${earlier + 1} (line ${earlier + 2}) already has it`,
            },
          ]);
          expect(problems.map((problem) => problem.column)).toEqual(
            row.host.tpmEkThumbprint === undefined ? ["name", "ip"] : ["name", "ip", "tpm_ek_thumbprint"],
          );
        },
      ),
    );
  });

  test("shuffling the rows does not change which problems there are, only where", () => {
    const pick = <T>(values: readonly T[]) => fc.constantFrom(...values);
    const T1 = "0123456789abcdef".repeat(4);
    const messyRow = fc.tuple(
      pick(["node-a", "node-b", "Node_C", "", "node-d"]),
      pick(["10.0.0.1", "::1", "0:0:0:0:0:0:0:1", "10.0.0.300", "10.0.0.2", "::ffff:10.0.0.1"]),
      pick([T1, (T1.match(/../g) ?? []).join(":"), "xyz", "", T1.toUpperCase(), "f".repeat(64)]),
    );
    const rowsAndShuffle = fc
      .array(messyRow, { minLength: 1, maxLength: 15 })
      .chain((rows) =>
        fc.tuple(fc.constant(rows), fc.shuffledSubarray(rows, { minLength: rows.length, maxLength: rows.length })),
      );
    // What a problem says about its value, leaving out where it and its first occurrence are.
    const gist = (problem: { column?: string | number; value?: string | number | boolean; message: string }) => {
      const duplicate = /^is a duplicate ([^:]+):/.exec(problem.message);
      if (duplicate === null) return `${problem.column}|${problem.value}|${problem.message}`;
      const value = String(problem.value ?? "");
      const key =
        problem.column === "ip"
          ? ipIdentity(normalizeIp(value))
          : problem.column === "tpm_ek_thumbprint"
            ? normalizeEkThumbprint(value)
            : value;
      return `${problem.column}|${key}|duplicate ${duplicate[1]}`;
    };
    const csv = (rows: ReadonlyArray<readonly [string, string, string]>) =>
      ["name,ip,tpm_ek_thumbprint", ...rows.map((cells) => cells.join(","))].join("\n");

    fc.assert(
      fc.property(rowsAndShuffle, ([rows, shuffled]) => {
        const before = parseHostsCsv(csv(rows), { source }).problems.map(gist).sort();
        const after = parseHostsCsv(csv(shuffled), { source }).problems.map(gist).sort();

        expect(after).toEqual(before);
      }),
    );
  });

  test("a problem's line is the physical line its row starts on, across blank lines and multi-line cells", () => {
    const noteRow = fc.record({
      bad: fc.boolean(),
      note: fc.array(fc.constantFrom("rack 1", "", "a, b", 'say ""hi""'), { minLength: 1, maxLength: 3 }),
      blankLinesBefore: fc.nat({ max: 2 }),
      lineEnd: fc.constantFrom("\n", "\r\n"),
    });
    fc.assert(
      fc.property(fc.array(noteRow, { minLength: 1, maxLength: 20 }), (rows) => {
        let text = "name,note,ip\n";
        let line = 2;
        const expected: Array<{ line: number; row: number }> = [];
        rows.forEach((row, index) => {
          text += row.lineEnd.repeat(row.blankLinesBefore);
          line += row.blankLinesBefore;
          if (row.bad) expected.push({ line, row: index + 1 });
          text += `node-${index},"${row.note.join(row.lineEnd)}",${row.bad ? "bad" : `10.0.0.${index}`}${row.lineEnd}`;
          line += row.note.length;
        });

        const errors = parseHostsCsv(text, { source }).problems.filter((problem) => problem.severity === "error");

        expect(errors.map(({ line, row }) => ({ line, row }))).toEqual(expected);
      }),
    );
  });

  test("any text at all gives problems, never an exception, with lines inside the file", () => {
    const csvish = fc.string({
      unit: fc.constantFrom("a", "Z", "1", ".", ":", "-", ",", ",", '"', '"', " ", "\n", "\n", "\r", "\uFEFF", "é"),
      maxLength: 200,
    });
    fc.assert(
      fc.property(csvish, (text) => {
        const { problems } = parseHostsCsv(text, { source });

        const lineCount = text.split(/\r\n|\r|\n/).length;
        for (const problem of problems) {
          if (problem.line !== undefined) {
            expect(problem.line).toBeGreaterThanOrEqual(1);
            expect(problem.line).toBeLessThanOrEqual(lineCount);
          }
        }
      }),
    );
  });
});

const layoutWithLf: CsvLayout = {
  columns: ["name", "ip", "tpm_ek_thumbprint"],
  lineEnd: "\n",
  bom: false,
  finalLineEnd: true,
};
