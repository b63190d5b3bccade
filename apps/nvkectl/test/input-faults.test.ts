import { spawn, spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { cp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import {
  type BoundedRun,
  expectBounded,
  FAULT_BOUNDS,
  FILE_FAULTS,
  repoRoot,
  runBounded,
  STDIN_FAULTS,
  summarize,
  tempDir,
} from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { installArgs, writeInstallInputs } from "./helpers.ts";

// Issue 22, item 8 and "done when": every nvkectl command that reads a file or standard
// input, given inputs no reader may take whole (/dev/zero, /dev/urandom, a FIFO fed for
// ever and never closed, a 64 GiB file, an endless stdin), stops at the 8 MiB limit with
// INPUT_TOO_LARGE (exit 3), in bounded time and memory. Before, `sitespec generate --hosts
// /dev/zero` grew to 7.5 GB in 30 s. Build nvkectl first.

const bin = join(repoRoot, "apps/nvkectl/bin/run.js");
const KEY = "nico-key-input-faults";

let dir: { path: string; cleanup: () => Promise<void> };
let env: Record<string, string>;
const results: Array<BoundedRun & { what: string }> = [];

beforeAll(async () => {
  dir = await tempDir("nvkectl-input-faults-");
  const home = dir.path;
  env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_CACHE_HOME: join(home, "cache"),
    PATH: process.env.PATH ?? "",
  };
  await writeInstallInputs(home);
  await writeFile(join(home, "lab.kubeconfig"), "apiVersion: v1\nkind: Config\n", { mode: 0o600 });
  const { publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const pem = publicKey.export({ type: "spki", format: "pem" }).toString();
  await writeFile(
    join(home, "policy.yaml"),
    `apiVersion: release.nvke.nodekit.dev/v1\nkind: ReleasePolicy\ntrustedKeys:\n  - name: k\n    publicKey: |\n${pem
      .trim()
      .split("\n")
      .map((line) => `      ${line}`)
      .join("\n")}\ntrustedIdentities: []\ntransparencyLog: none\ntimestamps: none\n`,
  );
  // A controller URL nothing listens on: a command that got past its input would fail with exit 6.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  const set = await runBounded(
    bin,
    ["config", "set-site", "lab", "--url", `http://127.0.0.1:${port}`, "--kubeconfig", "lab.kubeconfig"],
    { env, cwd: home, dir: home },
  );
  expect(set.exitCode, set.stderr).toBe(0);
});

afterAll(async () => {
  const stopped = summarize(results.filter((r) => !r.what.endsWith("(Ctrl-C)")));
  const waited = summarize(results.filter((r) => r.what.endsWith("(Ctrl-C)")));
  console.log(
    `nvkectl input fault tier: ${stopped.runs} runs ended on their own (${results.filter((r) => r.exitCode === 3).length} INPUT_TOO_LARGE), peak RSS ${stopped.peakRssMb} MB, longest ${stopped.longestMs} ms; ${waited.runs} silent inputs ended by Ctrl-C after 3 s, longest ${waited.longestMs} ms`,
  );
  await dir.cleanup();
});

const install = (...args: string[]) => [
  ...installArgs({ kubeconfig: "lab.kubeconfig" }),
  "--deploy-path",
  "path",
  "--dry-run",
  ...args,
];

/** Each reader: the command line that gives it `file`. */
const READERS: ReadonlyArray<{ what: string; args: (file: string, home: string) => Promise<string[]> | string[] }> = [
  { what: "sitespec generate --hosts", args: (f) => ["sitespec", "generate", "--hosts", f, "--site-name", "lab"] },
  { what: "create cluster -f", args: (f) => ["create", "cluster", "-f", f] },
  { what: "create nodepool -f", args: (f) => ["create", "nodepool", "-f", f] },
  { what: "create machineimage -f", args: (f) => ["create", "machineimage", "-f", f] },
  { what: "create clusterrelease -f", args: (f) => ["create", "clusterrelease", "-f", f] },
  { what: "create nodepoolrelease -f", args: (f) => ["create", "nodepoolrelease", "-f", f] },
  { what: "patch cluster --patch-file", args: (f) => ["patch", "cluster", "tenant-a", "--patch-file", f] },
  {
    what: "patch nodepool --patch-file",
    args: (f) => ["patch", "nodepool", "workers", "--cluster", "tenant-a", "--patch-file", f],
  },
  { what: "get clusters --certificate-authority", args: (f) => ["get", "clusters", "--certificate-authority", f] },
  { what: "site bootstrap --sitespec", args: (f) => ["site", "bootstrap", "--sitespec", f, "--dry-run"] },
  {
    what: "install --sitespec",
    args: (f) => install().map((arg) => (arg === "sitespec.yaml" ? f : arg)),
  },
  {
    what: "install --stack-config",
    args: (f) => install().map((arg) => (arg === "stack.yaml" ? f : arg)),
  },
  {
    what: "install --deploy-path (its nvke-deploy.yaml)",
    args: async (f, home) => {
      const path = join(home, `path-${process.hrtime.bigint()}`);
      await cp(join(home, "path"), path, { recursive: true });
      await rm(join(path, "nvke-deploy.yaml"));
      await symlink(f, join(path, "nvke-deploy.yaml"));
      return install().map((arg) => (arg === "path" ? path : arg));
    },
  },
  { what: "install --release", args: (f) => install("--release", f) },
  { what: "release verify --policy", args: (f) => ["release", "verify", "registry.invalid/r:1", "--policy", f] },
  {
    what: "release verify --policy (its trustedRoot)",
    args: async (f, home) => {
      const policy = join(home, `identities-${process.hrtime.bigint()}.yaml`);
      await writeFile(
        policy,
        `apiVersion: release.nvke.nodekit.dev/v1\nkind: ReleasePolicy\ntrustedIdentities:\n  - issuer: https://oidc.example.com\n    subject: a@example.com\ntrustedRoot: ${JSON.stringify(f)}\ntimestamps: required\ntransparencyLog: none\n`,
      );
      return ["release", "verify", "registry.invalid/r:1", "--policy", policy];
    },
  },
  {
    what: "release verify --ca-file",
    args: (f) => ["release", "verify", "registry.invalid/r:1", "--policy", "policy.yaml", "--ca-file", f],
  },
  { what: "release export --ca-file", args: (f) => ["release", "export", "registry.invalid/r:1", "--ca-file", f] },
];

/** Exit 3 with INPUT_TOO_LARGE naming the limit, within the bounds. */
function expectStoppedAtLimit(run: BoundedRun, what: string) {
  expect(run.exitCode, `${what}: ${run.stderr}`).toBe(3);
  expect(run.stderr).toContain("is larger than 8 MiB");
  expectBounded(run, what);
}

describe("every nvkectl input reader stops at 8 MiB, whatever it is given (issue 22, item 8)", () => {
  describe.each(FILE_FAULTS.map((fault) => [fault.name, fault] as const))("%s", (_name, fault) => {
    test.each(READERS.map((reader) => [reader.what, reader] as const))("%s", async (what, reader) => {
      const input = await fault.open(dir.path);
      try {
        const run = await runBounded(bin, await reader.args(input.path, dir.path), {
          env: { ...env, NVKE_NICO_API_KEY: KEY },
          cwd: dir.path,
          dir: dir.path,
        });
        results.push({ ...run, what: `${what} ${fault.name}` });
        expectStoppedAtLimit(run, what);
      } finally {
        input.close();
      }
    });

    test("the site configuration (NVKECTL_CONFIG)", async () => {
      const input = await fault.open(dir.path);
      try {
        const run = await runBounded(bin, ["config", "get-sites"], {
          env: { ...env, NVKECTL_CONFIG: input.path },
          cwd: dir.path,
          dir: dir.path,
        });
        results.push({ ...run, what: `NVKECTL_CONFIG ${fault.name}` });
        expectStoppedAtLimit(run, "NVKECTL_CONFIG");
      } finally {
        input.close();
      }
    });

    test("install --kubeconfig: refused before it is read (not a regular file: exit 4; too large: exit 3)", async () => {
      const input = await fault.open(dir.path);
      try {
        const args = install().map((arg) => (arg === "lab.kubeconfig" ? input.path : arg));
        const run = await runBounded(bin, args, {
          env: { ...env, NVKE_NICO_API_KEY: KEY },
          cwd: dir.path,
          dir: dir.path,
        });
        results.push({ ...run, what: `install --kubeconfig ${fault.name}` });
        if (fault.name === "a 64 GiB file") expectStoppedAtLimit(run, "install --kubeconfig");
        else {
          expect(run.exitCode, run.stderr).toBe(4);
          expect(run.stderr).toContain("is not a regular file");
        }
      } finally {
        input.close();
      }
    });
  });

  describe.each(STDIN_FAULTS.map((fault) => [fault] as const))("standard input: %s", (fault) => {
    test.each([
      ["create cluster -f -", ["create", "cluster", "-f", "-"]],
      ["create nodepool -f -", ["create", "nodepool", "-f", "-"]],
      ["create machineimage -f -", ["create", "machineimage", "-f", "-"]],
      ["patch cluster --patch-file -", ["patch", "cluster", "tenant-a", "--patch-file", "-"]],
    ])("%s", async (what, args) => {
      const run = await runBounded(bin, args, { env, cwd: dir.path, dir: dir.path, stdin: fault });
      results.push({ ...run, what: `${what} < ${fault}` });
      expectStoppedAtLimit(run, what);
      expect(run.stderr).toContain("stdin is larger than 8 MiB");
    });
  });

  // An input that never ends and never says anything is waited for, as kubectl -f - and cat
  // wait; a Ctrl-C ends the wait at once.
  test("a FIFO nobody writes to, and a silent stdin: waited for, and a Ctrl-C ends the run at once", async () => {
    const fifo = join(dir.path, "silent-fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const writer = spawn("sh", ["-c", 'exec sleep 600 > "$1"', "sh", fifo], { stdio: "ignore" });
    try {
      for (const [what, args, stdin] of [
        ["sitespec generate --hosts <silent FIFO>", ["sitespec", "generate", "--hosts", fifo], undefined],
        ["create cluster -f - <silent pipe>", ["create", "cluster", "-f", "-"], "a silent pipe"],
      ] as const) {
        const run = await runBounded(bin, [...args], {
          env,
          cwd: dir.path,
          dir: dir.path,
          ...(stdin === undefined ? {} : { stdin }),
          interruptAfterMs: 3_000,
        });
        results.push({ ...run, what: `${what} (Ctrl-C)` });
        expect(run.ms, what).toBeGreaterThanOrEqual(3_000);
        expect(run.ms, what).toBeLessThan(3_000 + FAULT_BOUNDS.ms);
        expect(run.signal === "SIGINT" || run.exitCode === 130, `${what}: ${run.exitCode} ${run.signal}`).toBe(true);
      }
    } finally {
      writer.kill("SIGKILL");
    }
  });
});
