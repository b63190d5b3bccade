import { formatProblem, type Problem } from "@nodekit/errors";
import { describe, expect, test } from "vitest";
import { parseHostsCsv } from "./hosts-csv.ts";

const source = "hosts.csv";
const parse = (text: string) => parseHostsCsv(text, { source });
/** An error of hosts.csv: `fields` besides its severity and source. */
const error = (fields: Omit<Problem, "severity" | "source">): Problem => ({ severity: "error", source, ...fields });
const formatted = (text: string) => parse(text).problems.map(formatProblem);

const T1 = "0123456789abcdef".repeat(4);
const T2 = "fedcba9876543210".repeat(4);
const T1_PAIRS = (T1.toUpperCase().match(/../g) ?? []).join(":");

const NAME_RULE =
  'a host name becomes the Kubernetes node name, so it must be a DNS-1123 label: lowercase letters, digits and "-", at most 63 characters, starting and ending with a letter or digit';
const THUMBPRINT_RULE =
  "expected the SHA-256 digest of the TPM endorsement key as 64 hex digits, optionally written as colon-separated pairs";

describe("a valid file", () => {
  test("gives one host per row, in order, with TPM attestation where a thumbprint is given", () => {
    const { hosts, problems } = parse(`name,ip,tpm_ek_thumbprint\nnode-1,10.0.0.1,${T1}\nnode-2,10.0.0.2,\n`);

    expect(problems).toEqual([]);
    expect(hosts).toEqual([
      { name: "node-1", ip: "10.0.0.1", tpmEkThumbprint: T1 },
      { name: "node-2", ip: "10.0.0.2" },
    ]);
  });

  test("the thumbprint column is optional", () => {
    expect(parse("name,ip\nnode-1,10.0.0.1\n")).toEqual({ hosts: [{ name: "node-1", ip: "10.0.0.1" }], problems: [] });
  });

  test("columns may come in any order and the header in any case", () => {
    const { hosts, problems } = parse(`TPM_EK_Thumbprint,IP,Name\n${T1},10.0.0.1,node-1\n`);

    expect(problems).toEqual([]);
    expect(hosts).toEqual([{ name: "node-1", ip: "10.0.0.1", tpmEkThumbprint: T1 }]);
  });

  test("normalizes thumbprints to lowercase hex without colons, and IPv6 to RFC 5952 form", () => {
    const { hosts, problems } = parse(
      `name,ip,tpm_ek_thumbprint\nnode-1,2001:DB8:0:0:0:0:0:1,${T1_PAIRS}\nnode-2,::FFFF:10.0.0.9,${T2.toUpperCase()}\n`,
    );

    expect(problems).toEqual([]);
    expect(hosts).toEqual([
      { name: "node-1", ip: "2001:db8::1", tpmEkThumbprint: T1 },
      { name: "node-2", ip: "::ffff:10.0.0.9", tpmEkThumbprint: T2 },
    ]);
  });

  test("strips a byte order mark", () => {
    const { hosts, problems } = parse("\uFEFFname,ip\nnode-1,10.0.0.1\n");

    expect(problems).toEqual([]);
    expect(hosts).toEqual([{ name: "node-1", ip: "10.0.0.1" }]);
  });

  test("accepts CRLF, LF and CR line ends, even mixed, and counts lines the same", () => {
    const text = "name,ip\r\nnode-1,10.0.0.1\r\n\r\nnode-2,10.0.0.2\nnode-3,10.0.0.3\rnode-4,bad\r\n";

    const { hosts, problems } = parse(text);

    expect(hosts.map((host) => host.name)).toEqual(["node-1", "node-2", "node-3"]);
    expect(problems).toEqual([
      error({
        line: 6,
        row: 4,
        rowName: "node-4",
        column: "ip",
        value: "bad",
        message: "is not a valid IPv4 or IPv6 address",
      }),
    ]);
  });

  test("trims whitespace around cells, quoted or not", () => {
    const { hosts, problems } = parse('  name , ip \n  node-1 ,\t10.0.0.1  \n "node-2" , " 10.0.0.2 "\n');

    expect(problems).toEqual([]);
    expect(hosts).toEqual([
      { name: "node-1", ip: "10.0.0.1" },
      { name: "node-2", ip: "10.0.0.2" },
    ]);
  });

  test("reads quoted cells, with commas, doubled quotes and line breaks inside them", () => {
    const text =
      'name,ip,note\n"node-1","10.0.0.1","rack 4, ""top"""\n"node-2",10.0.0.2,"first line\nsecond line"\nnode-3,bad,\n';

    const { hosts, problems } = parse(text);

    expect(hosts.map((host) => host.name)).toEqual(["node-1", "node-2"]);
    expect(problems.filter((problem) => problem.severity === "error")).toEqual([
      error({
        line: 5,
        row: 3,
        rowName: "node-3",
        column: "ip",
        value: "bad",
        message: "is not a valid IPv4 or IPv6 address",
      }),
    ]);
  });

  test("skips empty lines, whitespace-only lines and lines of empty cells; rows count only the others", () => {
    const text = "\n\nname,ip\n\nnode-1,10.0.0.1\n   \n,\n , \nnode-1,10.0.0.2\n\n";

    expect(parse(text).problems).toEqual([
      error({
        line: 9,
        row: 2,
        column: "name",
        value: "node-1",
        message: "is a duplicate host name: row 1 (line 5) already has it",
      }),
    ]);
  });
});

