import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { isUserError } from "@nodekit/errors";
import { binaries } from "@nodekit/testenv";
import { load } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLOUD_INIT_UNIT,
  type CloudInitRequest,
  cloudInitFor,
  cloudInitProblems,
  cloudInitRegisterArgv,
  cloudInitRuncmd,
  systemdQuote,
} from "./cloud-init.ts";

const run = promisify(execFile);
const SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

const request = (over: Partial<CloudInitRequest> = {}): CloudInitRequest => ({
  nrUrl: "https://downloads.example/nr/v0.1.0/nr-linux-x64",
  nrSha256: SHA,
  apiTokenFile: "/etc/nodekit/api-token",
  registerArgs: [
    "--name",
    "pve-node-1",
    "--api-url",
    "https://api.example",
    "--proxmox-credentials",
    "/etc/nodekit/pve.yaml",
  ],
  hasIdentity: true,
  hasApiUrl: true,
  proxmoxCredentials: "/etc/nodekit/pve.yaml",
  skipOperator: false,
  ...over,
});

interface UserData {
  write_files: { path: string; owner: string; permissions: string; content: string }[];
  runcmd: string[];
}
const parse = (text: string) => load(text) as UserData;
/** The unit's command up to the token file's path (nr, then --resume and --break-lock first). */
const UNIT_COMMAND = ["/usr/local/bin/nr", "cluster", "register", "--resume", "--break-lock", "--api-token-file"];
const execStartOf = (unit: string) =>
  unit
    .split("\n")
    .find((line) => line.startsWith("ExecStart="))
    ?.slice(10) ?? "";

/**
 * systemd's reading of an ExecStart= line, as systemd.syntax(7) and systemd.service(5) give it:
 * words split on blanks; a word opened by a double or single quote runs to the matching quote,
 * with C escapes (\\, \", \n, \t, \xNN) inside; `%%` is `%`, `$$` is `$` (a lone `$` or `%` would
 * be substituted). A reference for the test, written from the man pages, not from the code under test.
 */
function systemdWords(line: string): string[] {
  const words: string[] = [];
  let i = 0;
  const protect = (text: string) =>
    text
      .replaceAll("%%", "\u0001")
      .replaceAll("$$", "\u0002")
      .replace(/[%$]/g, (c) => {
        throw new Error(`unescaped ${c} would be substituted by systemd`);
      });
  const restore = (text: string) => text.replaceAll("\u0001", "%").replaceAll("\u0002", "$");
  while (i < line.length) {
    while (line[i] === " ") i++;
    if (i >= line.length) break;
    let word = "";
    if (line[i] === '"' || line[i] === "'") {
      const quote = line[i];
      i++;
      while (i < line.length && line[i] !== quote) {
        if (line[i] === "\\") {
          const next = line[i + 1];
          if (next === "n") word += "\n";
          else if (next === "t") word += "\t";
          else if (next === "x") {
            word += String.fromCharCode(Number.parseInt(line.slice(i + 2, i + 4), 16));
            i += 2;
          } else word += next;
          i += 2;
        } else word += line[i++];
      }
      if (line[i] !== quote) throw new Error("unterminated quote");
      i++;
      if (i < line.length && line[i] !== " ") throw new Error("a quote must end its word");
    } else {
      while (i < line.length && line[i] !== " ") {
        if (line[i] === "\\" || line[i] === '"' || line[i] === "'") throw new Error(`unquoted ${line[i]}`);
        word += line[i++];
      }
    }
    words.push(restore(protect(word)));
  }
  return words;
}

