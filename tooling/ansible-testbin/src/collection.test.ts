import { access, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type RunningNodeRingsEmulator, startNodeRingsEmulator } from "@nodekit/noderings-emulator";
import { REGISTER_PHASES } from "@nodekit/nr-standins";
import { repoRoot, tempDir } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Ansible, buildCollection, nrLauncher, playbook, run, taskResults } from "./ansible.ts";

// The nodekit.nr collection built with ansible-galaxy and read by ansible-doc (its sanity), and
// its modules run by ansible-playbook on this machine against the NodeRings emulator, with the
// checkout's nr: check mode, nr's failures, the token kept out of every output, the facts.

const TOKEN = "nr-ansible-unit-token-5d1c";
const MODULES = ["nr_register", "nr_status", "nr_reset"];
let dir: { path: string; cleanup: () => Promise<void> };
let ansible: Ansible;
let emulator: RunningNodeRingsEmulator;
let nr: string;

beforeAll(async () => {
  dir = await tempDir("nr-ansible-");
  [ansible, emulator] = await Promise.all([buildCollection(dir.path), startNodeRingsEmulator({ tokens: [TOKEN] })]);
  nr = await nrLauncher(join(dir.path, "nr"));
}, 120_000);
afterAll(async () => {
  await emulator?.stop();
  await dir?.cleanup();
});

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

async function inventory(hosts: Record<string, Record<string, unknown>>): Promise<string> {
  const path = join(dir.path, `inventory-${Object.keys(hosts).join("-")}.json`);
  const all = {
    all: {
      vars: { ansible_connection: "local", ansible_python_interpreter: join(ansible.binDir, "python") },
      hosts,
    },
  };
  await writeFile(path, JSON.stringify(all));
  return path;
}

/** A task of nodekit.nr.<module> with the checkout's nr and the host's own nr home, and these options (YAML values). */
function task(name: string, module: string, options: Record<string, string> = {}): string {
  const lines = Object.entries({ nr_path: nr, nr_home: `${dir.path}/{{ inventory_hostname }}/nr`, ...options });
  return `    - name: ${name}
      nodekit.nr.${module}:
${lines.map(([option, value]) => `        ${option}: ${value}\n`).join("")}`;
}

/** Writes a play of these tasks on every host (no facts gathered); returns its path. */
async function play(name: string, ...tasks: string[]): Promise<string> {
  const path = join(dir.path, `${name}.yml`);
  await writeFile(path, `- hosts: all\n  gather_facts: false\n  tasks:\n${tasks.join("")}`);
  return path;
}

