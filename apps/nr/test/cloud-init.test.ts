import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { exists } from "@nodekit/test-utils";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { registerArgv, useEmulatorHome } from "./helpers.ts";

// nr cluster register --print-cloud-init and --api-token-file, as a user runs them: the built
// CLI as a subprocess; the token file against the NodeRings emulator, which accepts one token.

const run = promisify(execFile);
const TOKEN = "nr-cloud-init-test-token";
const SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const fx = useEmulatorHome("nr-cloud-init-", TOKEN);

const print = [
  "cluster",
  "register",
  "--print-cloud-init",
  "--nr-url",
  "https://downloads.example/nr",
  "--nr-sha256",
  SHA,
  "--api-token-file",
  "/etc/nodekit/api-token",
  "--api-url",
  "https://api.noderings.example",
  "--name",
  "pve-node-1",
];

describe("nr cluster register --print-cloud-init", () => {
  it("prints the user-data and touches nothing: no ~/.nr, no lock, no request", async () => {
    const nr = join(fx.home.path, "untouched");
    const before = fx.emulator.requests.length;
    const result = await fx.home.nr([...print, "--skip-operator-install", "--offload-namespace", "a,b"], {
      env: { NR_HOME: nr, NR_API_TOKEN: TOKEN },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.startsWith("#cloud-config\n")).toBe(true);
    const doc = load(result.stdout) as { write_files: { content: string }[]; runcmd: string[] };
    expect(doc.write_files[0]?.content).toContain(
      "ExecStart=/usr/local/bin/nr cluster register --resume --break-lock --api-token-file /etc/nodekit/api-token --name pve-node-1 --api-url https://api.noderings.example --offload-namespace a,b --skip-operator-install\n",
    );
    expect(result.stdout).not.toContain(TOKEN);
    expect(await exists(nr)).toBe(false);
    expect(await exists(fx.home.lockDir)).toBe(false);
    expect(fx.emulator.requests.length).toBe(before);
  });

  it("every missing input is named, exit 2, nothing printed", async () => {
    const result = await fx.home.nr(["cluster", "register", "--print-cloud-init", "--nr-sha256", "xyz"]);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe("");
    for (const flag of [
      "--nr-url",
      "--nr-sha256",
      "--api-token-file",
      "--api-url",
      "--name",
      "--proxmox-credentials",
    ]) {
      expect(result.stderr).toContain(`  ${flag}: `);
    }
  });

  it("a token given inline is refused and never echoed (exit 2), as --api-token or as the file's path", async () => {
    const inline = await fx.home.nr([...print, "--skip-operator-install", "--api-token", "s3cr3t-inline-token"]);
    expect(inline.exitCode).toBe(2);
    expect(inline.stderr).toContain("--api-token is not accepted");
    expect(`${inline.stdout}${inline.stderr}`).not.toContain("s3cr3t-inline-token");
    const asPath = print.map((arg) => (arg === "/etc/nodekit/api-token" ? "s3cr3t-as-path" : arg));
    const misplaced = await fx.home.nr([...asPath, "--skip-operator-install"]);
    expect(misplaced.exitCode).toBe(2);
    expect(misplaced.stderr).toContain("--api-token-file: must be an absolute path");
    expect(`${misplaced.stdout}${misplaced.stderr}`).not.toContain("s3cr3t-as-path");
  });

  it("is not combined with a run's flags, and --nr-url means nothing without it (exit 2)", async () => {
    const withDryRun = await fx.home.nr([...print, "--skip-operator-install", "--dry-run"]);
    expect(withDryRun.exitCode).toBe(2);
    const alone = await fx.home.nr(["cluster", "register", "--name", "x", "--nr-url", "https://downloads.example/nr"]);
    expect(alone.exitCode).toBe(2);
    expect(alone.stderr).toContain("--print-cloud-init");
  });
});

describe("nr cluster register --api-token-file", () => {
  const register = (nr: string, file: string) =>
    fx.home.nr(
      registerArgv(fx.emulator.url, fx.root, [
        "--api-token-file",
        file,
        "--name",
        "vm-token-file",
        "--skip-operator-install",
        "--dry-run",
      ]),
      { env: { NR_HOME: nr, NR_API_TOKEN: "", NR_LOCK_DIR: fx.home.lockDir } },
    );

  it("reads the token from a mode-0600 file (the emulator accepts no other)", async () => {
    const nr = join(fx.home.path, "token-file-ok");
    await mkdir(nr, { recursive: true });
    const file = join(fx.home.path, "api-token");
    await writeFile(file, `${TOKEN}\n`, { mode: 0o600 });
    const result = await register(nr, file);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain("# create agent vm-token-file");
    expect(`${result.stdout}${result.stderr}`).not.toContain(TOKEN);
  });

  it("refuses a file others may read, an empty one, a missing one (exit 9); nothing is sent, the token never shown", async () => {
    const nr = join(fx.home.path, "token-file-bad");
    await mkdir(nr, { recursive: true });
    const readable = join(fx.home.path, "api-token-readable");
    await writeFile(readable, TOKEN, { mode: 0o644 });
    const empty = join(fx.home.path, "api-token-empty");
    await writeFile(empty, "\n", { mode: 0o600 });
    const fifo = join(fx.home.path, "api-token-fifo");
    await run("mkfifo", ["-m", "600", fifo]);
    const before = fx.emulator.requests.length;
    const cases: [string, string][] = [
      [fifo, "it is not a regular file"],
      [readable, "its mode is 0644"],
      [empty, "the file is empty"],
      [join(fx.home.path, "no-such-token"), "there is no such file"],
    ];
    for (const [file, why] of cases) {
      const result = await register(nr, file);
      expect(result.exitCode, result.stderr).toBe(9);
      expect(result.stderr).toContain(`--api-token-file ${file}: ${why}`);
      expect(`${result.stdout}${result.stderr}`).not.toContain(TOKEN);
    }
    expect(fx.emulator.requests.length).toBe(before);
  });
});
