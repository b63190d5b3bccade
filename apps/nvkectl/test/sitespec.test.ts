import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot, runCli, tempDir } from "@nodekit/test-utils";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let dir: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await dir.cleanup();
});

const withoutComments = (yaml: string) =>
  yaml
    .split("\n")
    .filter((line) => !line.startsWith("#"))
    .join("\n");

describe("nvkectl sitespec generate", () => {
  it("prints the site spec for examples/hosts.csv on stdout, the same as examples/sitespec.yaml", async () => {
    const result = await runCli("nvkectl", [
      "sitespec",
      "generate",
      "--hosts",
      "examples/hosts.csv",
      "--site-name",
      "my-tier0-site",
    ]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    const example = await readFile(join(repoRoot, "examples/sitespec.yaml"), "utf8");
    expect(withoutComments(result.stdout)).toBe(withoutComments(example));
  });

  it("reports every problem with its place, exits 3, prints nothing on stdout and writes nothing", async () => {
    const csv = join(dir.path, "hosts.csv");
    await writeFile(csv, "name,ip,rack\nnode-a,10.0.0.300,r1\nnode-b,10.0.0.2,r1\nnode-b,10.0.0.2,r2\n");
    const output = join(dir.path, "site.yaml");
    await writeFile(output, "previous content\n");
    const result = await runCli("nvkectl", ["sitespec", "generate", "--hosts", csv, "--output-file", output]);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`warning: ${csv}:1: column rack: is not a known column`);
    expect(result.stderr).toContain(`error: ${csv} has 3 problems; nothing was written`);
    expect(result.stderr).toContain(
      `${csv}:2: row 1 (node-a), column ip: "10.0.0.300" is not a valid IPv4 or IPv6 address`,
    );
    expect(result.stderr).toContain(
      `${csv}:4: row 3, column name: "node-b" is a duplicate host name: row 2 (line 3) already has it`,
    );
    expect(result.stderr).toContain(`${csv}:4: row 3 (node-b), column ip: "10.0.0.2" is a duplicate IP address`);
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(await readFile(output, "utf8")).toBe("previous content\n");
  });

  it("writes --output-file atomically and keeps stdout clean", async () => {
    const csv = join(dir.path, "lab.csv");
    await writeFile(csv, "\uFEFFname,ip\r\nnode-a,10.0.0.1\r\nnode-b,fd00::2\r\n");
    const output = join(dir.path, "lab.yaml");
    const result = await runCli("nvkectl", ["sitespec", "generate", "--hosts", csv, "--output-file", output]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`wrote site spec for 2 hosts to ${output}\n`);
    const yaml = await readFile(output, "utf8");
    expect(yaml).toContain("name: lab"); // the site name defaults to the CSV file's name
    expect(yaml).toContain("ip: fd00::2");
    expect((await stat(output)).mode & 0o777).toBe(0o644);
  });

  it("makes the final error one NDJSON record with --json-logs", async () => {
    const csv = join(dir.path, "hosts.csv");
    await writeFile(csv, "name\nnode-a\n");
    const result = await runCli("nvkectl", ["sitespec", "generate", "--hosts", csv, "--site-name", "s", "--json-logs"]);
    expect(result.exitCode).toBe(3);
    const records = result.stderr
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ level: "error", code: "SITESPEC_INVALID", exitCode: 3 });
    const problems = (records[0]?.problems ?? []) as Array<{ message: string }>;
    expect(problems[0]?.message).toContain("the header lacks the required column");
  });

  it("exits 4 for a missing hosts file and 2 for a missing flag", async () => {
    const missing = await runCli("nvkectl", ["sitespec", "generate", "--hosts", join(dir.path, "nope.csv")]);
    expect(missing.exitCode).toBe(4);
    expect(missing.stderr).toContain("cannot read the hosts CSV");
    const usage = await runCli("nvkectl", ["sitespec", "generate"]);
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr).toContain("error: missing required flag --hosts\n");
    expect(usage.stderr).toContain("--help");
  });
});

describe("nvkectl itself", () => {
  it("prints its version and help on stdout", async () => {
    const version = await runCli("nvkectl", ["--version"]);
    expect(version.exitCode).toBe(0);
    expect(version.stdout).toMatch(/^@nodekit\/nvkectl\/\d+\.\d+\.\d+ /);
    const help = await runCli("nvkectl", ["sitespec", "generate", "--help"]);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("--output-file");
    expect(help.stdout).toContain("GLOBAL FLAGS");
    expect(help.stdout).toContain("--json-logs");
    expect(help.stdout).toContain("--site");
  });

  it("suggests the closest command for a typo and exits 127", async () => {
    const result = await runCli("nvkectl", ["sitespec", "generat"]);
    expect(result.exitCode).toBe(127);
    expect(result.stderr).toContain(
      'error: "sitespec generat" is not a nvkectl command\ndid you mean: nvkectl sitespec generate\n',
    );
  });

  it("offers shell completion", async () => {
    const result = await runCli("nvkectl", ["autocomplete", "bash"], { env: { HOME: dir.path } });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("nvkectl");
  });
});

describe("a reader that stops early (| head)", () => {
  it("stops writing and exits 141 without a word, as kubectl does", async () => {
    const csv = join(dir.path, "hosts.csv");
    const rows = Array.from({ length: 20_000 }, (_, i) => `host-${i},10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
    await writeFile(csv, `name,ip\n${rows.join("\n")}\n`);

    const child = spawn(
      process.execPath,
      [join(repoRoot, "apps/nvkectl/bin/run.js"), "sitespec", "generate", "--hosts", csv],
      {
        env: { PATH: process.env.PATH ?? "", HOME: dir.path, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    // Read the first chunk, then close the pipe as head does.
    await once(child.stdout, "data");
    child.stdout.destroy();
    const [exitCode] = (await once(child, "close")) as [number | null];

    expect(stderr).toBe("");
    expect(exitCode).toBe(141);
  });
});