describe("the user-data nr cluster register --print-cloud-init writes", () => {
  it("is #cloud-config with a oneshot unit retried until it succeeds and a runcmd that downloads, checks and starts", () => {
    const text = cloudInitFor(request());
    expect(text.startsWith("#cloud-config\n")).toBe(true);
    const doc = parse(text);
    expect(doc.write_files).toHaveLength(1);
    const [unit] = doc.write_files;
    expect(unit?.path).toBe(`/etc/systemd/system/${CLOUD_INIT_UNIT}`);
    expect(unit?.permissions).toBe("0644");
    expect(unit?.content).toContain("Type=oneshot\n");
    expect(unit?.content).toContain("Restart=on-failure\n");
    expect(unit?.content).toContain("RestartSec=30s\n");
    expect(unit?.content).toContain("StartLimitIntervalSec=0\n");
    expect(systemdWords(execStartOf(unit?.content ?? ""))).toEqual([
      ...UNIT_COMMAND,
      "/etc/nodekit/api-token",
      ...request().registerArgs,
    ]);
    expect(doc.runcmd).toHaveLength(1);
    expect(doc.runcmd[0]).toMatch(
      /^curl --fail .*--retry 10 .* && echo .* \| sha256sum --check --strict --quiet - && install -m 0755 /,
    );
    expect(doc.runcmd[0]).toContain(`systemctl enable --now --no-block ${CLOUD_INIT_UNIT}`);
  });

  it("holds no secret: the token and the Proxmox credentials are paths on the VM", () => {
    const text = cloudInitFor(request());
    expect(text).toContain("--api-token-file /etc/nodekit/api-token");
    expect(text).toContain("--proxmox-credentials /etc/nodekit/pve.yaml");
    expect(text).not.toMatch(/token:|tokenSecret|NR_API_TOKEN=|NR_PROXMOX_TOKEN_SECRET/);
  });

  it("quotes every value for systemd: blanks, quotes, backslashes, $ and % reach nr as they were given", () => {
    const hostile = [
      "--name",
      `pve "node" 1`,
      "--offload-namespace",
      "a$HOME%n;b",
      "--api-url",
      "https://x/\\y",
      "--kubeconfig",
      "it's\ttabbed\nline",
    ];
    const unit = parse(cloudInitFor(request({ registerArgs: hostile }))).write_files[0]?.content ?? "";
    // One line: a newline in a value cannot start another directive.
    expect(unit.split("\n").filter((line) => line.startsWith("ExecStart="))).toHaveLength(1);
    expect(systemdWords(execStartOf(unit)).slice(7)).toEqual(hostile);
    expect(systemdQuote("plain-word_1.2/x:y=z")).toBe("plain-word_1.2/x:y=z");
    expect(systemdQuote("50%")).toBe("50%%");
    expect(systemdQuote("$X")).toBe('"$$X"');
    expect(systemdQuote(";")).toBe('";"');
  });

  it("quotes the URL for the shell: run by sh, each program gets exactly its arguments, and a digest mismatch stops the chain", async () => {
    const url = "https://downloads.example/nr?v=1&x='$(touch /tmp/pwned)'`id` ; echo";
    const line = cloudInitRuncmd({ nrUrl: url, nrSha256: SHA, apiTokenFile: "/t", registerArgs: [] });
    // Every program of the chain is a shell function that records its argv; sha256sum reads its
    // check line from standard input and passes or fails as the test says.
    const stubs = (digestOk: boolean) =>
      [
        `curl() { printf 'curl'; printf ' <%s>' "$@"; echo; }`,
        `sha256sum() { read -r sum file; echo "sha256sum <$sum> <$file> $*"; return ${digestOk ? 0 : 1}; }`,
        `install() { echo "install $*"; }`,
        `rm() { echo "rm $*"; }`,
        `systemctl() { echo "systemctl $*"; }`,
      ].join("\n");
    const ok = await run("sh", ["-c", `${stubs(true)}\n${line}`]);
    const lines = ok.stdout.trim().split("\n");
    expect(lines[0]).toBe(
      `curl <--fail> <--silent> <--show-error> <--location> <--retry> <10> <--retry-delay> <5> <--retry-connrefused> <--output> </usr/local/bin/nr.download> <${url}>`,
    );
    expect(lines.slice(1)).toEqual([
      `sha256sum <${SHA}> </usr/local/bin/nr.download> --check --strict --quiet -`,
      "install -m 0755 /usr/local/bin/nr.download /usr/local/bin/nr",
      "rm -f /usr/local/bin/nr.download",
      "systemctl daemon-reload",
      `systemctl enable --now --no-block ${CLOUD_INIT_UNIT}`,
    ]);
    const refused = await run("sh", ["-c", `${stubs(false)}\n${line}; echo "exit $?"`]);
    expect(refused.stdout).not.toContain("install ");
    expect(refused.stdout).not.toContain("systemctl");
    expect(refused.stdout.trim().split("\n").at(-1)).toBe("exit 1");
  });

  it("lowercases the digest as sha256sum prints it", () => {
    expect(cloudInitFor(request({ nrSha256: SHA.toUpperCase() }))).toContain(`${SHA}  /usr/local/bin/nr.download`);
  });

  it("refuses missing or malformed inputs, naming each flag, never quoting a token given as the file", () => {
    const token = "nrt_live_0123456789abcdef";
    const problems = cloudInitProblems(
      request({
        nrUrl: "ftp://x/nr",
        nrSha256: "abc",
        apiTokenFile: token,
        hasIdentity: false,
        hasApiUrl: false,
        proxmoxCredentials: "-",
      }),
    );
    expect(problems.map((p) => p.source)).toEqual([
      "--nr-url",
      "--nr-sha256",
      "--api-token-file",
      "--api-url",
      "--name",
      "--proxmox-credentials",
    ]);
    expect(JSON.stringify(problems)).not.toContain(token);
    const missing = cloudInitProblems(request({ nrUrl: undefined, nrSha256: undefined, apiTokenFile: undefined }));
    expect(missing.map((p) => p.source)).toEqual(["--nr-url", "--nr-sha256", "--api-token-file"]);
    expect(cloudInitProblems(request({ nrUrl: "https://user:pw@downloads.example/nr" }))[0]?.message).toMatch(
      /credentials/,
    );
    expect(cloudInitProblems(request({ proxmoxCredentials: undefined }))[0]?.source).toBe("--proxmox-credentials");
    expect(cloudInitProblems(request({ proxmoxCredentials: undefined, skipOperator: true }))).toEqual([]);
    let thrown: unknown;
    try {
      cloudInitFor(request({ nrSha256: "abc" }));
    } catch (error) {
      thrown = error;
    }
    expect(isUserError(thrown) && thrown.code).toBe("CLOUD_INIT_INPUT_INVALID");
    expect(isUserError(thrown) && thrown.exitCode).toBe(2);
  });

  it("the unit's command is nr cluster register --resume with the token file first", () => {
    expect(
      cloudInitRegisterArgv({ nrUrl: "", nrSha256: SHA, apiTokenFile: "/t", registerArgs: ["--offline"] }),
    ).toEqual([...UNIT_COMMAND, "/t", "--offline"]);
  });
});