describe("the header", () => {
  test.each([
    ["an empty file", ""],
    ["only blank lines", "\n  \n\r\n"],
    ["only a byte order mark", "\uFEFF"],
  ])("%s is one problem", (_, text) => {
    expect(parse(text)).toEqual({
      hosts: [],
      problems: [
        error({
          message:
            "is empty; expected a header line naming the columns (name, ip, and optionally tpm_ek_thumbprint), then one line per host",
        }),
      ],
    });
  });

  test("a header with no hosts is one problem on the header line", () => {
    expect(parse("\nname,ip\n\n").problems).toEqual([
      error({ line: 2, message: "has a header but no hosts; add one line per host below the header" }),
    ]);
  });

  test("missing required columns are one problem naming the header line", () => {
    const { hosts, problems } = parse("hostname,address\nnode-1,10.0.0.1\n");

    expect(hosts).toEqual([]);
    expect(problems.filter((problem) => problem.severity === "error")).toEqual([
      error({
        line: 1,
        message:
          "the header lacks the required columns name and ip (it names: hostname, address); the first non-empty line must name the columns name, ip, tpm_ek_thumbprint",
      }),
    ]);
  });

  test("one missing column is named alone, and the columns present are still checked", () => {
    expect(formatted("name,tpm_ek_thumbprint\nnode-1,\nnode-1,xyz\n")).toEqual([
      "hosts.csv:1: the header lacks the required column ip (it names: name, tpm_ek_thumbprint); the first non-empty line must name the columns name, ip, tpm_ek_thumbprint",
      'hosts.csv:3: row 2, column name: "node-1" is a duplicate host name: row 1 (line 2) already has it',
      `hosts.csv:3: row 2 (node-1), column tpm_ek_thumbprint: "xyz" is not a valid TPM EK thumbprint: ${THUMBPRINT_RULE} (found "x")`,
    ]);
  });

  test("an unknown column is one warning, however many rows there are, and hosts are still read", () => {
    const { hosts, problems } = parse("name,ip,rack,owner\nnode-1,10.0.0.1,r1,me\nnode-2,10.0.0.2,r2,you\n");

    expect(hosts).toHaveLength(2);
    expect(problems).toEqual([
      {
        severity: "warning",
        source,
        line: 1,
        column: "rack",
        message: "is not a known column and its cells are ignored; the known columns are name, ip, tpm_ek_thumbprint",
      },
      {
        severity: "warning",
        source,
        line: 1,
        column: "owner",
        message: "is not a known column and its cells are ignored; the known columns are name, ip, tpm_ek_thumbprint",
      },
    ]);
  });

  test("a column with no name is a warning", () => {
    const { hosts, problems } = parse("name,ip,\nnode-1,10.0.0.1,\n");

    expect(hosts).toHaveLength(1);
    expect(problems).toEqual([
      { severity: "warning", source, line: 1, column: 3, message: "has no name in the header; its cells are ignored" },
    ]);
  });

  test("a column named twice is an error", () => {
    expect(parse("name,ip,Name\nnode-1,10.0.0.1,node-2\n").problems).toEqual([
      error({
        line: 1,
        column: "Name",
        message: "appears more than once in the header (columns 1 and 3); name each column once",
      }),
    ]);
  });
});

