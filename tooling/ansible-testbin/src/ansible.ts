import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { goRuntimeEnv, type ProcessResult, repoRoot, runProcess } from "@nodekit/test-utils";
import { binaries } from "@nodekit/testenv";

// The nodekit.nr collection (ansible/) as its users run it: built with ansible-galaxy,
// installed into a collections directory of the test's own, and run with ansible-playbook from
// the ansible-core tooling/ansible-testbin/ensure.sh installs (the test runner hands its
// directory on in NODEKIT_ANSIBLE_BIN_DIR). Hosts are this machine (ansible_connection=local).

export interface Ansible {
  /** The directory with ansible-playbook, ansible-galaxy and the environment's python. */
  binDir: string;
  /** The built collection (nodekit-nr-<version>.tar.gz). */
  tarball: string;
  /** ANSIBLE_COLLECTIONS_PATH: where the tarball was installed. */
  collectionsPath: string;
  /** The environment every ansible command of the test gets (its own ANSIBLE_HOME, no colour). */
  env: Record<string, string>;
}

export function run(
  file: string,
  args: readonly string[],
  options: { env: Record<string, string | undefined>; cwd: string; timeoutMs?: number },
): Promise<ProcessResult> {
  return runProcess(file, args, { ...options, timeoutMs: options.timeoutMs ?? 120_000 });
}

/** Builds the collection with ansible-galaxy into `dir` and installs it there. */
export async function buildCollection(dir: string): Promise<Ansible> {
  const binDir = await binaries("ansible");
  const env: Record<string, string> = {
    PATH: `${binDir}:${process.env.PATH ?? ""}`,
    HOME: dir,
    ANSIBLE_HOME: join(dir, "ansible-home"),
    ANSIBLE_LOCAL_TEMP: join(dir, "ansible-tmp"),
    ANSIBLE_REMOTE_TEMP: join(dir, "ansible-remote-tmp"),
    ANSIBLE_NOCOLOR: "1",
    ANSIBLE_RETRY_FILES_ENABLED: "0",
    ANSIBLE_COLLECTIONS_PATH: join(dir, "collections"),
    LC_ALL: "C.UTF-8",
    // Through ansible-playbook and the modules to nr, and from nr to its kubectl and helm.
    ...goRuntimeEnv(),
  };
  const built = await run(
    join(binDir, "ansible-galaxy"),
    ["collection", "build", join(repoRoot, "ansible"), "--output-path", join(dir, "dist")],
    { env, cwd: dir },
  );
  if (built.exitCode !== 0) throw new Error(`ansible-galaxy collection build failed:\n${built.stdout}${built.stderr}`);
  const [name] = (await readdir(join(dir, "dist"))).filter((file) => file.endsWith(".tar.gz"));
  if (name === undefined) throw new Error(`ansible-galaxy collection build wrote no tarball:\n${built.stdout}`);
  const tarball = join(dir, "dist", name);
  const installed = await run(
    join(binDir, "ansible-galaxy"),
    ["collection", "install", tarball, "--collections-path", join(dir, "collections")],
    { env, cwd: dir },
  );
  if (installed.exitCode !== 0) throw new Error(`ansible-galaxy collection install failed:\n${installed.stderr}`);
  return { binDir, tarball, collectionsPath: join(dir, "collections"), env };
}

/** Per host, what ansible-playbook's PLAY RECAP counted. */
interface HostStats {
  ok: number;
  changed: number;
  unreachable: number;
  failed: number;
  skipped: number;
  rescued: number;
  ignored: number;
}

export interface PlayResult extends ProcessResult {
  /** Each task (by its name, in order) with each host's result, and the recap's counts per host. */
  report: {
    tasks: Array<{ name: string; hosts: Record<string, Record<string, unknown>> }>;
    stats: Record<string, HostStats>;
  };
}

/**
 * Reads ansible-playbook's default output as the tests run it (`-v`, results as one-line JSON):
 * `TASK [name]` headers, `ok|changed|skipping|fatal: [host] => {…}` results, and PLAY RECAP.
 * Given several playbooks, ansible-playbook prints a recap after each: the counts are summed.
 */
function readPlayOutput(stdout: string): PlayResult["report"] {
  const tasks: PlayResult["report"]["tasks"] = [];
  const stats: Record<string, HostStats> = {};
  let recap = false;
  for (const line of stdout.split("\n")) {
    if (line.startsWith("PLAY [")) recap = false;
    const header = /^TASK \[(.*)\] \**$/.exec(line);
    if (header) {
      tasks.push({ name: header[1] ?? "", hosts: {} });
      continue;
    }
    if (line.startsWith("PLAY RECAP")) {
      recap = true;
      continue;
    }
    if (recap) {
      const counts = /^(\S+)\s+:\s+(.*)$/.exec(line.trim());
      if (counts) {
        const host = counts[1] ?? "";
        const earlier = (stats[host] ?? {}) as unknown as Record<string, number>;
        const values = Object.fromEntries(
          (counts[2] ?? "").split(/\s+/).map((pair) => {
            const [key = "", value = "0"] = pair.split("=");
            return [key, (earlier[key] ?? 0) + Number(value)];
          }),
        );
        stats[host] = values as unknown as HostStats;
      }
      continue;
    }
    const result = /^(ok|changed|skipping|fatal): \[([^\]]+)\](?:: [A-Z!]+)? => (\{.*\})$/.exec(line);
    const task = tasks.at(-1);
    if (result && task) task.hosts[result[2] ?? ""] = JSON.parse(result[3] ?? "{}") as Record<string, unknown>;
  }
  return { tasks, stats };
}

/** ansible-playbook -v, its results as one-line JSON, read back with readPlayOutput(). */
export async function playbook(
  ansible: Ansible,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<PlayResult> {
  const result = await run(join(ansible.binDir, "ansible-playbook"), ["-v", ...args], {
    cwd: options.cwd,
    env: {
      ...ansible.env,
      ANSIBLE_CALLBACK_RESULT_FORMAT: "json",
      ANSIBLE_CALLBACK_FORMAT_PRETTY: "false",
      ...options.env,
    },
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  return { ...result, report: readPlayOutput(result.stdout) };
}

/** Each host's result of the tasks named `name` (the last one's, when several ran). */
export function taskResults(result: PlayResult, name: string): Record<string, Record<string, unknown>> {
  const found = result.report.tasks.filter((task) => task.name === name);
  return Object.assign({}, ...found.map((task) => task.hosts));
}

/**
 * An `nr` executable for the role to download: a launcher for the checkout's build with the
 * Node that runs the tests (a release's nr-linux-x64 is a single executable; this stands for it).
 */
export async function nrLauncher(path: string): Promise<string> {
  await writeFile(
    path,
    `#!/bin/sh\n# nr from the checkout (apps/nr), for the nodekit.nr collection's tests.\nexec '${process.execPath}' '${join(repoRoot, "apps/nr/bin/run.js")}' "$@"\n`,
    { mode: 0o755 },
  );
  return path;
}
