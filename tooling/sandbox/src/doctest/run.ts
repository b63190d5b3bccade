import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Problem } from "@nodekit/errors";
import { portOpen } from "@nodekit/test-utils";
import { runProcess } from "@nodekit/testenv/supervisor";
import type { SandboxStatus } from "../sandbox.ts";
import { runInSession } from "../session.ts";
import { extractBlocks, outputMatches, type RunBlock } from "./blocks.ts";

const sandboxCli = fileURLToPath(new URL("../cli.ts", import.meta.url));

export interface DocTestOptions {
  /** The checkout: `./run` and `examples/` come from here. */
  root: string;
  /** The environment to start from (PATH, and NODEKIT_TESTENV_BIN_DIR / NODEKIT_REGISTRY_BIN_DIR for the binaries). */
  env: NodeJS.ProcessEnv;
  /** Per block; default 3 minutes. */
  blockTimeoutMs?: number;
  /** Each block's output as it comes (a test's debug log). */
  onOutput?: (chunk: string) => void;
}

export interface DocTestResult {
  /** How many runnable blocks ran (up to the first failure). */
  ran: number;
  problems: Problem[];
}

const tail = (text: string, lines = 30) => text.trimEnd().split("\n").slice(-lines).join("\n");

/**
 * Runs a guide's ```sh doctest blocks in order, as a reader would in one terminal at the
 * checkout's root, in a world of their own: a fresh HOME, and a sandbox directory nobody
 * else uses — so "fresh sandbox" is whatever the guide's own `./run sandbox up` brings up.
 * Each block's exit code (and its doctest:output lines) is checked; the first failure ends
 * the run. The sandbox is taken down at the end, whatever happened.
 */