describe("the nodekit.nr collection", () => {
  it("builds with ansible-galaxy, and ansible-doc reads every module's documentation and the role's arguments", async () => {
    const listing = await run("tar", ["-tzf", ansible.tarball], { env: ansible.env, cwd: dir.path });
    for (const module of MODULES) expect(listing.stdout).toContain(`plugins/modules/${module}.py`);
    expect(listing.stdout).toContain("roles/register/meta/argument_specs.yml");
    expect(listing.stdout).not.toContain(".test.ts");

    const doc = await run(
      join(ansible.binDir, "ansible-doc"),
      ["--json", ...MODULES.map((module) => `nodekit.nr.${module}`)],
      { env: ansible.env, cwd: dir.path },
    );
    expect(doc.exitCode, doc.stderr).toBe(0);
    const docs = JSON.parse(doc.stdout) as Record<string, { doc: { options: Record<string, { no_log?: boolean }> } }>;
    for (const module of MODULES) expect(Object.keys(docs[`nodekit.nr.${module}`]?.doc.options ?? {})).not.toEqual([]);

    // Each module's documented options are exactly those it accepts: an unknown option's error
    // lists the accepted ones.
    for (const module of MODULES) {
      const refused = await run(
        join(ansible.binDir, "ansible"),
        ["localhost", "-c", "local", "-m", `nodekit.nr.${module}`, "-a", "no_such_option=1"],
        { env: { ...ansible.env, ANSIBLE_PYTHON_INTERPRETER: join(ansible.binDir, "python") }, cwd: dir.path },
      );
      expect(refused.exitCode).not.toBe(0);
      const accepted = /Supported parameters include: ([^."]+)/.exec(refused.stdout)?.[1]?.split(", ").sort();
      expect(accepted, refused.stdout).toEqual(Object.keys(docs[`nodekit.nr.${module}`]?.doc.options ?? {}).sort());
    }

    const role = await run(join(ansible.binDir, "ansible-doc"), ["--json", "-t", "role", "nodekit.nr.register"], {
      env: ansible.env,
      cwd: dir.path,
    });
    expect(role.exitCode, role.stderr).toBe(0);
    const spec = JSON.parse(role.stdout)["nodekit.nr.register"].entry_points.main.options;
    expect(spec.nr_url.required).toBe(true);
    expect(spec.nr_sha256.required).toBe(true);
  }, 120_000);

  it("check mode runs nr's dry run: changed when phases would run, and nothing is written or created", async () => {
    const hosts = await inventory({ "check-1": {}, "check-2": {} });
    const path = await play(
      "check",
      task("register", "nr_register", {
        name: '"{{ inventory_hostname }}"',
        api_url: emulator.url,
        api_token: TOKEN,
      }),
    );
    const result = await playbook(ansible, ["-i", hosts, path, "--check", "-vv"], { cwd: dir.path });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.report.stats["check-1"]).toMatchObject({ changed: 1, failed: 0 });
    const register = taskResults(result, "register");
    expect(register["check-1"]?.phases_ran).toEqual(REGISTER_PHASES);
    expect(register["check-1"]?.plan).toMatchObject({ kind: "Plan", name: "nr cluster register" });
    expect(await exists(join(dir.path, "check-1", "nr", "state.json"))).toBe(false);
    const api = emulator.requests.filter((request) => request.method !== "GET");
    expect(api).toEqual([]);
    // The token went to nr in its environment, never on its command line (which the result shows).
    expect(`${result.stdout}${result.stderr}`).not.toContain(TOKEN);
    expect(JSON.stringify(register["check-1"]?.invocation)).toContain("VALUE_SPECIFIED_IN_NO_LOG_PARAMETER");
  }, 120_000);

  it("a failure returns nr's error code, exit code and message; the other hosts go on", async () => {
    const badToken = "nr-ansible-revoked-token-77e2";
    const tokenFile = join(dir.path, "bad-token");
    await writeFile(tokenFile, `${badToken}\n`, { mode: 0o600 });
    const hosts = await inventory({ "fails-1": { token_file: tokenFile }, "fine-1": {} });
    const path = await play(
      "failure",
      task("register", "nr_register", {
        name: '"{{ inventory_hostname }}"',
        api_url: emulator.url,
        api_token: `"{{ omit if token_file is defined else '${TOKEN}' }}"`,
        api_token_file: '"{{ token_file | default(omit) }}"',
      }),
      task("status", "nr_status"),
    );
    const result = await playbook(ansible, ["-i", hosts, path, "--check"], { cwd: dir.path });
    expect(result.exitCode).toBe(2);
    expect(result.report.stats["fails-1"]).toMatchObject({ failed: 1 });
    expect(result.report.stats["fine-1"]).toMatchObject({ failed: 0, changed: 1 });
    const failed = taskResults(result, "register")["fails-1"];
    expect(failed).toMatchObject({
      error_code: "NODERINGS_UNAUTHORIZED",
      exit_code: 7,
      rc: 7,
      nr_message: "the API token is not valid: it is unknown, revoked or for another environment",
    });
    expect(String(failed?.msg)).toMatch(
      /^nr cluster register --dry-run: the API token is not valid.*\(NODERINGS_UNAUTHORIZED\)$/,
    );
    // The file's path is on nr's command line; its contents are not, anywhere.
    expect(failed?.cmd).toContain(tokenFile);
    expect(`${result.stdout}${result.stderr}`).not.toContain(badToken);
    // The host that failed ran nothing after; the other one went on to its status.
    expect(taskResults(result, "status")["fails-1"]).toBeUndefined();
    expect(taskResults(result, "status")["fine-1"]).toMatchObject({
      changed: false,
      registered: false,
      ansible_facts: { nr_status: { status: "none" } },
    });
  }, 120_000);

  it("nr_reset on a host with no registration changes nothing", async () => {
    const hosts = await inventory({ "never-1": {} });
    const path = await play("reset", task("reset", "nr_reset"));
    const result = await playbook(ansible, ["-i", hosts, path], { cwd: dir.path });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.report.stats["never-1"]).toMatchObject({ changed: 0, failed: 0 });
    expect(await readFile(join(dir.path, "never-1", "nr", "state.json"), "utf8").catch(() => "none")).toBe("none");
  }, 60_000);
});

describe("tooling/ansible-testbin/ensure.sh", () => {
  it("finds the built environment and writes nothing into HOME (ansible makes ~/.ansible/tmp unless told where)", async () => {
    const home = join(dir.path, "ensure-home");
    await mkdir(home);
    const found = await run(join(repoRoot, "tooling/ansible-testbin/ensure.sh"), [], {
      env: { PATH: process.env.PATH ?? "", HOME: home, NODEKIT_ANSIBLE_TESTBIN_DIR: dirname(dirname(ansible.binDir)) },
      cwd: dir.path,
    });
    expect(found.exitCode, found.stderr).toBe(0);
    expect(found.stdout.trim()).toBe(ansible.binDir);
    expect(await readdir(home)).toEqual([]);
  }, 60_000);
});