describe("rows", () => {
  test("a duplicate name points at the row that has it first, every time", () => {
    const text = "name,ip\nnode-1,10.0.0.1\nnode-2,10.0.0.2\nnode-1,10.0.0.3\nnode-1,10.0.0.4\n";

    expect(parse(text).problems).toEqual([
      error({
        line: 4,
        row: 3,
        column: "name",
        value: "node-1",
        message: "is a duplicate host name: row 1 (line 2) already has it",
      }),
      error({
        line: 5,
        row: 4,
        column: "name",
        value: "node-1",
        message: "is a duplicate host name: row 1 (line 2) already has it",
      }),
    ]);
  });

  test("a duplicate IP is found whatever its spelling, and says how it was first written", () => {
    const text =
      "name,ip\nnode-1,::1\nnode-2,0:0:0:0:0:0:0:1\nnode-3,10.0.0.1\nnode-4,::ffff:10.0.0.1\nnode-5,10.0.0.1\n";

    expect(parse(text).problems).toEqual([
      error({
        line: 3,
        row: 2,
        rowName: "node-2",
        column: "ip",
        value: "0:0:0:0:0:0:0:1",
        message: 'is a duplicate IP address: row 1 (line 2) already has it, written "::1"',
      }),
      error({
        line: 5,
        row: 4,
        rowName: "node-4",
        column: "ip",
        value: "::ffff:10.0.0.1",
        message: 'is a duplicate IP address: row 3 (line 4) already has it, written "10.0.0.1"',
      }),
      error({
        line: 6,
        row: 5,
        rowName: "node-5",
        column: "ip",
        value: "10.0.0.1",
        message: "is a duplicate IP address: row 3 (line 4) already has it",
      }),
    ]);
  });

  test.each([
    ["10.0.0.300", "is not a valid IPv4 or IPv6 address"],
    ["10.0.0", "is not a valid IPv4 or IPv6 address"],
    ["010.0.0.1", "is not a valid IPv4 or IPv6 address"],
    ["2001:db8::1::2", "is not a valid IPv4 or IPv6 address"],
    ["node-1.example.com", "is not a valid IPv4 or IPv6 address"],
    ["fe80::1%eth0", "is not a valid IP address: a zone index (%…) only has meaning on one machine"],
    ["", "is empty; every host needs an IP address"],
  ])("IP %j is rejected", (ip, message) => {
    const { hosts, problems } = parse(`name,ip\nnode-1,${ip}\n`);

    expect(hosts).toEqual([]);
    expect(problems).toEqual([error({ line: 2, row: 1, rowName: "node-1", column: "ip", value: ip, message })]);
  });

  test.each([
    ["Node-1", `is not a valid host name: it contains uppercase letters; ${NAME_RULE}`],
    ["node_1", `is not a valid host name: it contains "_"; ${NAME_RULE}`],
    ["node-1.example.com", `is not a valid host name: it contains "."; ${NAME_RULE}`],
    ["-node", `is not a valid host name: it starts with "-"; ${NAME_RULE}`],
    ["node-", `is not a valid host name: it ends with "-"; ${NAME_RULE}`],
    ["n".repeat(64), `is not a valid host name: it is 64 characters long; ${NAME_RULE}`],
    ["", "is empty; every host needs a name"],
  ])("host name %j is rejected", (name, message) => {
    const { hosts, problems } = parse(`name,ip\n"${name}",10.0.0.1\n`);

    expect(hosts).toEqual([]);
    expect(problems).toEqual([error({ line: 2, row: 1, column: "name", value: name, message })]);
  });

  test.each(["n".repeat(63), "0", "1node", "a-b--c"])("host name %j is a valid DNS-1123 label", (name) => {
    expect(parse(`name,ip\n${name},10.0.0.1\n`).problems).toEqual([]);
  });

  test.each([
    [T1.slice(0, 40), "found 40 hex digits"],
    [`${T1}00`, "found 66 hex digits"],
    [`${T1.slice(0, 63)}g`, 'found "g"'],
    [`sha256:${T1}`, 'found "s"'],
    [(T1.match(/..../g) ?? []).join(":"), "colons must separate every pair of digits"],
    [T1_PAIRS.slice(0, -3), "found 62 hex digits"],
  ])("thumbprint %j is rejected", (thumbprint, found) => {
    const { hosts, problems } = parse(`name,ip,tpm_ek_thumbprint\nnode-1,10.0.0.1,${thumbprint}\n`);

    expect(hosts).toEqual([]);
    expect(problems).toEqual([
      error({
        line: 2,
        row: 1,
        rowName: "node-1",
        column: "tpm_ek_thumbprint",
        value: thumbprint,
        message: `is not a valid TPM EK thumbprint: ${THUMBPRINT_RULE} (${found})`,
      }),
    ]);
  });

  test("a thumbprint may appear on one host only, in any spelling", () => {
    const text = `name,ip,tpm_ek_thumbprint\nnode-1,10.0.0.1,${T1}\nnode-2,10.0.0.2,${T1_PAIRS}\n`;

    expect(parse(text).problems).toEqual([
      error({
        line: 3,
        row: 2,
        rowName: "node-2",
        column: "tpm_ek_thumbprint",
        value: T1_PAIRS,
        message: `is a duplicate TPM EK thumbprint: row 1 (line 2) already has it, written "${T1}"; a TPM belongs to one host`,
      }),
    ]);
  });

  test("a row with too few or too many cells is one problem, and its cells are not checked further", () => {
    const text = "name,ip,tpm_ek_thumbprint\nnode-1,10.0.0.1\nNODE_2,10.0.0.2,,extra\nnode-3,10.0.0.3,\n";

    const { hosts, problems } = parse(text);

    expect(hosts).toEqual([{ name: "node-3", ip: "10.0.0.3" }]);
    expect(problems).toEqual([
      error({
        line: 2,
        row: 1,
        value: "node-1,10.0.0.1",
        message:
          "has 2 cells, but the header has 3 columns (name, ip, tpm_ek_thumbprint); every row needs one cell per column, empty where a value is optional",
      }),
      error({
        line: 3,
        row: 2,
        value: "NODE_2,10.0.0.2,,extra",
        message:
          "has 4 cells, but the header has 3 columns (name, ip, tpm_ek_thumbprint); every row needs one cell per column, empty where a value is optional",
      }),
    ]);
  });
});

