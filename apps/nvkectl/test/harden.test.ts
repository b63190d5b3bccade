import { spawn } from "node:child_process";
import { chmod, chown, lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type CliResult, deadPid, otherUser, repoRoot, runCli, tempDir } from "@nodekit/test-utils";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

// Issue 9, from the outside: the built CLI as a subprocess, against files a second local user
// (or a killed process) left behind. Build nvkectl first.

let home: { path: string; cleanup: () => Promise<void> };
let configDir: string;
let configFile: string;
const other = otherUser();

beforeEach(async () => {
  home = await tempDir("nvkectl-harden-");
  configDir = join(home.path, "xdg", "nvkectl");
  configFile = join(configDir, "config.yaml");
  await writeFile(join(home.path, "lab.kubeconfig"), "apiVersion: v1\nkind: Config\n");
});

afterEach(async () => {
  await home.cleanup();
});

function nvkectl(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli("nvkectl", args, {
    env: { HOME: home.path, XDG_CONFIG_HOME: join(home.path, "xdg"), ...env },
    cwd: home.path,
  });
}

const setSite = (name: string, url = `https://${name}.example.com`, kubeconfig = "lab.kubeconfig") =>
  nvkectl(["config", "set-site", name, "--url", url, "--kubeconfig", kubeconfig]);

/** The site "lab" with this kubeconfig, its controller where nothing answers. */
const setLabSite = (kubeconfig: string) => setSite("lab", "http://127.0.0.1:9", kubeconfig);