export async function runDocTests(source: string, markdown: string, options: DocTestOptions): Promise<DocTestResult> {
  const { blocks, problems } = extractBlocks(markdown, { source });
  if (problems.length > 0) return { ran: 0, problems };
  const runnable = blocks.filter((block): block is RunBlock => block.kind === "run");
  if (runnable.length === 0) return { ran: 0, problems: [] };
  const stale = staleDependencies(source, options);
  if (stale !== undefined) return { ran: 0, problems: [stale] };

  const work = await mkdtemp(join(tmpdir(), "nodekit-doctest-"));
  const checkout = join(work, "checkout");
  const home = join(work, "home");
  await mkdir(checkout);
  await mkdir(home);
  // The guide's paths are the checkout's (./run, examples/, the Ansible collection in ansible/ and
  // the ansible-core of tooling/ansible-testbin); what it writes stays out of the checkout.
  await writeFile(join(checkout, "run"), `#!/bin/sh\nexec ${JSON.stringify(join(options.root, "run"))} "$@"\n`);
  await chmod(join(checkout, "run"), 0o755);
  await symlink(join(options.root, "examples"), join(checkout, "examples"));
  await symlink(join(options.root, "ansible"), join(checkout, "ansible"));
  await mkdir(join(checkout, "tooling"));
  await symlink(join(options.root, "tooling", "ansible-testbin"), join(checkout, "tooling", "ansible-testbin"));
  // …and Argo CD's CRDs (tooling/argocd-crds/ensure.sh prints NODEKIT_ARGOCD_CRDS_DIR when the runner hands it on).
  await symlink(join(options.root, "tooling", "argocd-crds"), join(checkout, "tooling", "argocd-crds"));
  const env: NodeJS.ProcessEnv = {
    ...options.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    NODEKIT_SANDBOX_DIR: join(work, "sandbox"),
    NODEKIT_SANDBOX_CLI: "./run sandbox",
    NO_COLOR: "1",
  };
  // The machine's caches stay the machine's: the toolchain, and the Kubernetes binaries.
  const cache = options.env.XDG_CACHE_HOME || join(options.env.HOME || homedir(), ".cache");
  env.XDG_CACHE_HOME = join(home, ".cache");
  env.NODEKIT_CACHE ??= join(cache, "nodekit");
  env.NODEKIT_TESTBIN_DIR ??= join(cache, "nodekit", "k8s-testbin");
  // …the registries (the sandbox's), and Go's module cache (the Cluster API module the sandbox's provider repository is built from).
  env.NODEKIT_REGISTRY_TESTBIN_DIR ??= join(cache, "nodekit", "registry-testbin");
  env.NODEKIT_ANSIBLE_TESTBIN_DIR ??= join(cache, "nodekit", "ansible-testbin");
  env.GOPATH ??= join(options.env.HOME || homedir(), "go");

  let ran = 0;
  const found: Problem[] = [];
  try {
    for (const block of runnable) {
      ran++;
      const timeoutMs = options.blockTimeoutMs ?? 180_000;
      const started = performance.now();
      const result = await runInSession(block.code, {
        cwd: checkout,
        env,
        stateFile: join(work, "exported.sh"),
        timeoutMs,
        ...(options.onOutput === undefined ? {} : { onOutput: options.onOutput }),
      });
      options.onOutput?.(
        `[doctest] ${source}:${block.line}: exit ${result.exitCode} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
      );
      const failure = result.timedOut
        ? `did not finish within ${timeoutMs / 1000} s`
        : result.exitCode !== block.exitCode
          ? `exited with code ${result.exitCode}, not ${block.exitCode}`
          : undefined;
      if (failure !== undefined) {
        found.push({
          severity: "error",
          source,
          line: block.line,
          message: `this block ${failure}; its output:\n${tail(result.output)}`,
        });
        break;
      }
      if (block.expectedOutput !== undefined) {
        const match = outputMatches(result.output, block.expectedOutput.lines);
        if (!match.ok) {
          found.push({
            severity: "error",
            source,
            line: block.expectedOutput.line,
            message: `the output of the block above does not show ${JSON.stringify(match.missing)} (in order); it was:\n${tail(result.output)}`,
          });
          break;
        }
      }
    }
  } finally {
    // The guide's own `down` has run by now, or the guide failed: either way, what is left is
    // taken down here, and then nothing may be left.
    const ports = await listeningPorts(env);
    const down = await runProcess(process.execPath, ["--conditions=source", sandboxCli, "down"], { env });
    if (down.exitCode !== 0) {
      found.push({ severity: "error", source, message: `sandbox down after the guide failed:\n${tail(down.stderr)}` });
    }
    found.push(...(await leftovers(source, work, home, ports)));
    await rm(work, { recursive: true, force: true });
  }
  return { ran, problems: found };
}

/**
 * A guide's `./run sandbox up` installs node_modules again when it was installed from another
 * lockfile or package.json (a dependency changed, `./run setup` not run since). pnpm then needs
 * the registry (it verifies the lockfile against its supply-chain policies, and the guide's HOME
 * has a store of its own), which a test run in its network namespace cannot reach: the block
 * hangs, and node_modules can be left empty. Said before anything runs.
 */
function staleDependencies(source: string, options: DocTestOptions): Problem | undefined {
  const check = spawnSync("bash", ["-c", '. "$NODEKIT_ROOT/tooling/toolchain/env.sh" && nodekit_deps_current'], {
    env: { PATH: options.env.PATH ?? "", HOME: options.env.HOME ?? homedir(), NODEKIT_ROOT: options.root },
  });
  if (check.status === 0) return undefined;
  return {
    severity: "error",
    source,
    message: `${join(options.root, "node_modules")} was not installed from this checkout's lockfile and package.json files (a dependency changed since): run ./run setup, then the guides again (a guide's ./run sandbox up would install again from the registry, which this test run cannot reach)`,
  };
}

/** Where the sandbox listens (site cluster, controller, NodeRings API, tenants), if it runs. */
async function listeningPorts(env: NodeJS.ProcessEnv): Promise<number[]> {
  const result = await runProcess(process.execPath, ["--conditions=source", sandboxCli, "status", "-o", "json"], {
    env,
  });
  try {
    const status = JSON.parse(result.stdout) as SandboxStatus;
    return [status.site?.server, status.controller?.url, status.noderings?.url, ...status.tenants.map((t) => t.server)]
      .filter((url): url is string => url !== undefined)
      .map((url) => Number(new URL(url).port));
  } catch {
    return [];
  }
}

/** After `down`: no process, port or file of the sandbox, and no nvkectl config, token cache or ~/.nr in HOME. */
async function leftovers(source: string, work: string, home: string, ports: number[]): Promise<Problem[]> {
  const problems: string[] = [];
  const sandboxDir = join(work, "sandbox");
  if (existsSync(sandboxDir)) problems.push(`the sandbox's directory ${sandboxDir} is still there`);
  const processes = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes(sandboxDir));
  for (const line of processes) problems.push(`a process is left: ${line.trim().slice(0, 200)}`);
  for (const port of ports) if (await portOpen(port)) problems.push(`port ${port} still answers`);
  for (const dir of [join(home, ".config", "nvkectl"), join(home, ".cache", "nvkectl")]) {
    if (existsSync(dir))
      problems.push(`${dir} was written: nvkectl used HOME instead of the sandbox's own config and cache`);
  }
  if (existsSync(join(home, ".nr")))
    problems.push(`${join(home, ".nr")} was written: nr used HOME, not the sandbox's NR_HOME`);
  return problems.map((message) => ({ severity: "error", source, message: `after sandbox down: ${message}` }));
}