describe("malformed quoting", () => {
  test("a quote inside an unquoted cell is a problem on its line, and reading goes on", () => {
    const { hosts, problems } = parse('name,ip\nnode-1,10.0.0.1\nno"de-2,10.0.0.2\nnode-3,10.0.0.3\nnode-3,bad\n');

    expect(hosts.map((host) => host.name)).toEqual(["node-1", "node-3"]);
    expect(problems).toEqual([
      error({
        line: 3,
        row: 2,
        value: 'no"de-2,10.0.0.2',
        message:
          'has a quote (") inside a cell that does not start with one; quote the whole cell and double the quote inside it (like "a""b")',
      }),
      error({
        line: 5,
        row: 4,
        column: "name",
        value: "node-3",
        message: "is a duplicate host name: row 3 (line 4) already has it",
      }),
      error({
        line: 5,
        row: 4,
        rowName: "node-3",
        column: "ip",
        value: "bad",
        message: "is not a valid IPv4 or IPv6 address",
      }),
    ]);
  });

  test.each([
    ['"node-2" x,10.0.0.2', '"node-2" x,10.0.0.2'],
    ['node-2,"10.0.0.2"x', 'node-2,"10.0.0.2"x'],
  ])("text after a closing quote (%s) is a problem on its line", (line, value) => {
    const { hosts, problems } = parse(`name,ip\nnode-1,10.0.0.1\n${line}\nnode-3,10.0.0.3\n`);

    expect(hosts.map((host) => host.name)).toEqual(["node-1", "node-3"]);
    expect(problems).toEqual([
      error({
        line: 3,
        row: 2,
        value,
        message:
          'has text after the closing quote of a quoted cell; a quoted cell must end at its closing quote, with any quote inside it doubled (like "a""b")',
      }),
    ]);
  });

  test("a quote that is never closed is reported on the line it opens, after the rows before it", () => {
    const text = 'name,ip\r\nnode-1,10.0.0.1\r\n\r\nnode-2,"10.0.0.2\r\nnode-3,10.0.0.3\r\nnode-1,10.0.0.4\r\n';

    expect(parse(text).problems).toEqual([
      error({
        line: 4,
        row: 2,
        value: 'node-2,"10.0.0.2',
        message:
          'opens a quoted cell that is never closed, so the rest of the file (lines 4–6) could not be read; close the quote, and double any quote inside a quoted cell ("")',
      }),
    ]);
  });

  test("a malformed header stops reading, since nothing after it can be assigned to a column", () => {
    expect(parse('name,"ip"x\nnode-1,10.0.0.1\n').problems).toEqual([
      error({
        line: 1,
        value: 'name,"ip"x',
        message:
          'has text after the closing quote of a quoted cell; a quoted cell must end at its closing quote, with any quote inside it doubled (like "a""b"); the header could not be read',
      }),
    ]);
  });
});