describe("concurrent writers (correctness 7)", () => {
  it("20 parallel set-site keep all 20 sites, and every one that says created was", async () => {
    const names = Array.from({ length: 20 }, (_, index) => `site-${index}`);
    const results = await Promise.all(names.map((name) => setSite(name)));

    for (const result of results) expect(result).toMatchObject({ exitCode: 0, stderr: "" });
    const created = results.filter((result) => /^Site "site-\d+" created\.\n/.test(result.stdout)).length;
    expect(created).toBe(20);
    const sites = JSON.parse((await nvkectl(["config", "get-sites", "-o", "json"])).stdout).items as Array<{
      name: string;
    }>;
    expect(sites.map((site) => site.name).sort()).toEqual([...names].sort());
    expect((await readdir(configDir)).sort()).toEqual(["config.yaml"]);
  }, 120_000);

  it("a lock left by a killed nvkectl is taken over once stale", async () => {
    await mkdir(configDir, { recursive: true, mode: 0o700 });
    await mkdir(`${configFile}.lock`);
    const old = new Date(Date.now() - 60_000);
    const { utimes } = await import("node:fs/promises");
    await utimes(`${configFile}.lock`, old, old);

    const result = await setSite("lab");

    expect(result).toMatchObject({ exitCode: 0, stdout: 'Site "lab" created.\nSwitched to site "lab".\n' });
    await expect(lstat(`${configFile}.lock`)).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("killed writers (correctness 10)", () => {
  it("the next write removes the temporary files a kill -9 left beside the config", async () => {
    expect((await setSite("lab")).exitCode).toBe(0);
    const dead = await deadPid();
    const leftovers = [`.config.yaml.${dead}.0123456789ab.tmp`, `.config.yaml.${dead}.ffffffffffff.tmp`];
    for (const name of leftovers) await writeFile(join(configDir, name), "apiVersion: nvkectl/v1\nsites:\n  - na");

    expect((await setSite("edge")).exitCode).toBe(0);

    expect(await readdir(configDir)).toEqual(["config.yaml"]);
  });

  it("a set-site killed with SIGKILL in a loop never leaves a torn config", async () => {
    expect((await setSite("lab")).exitCode).toBe(0);
    for (let round = 0; round < 5; round++) {
      await killDuring(
        ["config", "set-site", `s${round}`, "--url", "https://x.example.com", "--kubeconfig", "lab.kubeconfig"],
        round * 40,
      );
      const check = await nvkectl(["config", "get-sites", "-o", "json"]);
      expect(check.exitCode).toBe(0);
    }
    expect((await setSite("last")).exitCode).toBe(0);
    expect((await readdir(configDir)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  }, 120_000);
});

describe("input that is not UTF-8 (correctness 11)", () => {
  it("a Latin-1 config file is reported as such, with its line", async () => {
    await mkdir(configDir, { recursive: true, mode: 0o700 });
    await writeFile(
      configFile,
      Buffer.concat([
        Buffer.from("apiVersion: nvkectl/v1\nkind: Config\n# caf"),
        Buffer.from([0xe9]),
        Buffer.from("\n"),
      ]),
      { mode: 0o600 },
    );

    const result = await nvkectl(["config", "get-sites"]);

    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(
      `${configFile}:3: column 6: is not UTF-8 text (byte 0xe9 is not part of a UTF-8 character); save the file as UTF-8`,
    );
  });

  it("a UTF-16 hosts CSV is reported as such", async () => {
    await writeFile(join(home.path, "hosts.csv"), Buffer.from("\uFEFFname,ip\nnode-1,10.0.0.1\n", "utf16le"));
    const result = await nvkectl(["sitespec", "generate", "--hosts", "hosts.csv", "--site-name", "lab"]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(
      "hosts.csv: is UTF-16 text, not UTF-8; save it as UTF-8 (without a byte-order mark)",
    );
  });
});

describe("--output-file (security 1)", () => {
  const csv = "name,ip\nnode-1,10.0.0.1\n";

  it("is never written through a symbolic link", async () => {
    await writeFile(join(home.path, "hosts.csv"), csv);
    await writeFile(join(home.path, "victim"), "precious\n");
    await symlink(join(home.path, "victim"), join(home.path, "out.yaml"));

    const result = await nvkectl([
      "sitespec",
      "generate",
      "--hosts",
      "hosts.csv",
      "--site-name",
      "lab",
      "--output-file",
      "out.yaml",
    ]);

    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain("error: the site spec out.yaml is a symbolic link; it was not written");
    expect(await readFile(join(home.path, "victim"), "utf8")).toBe("precious\n");
  });

  it.skipIf(other.skip !== undefined)(
    `onto another user's file: refused, and with --force replaced by a file of one's own (${other.skip ?? "as root, against nodekit-other"})`,
    async () => {
      const user = other.user ?? { uid: -1, gid: -1 };
      await writeFile(join(home.path, "hosts.csv"), csv);
      await mkdir(join(home.path, "shared"), { mode: 0o1777 });
      await chmod(join(home.path, "shared"), 0o1777);
      const target = join(home.path, "shared", "lab.yaml");
      await writeFile(target, "theirs\n");
      await chown(target, user.uid, user.gid);
      const args = ["sitespec", "generate", "--hosts", "hosts.csv", "--site-name", "lab", "--output-file", target];

      const refused = await nvkectl(args);
      expect(refused.exitCode).toBe(5);
      expect(refused.stderr).toContain(
        `error: the site spec ${target} belongs to nodekit-other (uid ${user.uid}); it was not replaced`,
      );
      expect(refused.stderr).toContain("next: or pass --force to replace it with a file of your own");
      expect(await readFile(target, "utf8")).toBe("theirs\n");

      const forced = await nvkectl([...args, "--force"]);
      expect(forced.exitCode).toBe(0);
      const info = await stat(target);
      expect(info.uid).toBe(0);
      expect(await readFile(target, "utf8")).toContain("kind: SiteSpec");
    },
  );
});

describe.skipIf(other.skip !== undefined)(
  `a config another user could change (security 1; ${other.skip ?? "as root, against nodekit-other"})`,
  () => {
    const user = other.user ?? { uid: -1, gid: -1 };

    it("a config directory another user owns is refused, and nothing is written into it", async () => {
      await mkdir(configDir, { recursive: true, mode: 0o700 });
      await chown(configDir, user.uid, user.gid);

      const result = await setSite("lab");

      expect(result.exitCode).toBe(9);
      expect(result.stderr).toContain(`error: the configuration directory ${configDir} is not safe`);
      expect(result.stderr).toContain(`why: it belongs to nodekit-other (uid ${user.uid}), not to root (uid 0)`);
      expect(await readdir(configDir)).toEqual([]);
    });

    it("a config file another user wrote is not read: it could send tokens anywhere", async () => {
      expect((await setSite("lab")).exitCode).toBe(0);
      await chown(configFile, user.uid, user.gid);

      const result = await nvkectl(["config", "get-sites"]);

      expect(result.exitCode).toBe(9);
      expect(result.stderr).toContain(`error: the site configuration ${configFile} is not safe to use`);
    });
  },
);

it("a config directory every user may write to is refused", async () => {
  await mkdir(configDir, { recursive: true });
  await chmod(configDir, 0o777);
  const result = await setSite("lab");
  expect(result.exitCode).toBe(9);
  expect(result.stderr).toContain("why: every user may write to it (mode 0777)");
});

describe("terminal control characters in what others wrote (security 4)", () => {
  const ESC = "\u001b";

  it("a CSV header cell is printed escaped", async () => {
    await writeFile(join(home.path, "hosts.csv"), `name,ip,${ESC}]52;c;ZXZpbA==\u0007${ESC}[2J\nnode-1,10.0.0.1,x\n`);
    const result = await nvkectl(["sitespec", "generate", "--hosts", "hosts.csv", "--site-name", "lab"]);
    expect(result.exitCode).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
    expect(result.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(result.stderr).toContain("\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J");
  });

  it("field names of a request and file names are printed escaped, in text and in --json-logs", async () => {
    expect((await setSite("lab")).exitCode).toBe(0);
    const file = `req${ESC}[31m.yaml`;
    // YAML's own escapes: the keys hold a real ESC, BEL and right-to-left override.
    await writeFile(join(home.path, file), 'name: a\n"\\e]0;owned\\a": 1\n"\\u202Eevil": 2\n');

    const text = await nvkectl(["create", "cluster", "-f", file]);
    expect(text.exitCode).toBe(3);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
    expect(text.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202e]/);
    expect(text.stderr).toContain("req\\x1b[31m.yaml:2: field \\x1b]0;owned\\x07: is not a known field");
    expect(text.stderr).toContain("field \\u202eevil: is not a known field");

    const json = await nvkectl(["create", "cluster", "-f", file, "--json-logs"]);
    expect(json.exitCode).toBe(3);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
    expect(json.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202e]/);
    const record = JSON.parse(json.stderr.trim().split("\n").at(-1) ?? "");
    expect(record.problems.map((p: { path: string[] }) => p.path[0])).toContain("\u202eevil");
  });

  it("a file name in an error is printed escaped", async () => {
    const result = await nvkectl(["sitespec", "generate", "--hosts", `no${ESC}[2Jsuch.csv`]);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain("no\\x1b[2Jsuch.csv");
    expect(result.stderr).not.toContain(ESC);
  });
});

describe("a kubeconfig with a YAML syntax error (security 2)", () => {
  const TOKEN = "abcdef.0123456789abcdef";
  const PASSWORD = "hunter2-very-secret";
  const broken = [
    "apiVersion: v1",
    "kind: Config",
    "current-context: lab",
    "users:",
    "- name: u",
    "  user:",
    `    token: ${TOKEN}`,
    `    password: ${PASSWORD}`,
    "  bad: [unclosed",
    "clusters: []",
    "",
  ].join("\n");

  it.each([
    ["get clusters (the token is minted with the client library)", ["get", "clusters"]],
    ["get providers (kubectl)", ["get", "providers"]],
    ["get kubeconfig (the client library)", ["get", "kubeconfig", "tenant-a"]],
  ])("%s names the file and line, and never quotes its content", async (_what, args) => {
    await writeFile(join(home.path, "broken.kubeconfig"), broken, { mode: 0o600 });
    const added = await setLabSite("broken.kubeconfig");
    expect(added.exitCode).toBe(0);

    for (const extra of [[], ["--json-logs"], ["-v"]]) {
      const result = await nvkectl([...args, ...extra]);
      expect(result.exitCode).toBe(3);
      expect(result.stderr).toContain("broken.kubeconfig");
      expect(result.stderr).toMatch(/line (8|9|10)\b/);
      for (const secret of [TOKEN, PASSWORD, "abcdef", "hunter2", "unclosed"]) {
        expect(result.stderr).not.toContain(secret);
        expect(result.stdout).not.toContain(secret);
      }
    }
  });
});

describe.skipIf(other.skip !== undefined)(
  `Node's compile cache in a directory another user made first (issue 22 item 1; ${other.skip ?? "as root, against nodekit-other"})`,
  () => {
    const user = other.user ?? { uid: -1, gid: -1 };

    // What another user can do when Node's compile cache is turned on without a directory:
    // create $TMPDIR/node-compile-cache before anyone else, writable by all, with a cache entry
    // for a CLI's file whose V8 code is theirs. Node checks the entry's CRC-32 of the source it
    // was made from (which they can read), V8 only the source's length: the CLI runs their code.
    it.each([
      ["nvkectl", "@nodekit/nvkectl/"],
      ["nr", "@nodekit/nr/"],
    ] as const)("%s never loads code from it, and never writes there", async (cli, version) => {
      const tmp = join(home.path, "tmp");
      await mkdir(tmp, { mode: 0o1777 });
      await chmod(tmp, 0o1777);
      const shared = join(tmp, "node-compile-cache");
      // The file Node compiled first after `module.enableCompileCache()`: the bundle's entry.
      const planted = await plantCompileCache(join(repoRoot, "apps", cli, "dist", "run.js"), shared, user);
      const before = await snapshot(shared);

      const result = await runCli(cli, ["--version"], {
        env: { HOME: home.path, XDG_CONFIG_HOME: join(home.path, "xdg"), TMPDIR: tmp },
        cwd: home.path,
        // Node turns its compile cache on once per process: the CLI needs a process of its own.
        spawn: true,
      });

      expect(result.stdout).not.toContain(PLANTED);
      expect(result).toMatchObject({ exitCode: 0, stderr: "" });
      expect(result.stdout).toMatch(new RegExp(`^${version.replace("/", "\\/")}`));
      expect(await snapshot(shared)).toEqual(before);
      expect(before).toContain(planted);
      // A command that loads more than the entry: still nothing from (or to) the shared directory.
      // (Help oclif renders, at a width the help pages made at build time are not for.)
      const help = await runCli(cli, ["--help"], {
        env: { HOME: home.path, XDG_CONFIG_HOME: join(home.path, "xdg"), TMPDIR: tmp, OCLIF_COLUMNS: "120" },
        cwd: home.path,
        spawn: true,
      });
      expect(help.exitCode, help.stderr).toBe(0);
      expect(help.stdout).not.toContain(PLANTED);
      expect(await snapshot(shared)).toEqual(before);
      // Node's compile cache went to the CLI's own private cache directory instead.
      const own = join(home.path, ".cache", cli, "code-cache");
      expect((await stat(own)).mode & 0o777).toBe(0o700);
      expect((await readdir(own)).some((entry) => entry.startsWith(`v${process.versions.node}-`))).toBe(true);
    });

    it("NODE_COMPILE_CACHE naming a directory others can write: Node's choice, and nvkectl warns", async () => {
      const shared = join(home.path, "shared-cache");
      await mkdir(shared, { mode: 0o777 });
      await chmod(shared, 0o777);
      await chown(shared, user.uid, user.gid);
      const result = await nvkectl(["config", "get-sites"], { NODE_COMPILE_CACHE: shared });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr).toContain(
        `warning: NODE_COMPILE_CACHE puts Node.js's compile cache in ${shared}/v${process.versions.node}-`,
      );
      expect(result.stderr).toContain("next: unset NODE_COMPILE_CACHE");
      const own = join(home.path, "own-cache");
      const quiet = await nvkectl(["config", "get-sites"], { NODE_COMPILE_CACHE: own });
      expect(quiet.exitCode, quiet.stderr).toBe(0);
      expect(quiet.stderr).not.toContain("NODE_COMPILE_CACHE");
      expect((await readdir(own)).some((entry) => entry.startsWith(`v${process.versions.node}-`))).toBe(true);
    });
  },
);

describe("a secret too short to redact (issue 22 item 6)", () => {
  it("is not redacted (the output stays readable) and the command warns, naming it, never its value", async () => {
    // A one-character registry password: redacting it would turn every "1" of every line into [REDACTED].
    for (const extra of [[], ["-v"], ["--json-logs"]]) {
      const result = await nvkectl(["release", "export", "127.0.0.1:9/nvke/release:1", "--plain-http", ...extra], {
        NODEKIT_REGISTRY_USERNAME: "ops",
        NODEKIT_REGISTRY_PASSWORD: "1",
      });
      expect(result.exitCode).toBe(6);
      expect(result.stderr).toContain("127.0.0.1:9");
      expect(result.stderr).not.toContain("[REDACTED]");
      expect(result.stderr).toContain("NODEKIT_REGISTRY_PASSWORD is shorter than 8 characters, so it is not hidden");
      expect(result.stderr.match(/NODEKIT_REGISTRY_PASSWORD is shorter/g)).toHaveLength(1);
    }
    // Eight characters are redacted as ever, without a warning.
    const long = await nvkectl(["release", "export", "127.0.0.1:9/nvke/release:1", "--plain-http"], {
      NODEKIT_REGISTRY_USERNAME: "ops",
      NODEKIT_REGISTRY_PASSWORD: "127.0.0.",
    });
    expect(long.exitCode).toBe(6);
    expect(long.stderr).not.toContain("shorter than");
    expect(long.stderr).toContain("[REDACTED]1:9");
  });
});

describe("YAML alias bombs (limits 14)", () => {
  const request = (spec: string) =>
    `name: bomb\nprovider: capd\nclusterReleaseName: nvke-1-31\ncontrolPlaneConfig: {replicas: 1}\nnetwork: {podCIDR: 10.244.0.0/16, serviceCIDR: 10.96.0.0/12}\ninfra:\n  machineTemplate:\n    spec:\n${spec}`;
  const bomb = Array.from({ length: 9 }, (_, level) =>
    level === 0
      ? "      a0: &a0 [lol]"
      : `      a${level}: &a${level} [${Array(9)
          .fill(`*a${level - 1}`)
          .join(", ")}]`,
  ).join("\n");

  it.each([
    ["a billion laughs in infra.machineTemplate.spec", bomb, /repeats more than 10000 nodes through aliases/],
    [
      "a cyclic alias",
      "      self: &self\n        again: *self",
      /has an alias \*self inside the node &self it repeats/,
    ],
  ])("%s is one located problem (exit 3) at once, and nothing is sent", async (_what, spec, message) => {
    expect((await setSite("lab")).exitCode).toBe(0);
    await writeFile(join(home.path, "bomb.yaml"), `${request(spec)}\n`);
    const result = await nvkectl(["create", "cluster", "-f", "bomb.yaml"]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(
      /^error: bomb\.yaml has 1 problem; nothing was sent to the controller\n {2}bomb\.yaml:\d+: column \d+: /,
    );
    expect(result.stderr).toMatch(message);
  });
});

describe("error reports through a pipe (limits 15)", () => {
  const badCsv = `name,ip\n${Array.from({ length: 500 }, (_, index) => `Node_${index},10.0.0.${index}`).join("\n")}\n`;
  const bin = join(import.meta.dirname, "..", "bin", "run.js");
  /** stderr through a pipe whose reader starts reading only a second later: the process has exited by then. */
  const throughSlowPipe = (extra: string[]) =>
    new Promise<string>((resolve, reject) => {
      const args = ["sitespec", "generate", "--hosts", "hosts.csv", "--site-name", "lab", ...extra];
      const quoted = [process.execPath, bin, ...args].map((arg) => `'${arg}'`).join(" ");
      const child = spawn("sh", ["-c", `${quoted} 2>&1 >/dev/null | (sleep 1; cat)`], {
        cwd: home.path,
        env: { PATH: process.env.PATH ?? "", HOME: home.path, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
      });
      child.on("error", reject);
      child.on("close", () => resolve(out));
    });

  it("a report of more than 64 KiB arrives whole", async () => {
    await writeFile(join(home.path, "hosts.csv"), badCsv);
    const piped = await throughSlowPipe([]);
    const direct = await nvkectl(["sitespec", "generate", "--hosts", "hosts.csv", "--site-name", "lab"]);

    expect(direct.exitCode).toBe(3);
    expect(Buffer.byteLength(direct.stderr)).toBeGreaterThan(65_536);
    expect(piped).toBe(direct.stderr);
  });

  it("--json-logs stays valid JSON", async () => {
    await writeFile(join(home.path, "hosts.csv"), badCsv);
    const piped = await throughSlowPipe(["--json-logs"]);
    expect(Buffer.byteLength(piped)).toBeGreaterThan(65_536);
    const records = piped
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(records.at(-1)).toMatchObject({ level: "error", code: "SITESPEC_INVALID", exitCode: 3 });
    expect(records.at(-1).problems.length).toBeGreaterThanOrEqual(500);
  });
});

describe("one classification of a kubeconfig that cannot be used (correctness 6 and 8)", () => {
  const cluster =
    "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:9\n    insecure-skip-tls-verify: true\n";
  const wrongContext = `apiVersion: v1\nkind: Config\n${cluster}contexts:\n- name: real\n  context: {cluster: c, user: u}\ncurrent-context: elsewhere\nusers:\n- name: u\n  user: {token: x}\n`;
  const missingPlugin = `apiVersion: v1\nkind: Config\n${cluster}contexts:\n- name: real\n  context: {cluster: c, user: u}\ncurrent-context: real\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: kubelogin-not-installed\n      interactiveMode: Never\n`;
  const commands = [
    ["get", "providers"],
    ["get", "kubeconfig", "tenant-a"],
    ["get", "clusters"],
  ];

  it.each(commands)(
    "a wrong current context is KUBECONFIG_INVALID (exit 3), never 'not found': %s %s",
    async (...args) => {
      await writeFile(join(home.path, "wrong.kubeconfig"), wrongContext);
      expect((await setLabSite("wrong.kubeconfig")).exitCode).toBe(0);
      const result = await nvkectl([...args, "--json-logs"]);
      expect(result.exitCode).toBe(3);
      expect(result.stdout).toBe("");
      expect(JSON.parse(result.stderr.trim().split("\n").at(-1) ?? "")).toMatchObject({
        code: "KUBECONFIG_INVALID",
        exitCode: 3,
      });
    },
  );

  it.each(commands)(
    "a missing exec credential plugin is named, exit 9, not 'cannot reach the cluster': %s %s",
    async (...args) => {
      await writeFile(join(home.path, "exec.kubeconfig"), missingPlugin);
      expect((await setLabSite("exec.kubeconfig")).exitCode).toBe(0);
      const result = await nvkectl(args);
      expect(result.exitCode).toBe(9);
      expect(result.stderr.split("\n")[0]).toMatch(
        /^error: the credential plugin kubelogin-not-installed that kubeconfig .* runs is not installed$/,
      );
      expect(result.stderr).not.toMatch(/cannot reach|unreachable/i);
    },
  );
});

describe("plugins install (also seen)", () => {
  it.each([
    ["/nonexistent", "error: /nonexistent is not a plugin: there is no such directory"],
    ["someuser/someplugin", "error: someuser/someplugin is a repository; plugins install takes a package name"],
    [
      "https://github.com/someuser/someplugin",
      "error: someuser/someplugin is a repository; plugins install takes a package name",
    ],
    ["git+ssh://git@example.invalid/x.git", "error: git+ssh://git@example.invalid/x.git is a repository"],
  ])("%s is refused before anything is fetched", async (argument, message) => {
    const data = join(home.path, "data");
    const result = await nvkectl(["plugins", "install", argument], { XDG_DATA_HOME: data });

    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.split("\n")[0]).toContain(message);
    expect(result.stderr).not.toContain("EEXIT");
    // plugin-plugins writes its package.json in the data directory before it runs npm or git.
    await expect(readdir(join(data, "nvkectl"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a local directory is pointed at plugins link", async () => {
    await mkdir(join(home.path, "my-plugin"));
    const result = await nvkectl(["plugins", "install", "./my-plugin"]);
    expect(result).toEqual({
      exitCode: 2,
      stdout: "",
      stderr: [
        "error: ./my-plugin is a local path; plugins install takes a package name",
        "why: nvkectl plugins install installs packages from the npm registry only, and never reads a path as a GitHub repository",
        "next: link a plugin you are developing with: nvkectl plugins link ./my-plugin",
        "",
      ].join("\n"),
    });
  });
});

/** Starts nvkectl and SIGKILLs it after `ms`. */
async function killDuring(args: string[], ms: number): Promise<void> {
  const bin = join(import.meta.dirname, "..", "bin", "run.js");
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: home.path,
    env: { PATH: process.env.PATH ?? "", HOME: home.path, XDG_CONFIG_HOME: join(home.path, "xdg") },
    stdio: "ignore",
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  await new Promise((resolve) => setTimeout(resolve, 150 + ms));
  child.kill("SIGKILL");
  await exited;
}

/** What the planted code prints (and exits 42) when a CLI runs it. */
const PLANTED = "planted code ran";

/**
 * Plants, as `user` would, a Node compile cache entry in `shared` (made 0777, theirs) for
 * `victim`: V8 code of another source of the same length, under the victim's CRC-32. Returns
 * the entry's path relative to `shared`.
 */
async function plantCompileCache(victim: string, shared: string, user: { uid: number; gid: number }): Promise<string> {
  const { crc32 } = await import("node:zlib");
  const { execFileSync } = await import("node:child_process");
  const source = await readFile(victim, "utf8");
  // ASCII, so that the CRC-32 Node keeps is that of these bytes, and a length is one in characters.
  expect(Buffer.byteLength(source)).toBe(source.length);
  const payload = `'use strict';if(!globalThis.__compileOnly){process.stdout.write(${JSON.stringify(`${PLANTED}\n`)});process.exit(42)}/*`;
  const theirs = `${payload}${"x".repeat(source.length - payload.length - 2)}*/`;
  const work = join(home.path, "attacker");
  await mkdir(work);
  await writeFile(join(work, "package.json"), '{ "type": "commonjs" }\n');
  await writeFile(join(work, "theirs.js"), theirs);
  // Node names an entry by the file's path and keeps it in a directory named by Node's version:
  // a run of each file with the cache on (their code only compiled, not run) says both.
  const compile = (file: string, dir: string) =>
    execFileSync(process.execPath, [
      "-e",
      `globalThis.__compileOnly = true; require("node:module").enableCompileCache(${JSON.stringify(dir)}); try { require(${JSON.stringify(file)}) } catch {}`,
    ]);
  compile(victim, join(work, "victim-cache"));
  compile(join(work, "theirs.js"), join(work, "their-cache"));
  const [tag = ""] = await readdir(join(work, "victim-cache"));
  const entryOf = async (dir: string, text: string) => {
    for (const entry of await readdir(join(dir, tag))) {
      const bytes = await readFile(join(dir, tag, entry));
      if (bytes.readUInt32LE(12) === crc32(text)) return { entry, bytes };
    }
    throw new Error(`no compile cache entry in ${dir} for the source`);
  };
  const victimEntry = await entryOf(join(work, "victim-cache"), source);
  const theirEntry = await entryOf(join(work, "their-cache"), theirs);
  theirEntry.bytes.writeUInt32LE(crc32(source), 12);
  await mkdir(join(shared, tag), { recursive: true });
  const planted = join(tag, victimEntry.entry);
  await writeFile(join(shared, planted), theirEntry.bytes);
  for (const [path, mode] of [
    [shared, 0o777],
    [join(shared, tag), 0o777],
    [join(shared, planted), 0o666],
  ] as const) {
    await chown(path, user.uid, user.gid);
    await chmod(path, mode);
  }
  return planted;
}

/** Every entry under `dir` with its owner, mode and content. */
async function snapshot(dir: string): Promise<string[]> {
  const entries = (await readdir(dir, { recursive: true })).map(String).sort();
  const described = [];
  for (const entry of entries) {
    const info = await lstat(join(dir, entry));
    const content = info.isFile() ? (await readFile(join(dir, entry))).toString("base64") : "";
    described.push(`${entry} ${info.uid} ${(info.mode & 0o7777).toString(8)} ${content}`);
  }
  return [...entries, ...described];
}
