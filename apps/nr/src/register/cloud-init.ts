import { invalidInput, type Problem } from "@nodekit/errors";
import { shellQuote } from "@nodekit/process";
import { dump } from "js-yaml";
import { errorCodes } from "../errors.ts";

/**
 * `nr cluster register --print-cloud-init`: cloud-init user-data that turns a fresh VM into a
 * NodeRings agent on first boot. Pure: inputs in, one `#cloud-config` document out; nothing is
 * read or written here.
 *
 * What the document does (cloud-init's module order: write_files in the init stage, runcmd's
 * script in the final stage: cloud-init docs, reference/modules):
 *
 * - write_files: a systemd unit (Type=oneshot, Restart=on-failure) running
 *   `nr cluster register --resume --break-lock --api-token-file PATH ...`, enabled so that a
 *   reboot mid-registration resumes it too. `--resume` on a machine with no state starts from the
 *   first phase; after a failure it continues; after success it re-checks and changes nothing.
 *   `--break-lock` clears only a lock whose run is gone (a power cut), never a live run's.
 * - runcmd: one `&&` chain (cloud-init's runcmd script has no `set -e`): curl with retries into a
 *   temporary file, `sha256sum --check` against the given digest, `install -m 0755`, then
 *   `systemctl enable --now --no-block` (cloud-init's final stage does not wait for the
 *   registration).
 *
 * Secrets: the API token is referenced by its path on the VM (the operator's own cloud-init or
 * secret mechanism puts it there); the Proxmox credentials likewise (--proxmox-credentials PATH).
 * No secret value is an input to this function.
 */

interface CloudInitInput {
  /** Where the VM downloads the nr executable from (http or https). */
  nrUrl: string;
  /** The executable's SHA-256, 64 hex digits. */
  nrSha256: string;
  /** Absolute path on the VM of the file holding the API token (never the token). */
  apiTokenFile: string;
  /**
   * The registration's own flags, as argv words (`["--name", "pve-node-1", ...]`), passed to
   * the unit's `nr cluster register --resume` as they are.
   */
  registerArgs: readonly string[];
}

/** Where the user-data installs nr, and the unit's name. */
const CLOUD_INIT_NR_PATH = "/usr/local/bin/nr";
export const CLOUD_INIT_UNIT = "nr-register.service";
/** How long systemd waits before it runs a failed registration again. */
const CLOUD_INIT_RESTART_SEC = "30s";

/** What `--print-cloud-init` was given, before it is checked. */
export interface CloudInitRequest {
  nrUrl: string | undefined;
  nrSha256: string | undefined;
  apiTokenFile: string | undefined;
  registerArgs: readonly string[];
  /** --name or --agent-id was given (the unit cannot ask). */
  hasIdentity: boolean;
  /** --api-url was given (a fresh VM has no config file to find it in). */
  hasApiUrl: boolean;
  proxmoxCredentials: string | undefined;
  skipOperator: boolean;
}

const SHA256 = /^[0-9a-fA-F]{64}$/;
const hasControl = (text: string) => [...text].some((char) => (char.codePointAt(0) ?? 0) < 0x20 || char === "\x7f");
const absolutePath = (path: string) => path.startsWith("/") && !hasControl(path);

/**
 * Every problem with a request, each naming its flag (empty: fine). Never quotes a value that may
 * be a secret (a token given where the token file's path belongs).
 */
export function cloudInitProblems(request: CloudInitRequest): Problem[] {
  const problems: Problem[] = [];
  const problem = (flag: string, message: string) => problems.push({ severity: "error", source: flag, message });
  if (request.nrUrl === undefined) {
    problem("--nr-url", "is required: where the VM downloads the nr executable from (a release's download URL)");
  } else {
    let url: URL | undefined;
    try {
      url = new URL(request.nrUrl);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
      problem("--nr-url", "must be an http or https URL");
    } else if (url.username !== "" || url.password !== "") {
      problem(
        "--nr-url",
        "must not hold credentials (user:password@): user-data is readable on the VM and by the cloud",
      );
    }
  }
  if (request.nrSha256 === undefined) {
    problem("--nr-sha256", "is required: the executable's SHA-256, from the release's checksums");
  } else if (!SHA256.test(request.nrSha256)) {
    problem("--nr-sha256", "must be a SHA-256: 64 hexadecimal digits");
  }
  if (request.apiTokenFile === undefined) {
    problem(
      "--api-token-file",
      "is required: the path on the VM where your cloud-init or secret agent puts the API token",
    );
  } else if (!absolutePath(request.apiTokenFile)) {
    problem("--api-token-file", "must be an absolute path on the VM (the file that holds the token, never the token)");
  }
  if (!request.hasApiUrl) problem("--api-url", "is required: a fresh VM has no ~/.nr/config.yaml to find it in");
  if (!request.hasIdentity) problem("--name", "is required (or --agent-id): the unit cannot ask for the agent's name");
  if (request.proxmoxCredentials === undefined) {
    if (!request.skipOperator) {
      problem(
        "--proxmox-credentials",
        "is required (or --skip-operator-install): the path on the VM of the Proxmox credentials file your cloud-init or secret agent provides; the unit cannot prompt",
      );
    }
  } else if (!absolutePath(request.proxmoxCredentials)) {
    problem("--proxmox-credentials", "must be an absolute path on the VM (standard input is not the unit's)");
  }
  if (request.registerArgs.some((arg) => arg.includes("\0"))) problem("argv", "a flag's value holds a NUL character");
  return problems;
}