test("every problem in the file is reported in one pass, in file order", () => {
  const text = [
    "\uFEFFname,ip,tpm_ek_thumbprint,rack",
    `node-1,10.0.0.1,${T1},r1`,
    "Node_2,10.0.0.300,,r1",
    `node-1,10.0.0.1,${T1_PAIRS},r2`,
    "",
    'no"de,10.0.0.5,,r3',
    "node-6,10.0.0.6,abc",
    "node-7,10.0.0.7,,r4",
  ].join("\r\n");

  const { hosts, problems } = parse(text);

  expect(hosts).toEqual([
    { name: "node-1", ip: "10.0.0.1", tpmEkThumbprint: T1 },
    { name: "node-7", ip: "10.0.0.7" },
  ]);
  expect(problems.map(formatProblem)).toEqual([
    "hosts.csv:1: column rack: is not a known column and its cells are ignored; the known columns are name, ip, tpm_ek_thumbprint",
    `hosts.csv:3: row 2, column name: "Node_2" is not a valid host name: it contains uppercase letters; ${NAME_RULE}`,
    'hosts.csv:3: row 2 (Node_2), column ip: "10.0.0.300" is not a valid IPv4 or IPv6 address',
    'hosts.csv:4: row 3, column name: "node-1" is a duplicate host name: row 1 (line 2) already has it',
    'hosts.csv:4: row 3 (node-1), column ip: "10.0.0.1" is a duplicate IP address: row 1 (line 2) already has it',
    `hosts.csv:4: row 3 (node-1), column tpm_ek_thumbprint: "${T1_PAIRS}" is a duplicate TPM EK thumbprint: row 1 (line 2) already has it, written "${T1}"; a TPM belongs to one host`,
    'hosts.csv:6: row 4: "no\\"de,10.0.0.5,,r3" has a quote (") inside a cell that does not start with one; quote the whole cell and double the quote inside it (like "a""b")',
    'hosts.csv:7: row 5: "node-6,10.0.0.6,abc" has 3 cells, but the header has 4 columns (name, ip, tpm_ek_thumbprint, rack); every row needs one cell per column, empty where a value is optional',
  ]);
});

test("10,000 rows are read correctly", () => {
  const count = 10_000;
  const lines = ["name,ip,tpm_ek_thumbprint"];
  for (let index = 0; index < count; index += 1) {
    const thumbprint = index % 3 === 0 ? index.toString(16).padStart(64, "0") : "";
    lines.push(`node-${index},10.${index >> 16}.${(index >> 8) & 255}.${index & 255},${thumbprint}`);
  }
  // One duplicate at the very end, to check the last row is reached and compared.
  lines.push("node-0,192.168.0.1,");

  const { hosts, problems } = parse(lines.join("\n"));

  expect(hosts).toHaveLength(count);
  expect(hosts[9_999]).toEqual({
    name: "node-9999",
    ip: "10.0.39.15",
    tpmEkThumbprint: (9_999).toString(16).padStart(64, "0"),
  });
  expect(hosts.filter((host) => host.tpmEkThumbprint !== undefined)).toHaveLength(3_334);
  expect(problems).toEqual([
    error({
      line: count + 2,
      row: count + 1,
      column: "name",
      value: "node-0",
      message: "is a duplicate host name: row 1 (line 2) already has it",
    }),
  ]);
});