// cloud-init's own schema check (Debian's package, unpacked without root by
// tooling/cloud-init-testbin/ensure.sh; the test runner hands its directory on in NODEKIT_CLOUD_INIT_BIN_DIR).
describe("cloud-init schema accepts the user-data", () => {
  let dir: string;
  let cloudInit: string;
  beforeAll(async () => {
    cloudInit = join(await binaries("cloud-init"), "cloud-init");
    dir = await mkdtemp(join(tmpdir(), "nr-cloud-init-"));
  }, 120_000);
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  const schema = async (name: string, text: string) => {
    const file = join(dir, name);
    await writeFile(file, text);
    try {
      const { stdout, stderr } = await run(cloudInit, ["schema", "--config-file", file]);
      return { valid: true, output: `${stdout}${stderr}` };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { valid: false, output: `exit ${failed.code}: ${failed.stdout ?? ""}${failed.stderr ?? ""}` };
    }
  };

  it("for a few flag combinations", async () => {
    const combinations: CloudInitRequest[] = [
      request(),
      request({
        registerArgs: [
          "--agent-id",
          "a-123",
          "--api-url",
          "https://api.example",
          "--skip-operator-install",
          "--offline",
        ],
        proxmoxCredentials: undefined,
        skipOperator: true,
      }),
      request({
        registerArgs: [
          "--name",
          `pve "node" 1 $HOME 50%`,
          "--api-url",
          "https://api.example",
          "--offload-namespace",
          "team-a",
          "--offload-namespace",
          "team-b",
          "--ignore-precheck",
          "port-179-tcp",
          "--pod-cidr",
          "10.50.0.0/16",
          "--proxmox-credentials",
          "/etc/nodekit/pve.yaml",
          "--timeout",
          "20m",
        ],
        nrUrl: "http://10.0.0.5:8080/nr?arch=x64&v='1'",
      }),
    ];
    for (const [index, combination] of combinations.entries()) {
      const result = await schema(`user-data-${index}.yaml`, cloudInitFor(combination));
      expect(result, result.output).toMatchObject({ valid: true });
      expect(result.output).toMatch(/Valid cloud-config/);
    }
  }, 120_000);

  it("and reports an invalid document invalid (the check can fail)", async () => {
    const broken = cloudInitFor(request()).replace("runcmd:\n  - ", "runcmd: ");
    expect(broken).not.toBe(cloudInitFor(request()));
    const result = await schema("broken.yaml", broken);
    expect(result.valid).toBe(false);
    expect(result.output).toMatch(/runcmd/);
    const wrongKey = await schema("wrong.yaml", "#cloud-config\nwrite_files:\n  - path: /x\n    permissions: 644\n");
    expect(wrongKey.valid).toBe(false);
  }, 120_000);
});