/** The user-data for a request, or CLOUD_INIT_INPUT_INVALID listing every problem. */
export function cloudInitFor(request: CloudInitRequest): string {
  const problems = cloudInitProblems(request);
  if (problems.length > 0 || request.nrUrl === undefined || request.nrSha256 === undefined) {
    throw invalidInput(
      errorCodes.CLOUD_INIT_INPUT_INVALID,
      "nr cluster register --print-cloud-init",
      problems,
      "see nr cluster register --help and docs/fleets.md",
      "nothing was printed",
    );
  }
  return cloudInitUserData({
    nrUrl: request.nrUrl,
    nrSha256: request.nrSha256,
    apiTokenFile: request.apiTokenFile ?? "",
    registerArgs: request.registerArgs,
  });
}

/**
 * Quotes one word of a systemd ExecStart= line (systemd.syntax(7), "Quoting"; systemd.service(5),
 * "Command lines"): a word of plain characters as it is; else in double quotes, with `\` and `"`
 * escaped and control characters as C escapes. `$` is doubled everywhere (systemd substitutes
 * environment variables in ExecStart=, even in quotes) and `%` too (unit specifiers).
 */
export function systemdQuote(word: string): string {
  const literal = word.replaceAll("%", "%%").replaceAll("$", "$$$$");
  if (/^[A-Za-z0-9_@+=:,./%-]+$/.test(literal) && !literal.startsWith("@") && literal !== ";") return literal;
  let quoted = "";
  for (const char of literal) {
    const code = char.codePointAt(0) ?? 0;
    if (char === "\\") quoted += "\\\\";
    else if (char === '"') quoted += '\\"';
    else if (char === "\n") quoted += "\\n";
    else if (char === "\t") quoted += "\\t";
    else if (code < 0x20 || code === 0x7f) quoted += `\\x${code.toString(16).padStart(2, "0")}`;
    else quoted += char;
  }
  return `"${quoted}"`;
}

/** The unit's ExecStart= command, as argv words (before quoting). */
export function cloudInitRegisterArgv(input: CloudInitInput): string[] {
  return [
    CLOUD_INIT_NR_PATH,
    "cluster",
    "register",
    "--resume",
    "--break-lock",
    "--api-token-file",
    input.apiTokenFile,
    ...input.registerArgs,
  ];
}

/** The systemd unit the user-data writes. */
function cloudInitUnit(input: CloudInitInput): string {
  const execStart = cloudInitRegisterArgv(input).map(systemdQuote).join(" ");
  return [
    "[Unit]",
    "Description=Register this machine as a NodeRings agent (nr cluster register --resume)",
    "Wants=network-online.target",
    "After=network-online.target",
    // Retried until it succeeds: no start limit.
    "StartLimitIntervalSec=0",
    "",
    "[Service]",
    "Type=oneshot",
    "RemainAfterExit=yes",
    `ExecStart=${execStart}`,
    "Restart=on-failure",
    `RestartSec=${CLOUD_INIT_RESTART_SEC}`,
    // nr's run log and state go to ~/.nr; systemd sets HOME only with User=.
    "Environment=HOME=/root",
    // nr prints its progress for a terminal; the journal keeps every line.
    "StandardOutput=journal",
    "StandardError=journal",
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    "",
  ].join("\n");
}

/** The runcmd entry: download, check, install, start. One `&&` chain (runcmd's script has no `set -e`). */
export function cloudInitRuncmd(input: CloudInitInput): string {
  const download = `${CLOUD_INIT_NR_PATH}.download`;
  const sha256 = input.nrSha256.toLowerCase();
  return [
    `curl --fail --silent --show-error --location --retry 10 --retry-delay 5 --retry-connrefused --output ${download} ${shellQuote(input.nrUrl)}`,
    `echo ${shellQuote(`${sha256}  ${download}`)} | sha256sum --check --strict --quiet -`,
    `install -m 0755 ${download} ${CLOUD_INIT_NR_PATH}`,
    `rm -f ${download}`,
    "systemctl daemon-reload",
    `systemctl enable --now --no-block ${CLOUD_INIT_UNIT}`,
  ].join(" && ");
}

/** The user-data document (`#cloud-config` first, as cloud-init requires). Check `cloudInitProblems` first. */
function cloudInitUserData(input: CloudInitInput): string {
  const config = {
    write_files: [
      {
        path: `/etc/systemd/system/${CLOUD_INIT_UNIT}`,
        owner: "root:root",
        permissions: "0644",
        content: cloudInitUnit(input),
      },
    ],
    runcmd: [cloudInitRuncmd(input)],
  };
  return `#cloud-config\n${dump(config, { lineWidth: -1, noRefs: true })}`;
}
