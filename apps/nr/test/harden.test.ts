import { spawn } from "node:child_process";
import { chmod, chown, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { exists, otherUser, repoRoot } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { registerArgv, useEmulatorHome } from "./helpers.ts";

// Issue 22: nr's home under nvkectl's rules, from the outside — the built CLI as a
// subprocess, against an NR_HOME that another local user owns or may write to, files they
// planted there, and what a killed or interrupted run left behind. Build nr first.

const TOKEN = "nr-harden-token";
const fx = useEmulatorHome("nr-harden-", TOKEN);
const other = otherUser();

const register = (extra: string[]) => registerArgv(fx.emulator.url, fx.root, extra);

/**
 * An NR_HOME with a helm and a liqoctl in bin/ that answer with the pinned versions and
 * leave a mark when they run, and a state saying every phase is done.
 */
async function plantedHome(name: string): Promise<{ nr: string; marker: string; env: Record<string, string> }> {
  const nr = join(fx.home.path, name);
  const marker = join(fx.home.path, `${name}.ran`);
  await mkdir(join(nr, "bin"), { recursive: true });
  await writeFile(join(nr, "bin/helm"), `#!/bin/sh\ntouch ${marker}\necho ${fx.emulator.pins.tools.helm.version}\n`, {
    mode: 0o755,
  });
  await writeFile(join(nr, "bin/liqoctl"), `#!/bin/sh\ntouch ${marker}\necho 'Client version: v1.0.1'\n`, {
    mode: 0o755,
  });
  return { nr, marker, env: { NR_HOME: nr, NR_API_TOKEN: TOKEN } };
}

describe("an NR_HOME another user may write to (security 2)", () => {
  it("every user may write to it: refused before anything in it is read or run, --dry-run included", async () => {
    const { nr, marker, env } = await plantedHome("world-writable");
    await chmod(nr, 0o777);

    const result = await fx.home.nr(register(["--name", "vm-x", "--dry-run"]), { env });

    expect(result.exitCode).toBe(9);
    expect(result.stderr).toContain(`error: nr's home (NR_HOME) ${nr} is not safe`);
    expect(result.stderr).toContain("why: every user may write to it (mode 0777)");
    expect(result.stderr).toContain(`chmod 700 ${nr}`);
    expect(await exists(marker)).toBe(false);
  });

  it("every user may write to its bin/: refused, and nothing there runs", async () => {
    const { nr, marker, env } = await plantedHome("bin-writable");
    await chmod(join(nr, "bin"), 0o777);

    const result = await fx.home.nr(register(["--name", "vm-x", "--dry-run"]), { env });

    expect(result.exitCode).toBe(9);
    expect(result.stderr).toContain(`error: nr's tool directory ${join(nr, "bin")} is not safe`);
    expect(await exists(marker)).toBe(false);
  });

  describe.skipIf(other.skip !== undefined)(`a second local user (${other.skip ?? "nodekit-other"})`, () => {
    const user = other.user ?? { uid: -1, gid: -1 };

    it("an NR_HOME they own: refused by register (even --dry-run) and status; their helm and liqoctl never run", async () => {
      const { nr, marker, env } = await plantedHome("theirs");
      for (const path of [nr, join(nr, "bin"), join(nr, "bin/helm"), join(nr, "bin/liqoctl")]) {
        await chown(path, user.uid, user.gid);
      }

      const dry = await fx.home.nr(register(["--name", "vm-x", "--dry-run"]), { env });
      expect(dry.exitCode).toBe(9);
      expect(dry.stderr).toContain(`error: nr's home (NR_HOME) ${nr} is not safe`);
      expect(dry.stderr).toContain(`why: it belongs to nodekit-other (uid ${user.uid}), not to root (uid 0)`);
      expect(dry.stderr).toContain("or point NR_HOME at a directory of your own");
      const status = await fx.home.nr(["cluster", "status"], { env });
      expect(status.exitCode).toBe(9);
      expect(await exists(marker)).toBe(false);
    });

    it("a state.json they planted in one's own home does not decide what is done", async () => {
      const nr = join(fx.home.path, "planted-state");
      await mkdir(nr, { mode: 0o700 });
      const at = "2025-10-01T12:00:00.000Z";
      const hash = `sha256:${"a".repeat(64)}`;
      const phases = Object.fromEntries(
        ["agent", "prechecks", "k3s", "calico", "liqo", "outbound-peer", "offloading", "inbound-peering"].map((id) => [
          id,
          { state: "done", finishedAt: at, inputsHash: hash, outputs: { agentId: "a1", name: "vm-1" }, runs: 1 },
        ]),
      );
      const file = join(nr, "state.json");
      await writeFile(
        file,
        JSON.stringify({
          apiVersion: "phase-runner.nodekit.dev/v1",
          kind: "RunState",
          name: "nr cluster register",
          runId: "r1",
          createdAt: at,
          updatedAt: at,
          status: "succeeded",
          phases,
          meta: { agent: { name: "vm-1" }, api: fx.emulator.url },
        }),
        { mode: 0o600 },
      );
      await chown(file, user.uid, user.gid);
      const env = { NR_HOME: nr, NR_API_TOKEN: TOKEN };

      const status = await fx.home.nr(["cluster", "status"], { env });
      expect(status.exitCode).toBe(9);
      expect(status.stderr).toContain(`error: the state file ${file} is not safe to use; it was not read`);
      expect(status.stderr).toContain(`why: ${file} belongs to nodekit-other (uid ${user.uid})`);
      const resume = await fx.home.nr(register(["--resume", "--skip-operator-install", "--dry-run"]), { env });
      expect(resume.exitCode).toBe(9);
      expect(resume.stderr).toContain(`error: the state file ${file} is not safe to use; it was not read`);
    });
  });
});

describe("what a killed run left (security 5, reliability 12)", () => {
  it("the one-time peering kubeconfig, half-written files and partial downloads are removed when the next run starts", async () => {
    const nr = join(fx.home.path, "leftovers");
    const left = [
      "run/noderings-peering.kubeconfig",
      "run/noderings-consumer.kubeconfig",
      "run/.calico-resources.json.999999.0123456789ab.tmp",
      "bin/.helm-install-AbC123/download",
      "bin/.k3s-install.sh.999999.new",
      "bin/..k3s-install.sh.999999.new.0123456789ab.partial",
    ];
    for (const path of left) {
      await mkdir(join(nr, path, ".."), { recursive: true, mode: 0o700 });
      await writeFile(join(nr, path), "token: canary-one-time-token\n", { mode: 0o600 });
    }
    await writeFile(join(nr, "run/calico-resources.json"), "{}\n", { mode: 0o600 });

    // A run that takes the lock, then fails at its first phase (the API refuses the name).
    const result = await fx.home.nr(register(["--name", "admin", "--skip-operator-install"]), {
      env: { NR_HOME: nr, NR_API_TOKEN: TOKEN },
    });

    expect(result.exitCode).toBe(8);
    for (const path of left) expect(await exists(join(nr, path)), path).toBe(false);
    expect(await exists(join(nr, "bin/.helm-install-AbC123"))).toBe(false);
    // What is left: the run's files, and this run's own log (redacted; nr cluster support-bundle takes it).
    expect((await readdir(join(nr, "run"))).sort()).toEqual(["calico-resources.json", "last-run.log"]);
    expect(await readFile(join(nr, "run/last-run.log"), "utf8")).not.toContain("canary-one-time-token");
    expect(result.stderr).toContain(
      `warning: removed what a run that was killed left in ~/leftovers: run/.calico-resources.json.999999.0123456789ab.tmp, run/noderings-consumer.kubeconfig, run/noderings-peering.kubeconfig, bin/..k3s-install.sh.999999.new.0123456789ab.partial, bin/.helm-install-AbC123, bin/.k3s-install.sh.999999.new`,
    );
    expect(result.stderr).not.toContain("canary-one-time-token");
  });

  it("Ctrl-C during a tool download stops it at once and leaves no partial file", async () => {
    const nr = join(fx.home.path, "ctrl-c");
    let asked!: () => void;
    const downloading = new Promise<void>((resolve) => {
      asked = resolve;
    });
    // The k3s installer's download: the start of the file, then nothing more, the connection held open.
    const slow: Server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(1 << 20) });
      res.write(Buffer.alloc(16 << 10), () => asked());
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    const pins = structuredClone(fx.emulator.pins);
    const installer = pins.tools["k3s-install"]?.artifacts?.amd64;
    if (installer === undefined) throw new Error("the emulator pins no k3s installer for amd64");
    installer.url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/k3s-install.sh`;
    delete installer.size;
    fx.emulator.setPins(pins);
    try {
      const child = spawn(
        process.execPath,
        [
          join(repoRoot, "apps/nr/bin/run.js"),
          ...register(["--name", "vm-ctrl-c", "--skip-operator-install", "--kubeconfig", "/nonexistent"]),
        ],
        {
          env: {
            PATH: process.env.PATH ?? "",
            HOME: fx.home.path,
            NO_COLOR: "1",
            NR_HOME: nr,
            NR_API_TOKEN: TOKEN,
            NR_LOCK_DIR: fx.home.lockDir,
          },
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      await downloading;
      child.kill("SIGINT");
      // What a user does when one Ctrl-C seems to do nothing: press it again.
      const early = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve("running"), 5_000))]);
      if (early === "running") child.kill("SIGINT");
      const code = await exited;

      expect(early, stderr).not.toBe("running");
      expect(code, stderr).toBe(130);
      expect(stderr).toContain("interrupted during the download of the k3s installer; the partial file was removed");
      expect(await readdir(join(nr, "bin")).catch(() => [])).toEqual([]);
      const state = JSON.parse(await readFile(join(nr, "state.json"), "utf8"));
      expect(state.phases.k3s.state).toBe("failed");
    } finally {
      fx.emulator.setPins(undefined);
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  }, 60_000);
});
