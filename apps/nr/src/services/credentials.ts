import { parseYamlWith, readInputFile, readInputStream } from "@nodekit/documents";
import { invalidInput, type Problem, UserError } from "@nodekit/errors";
import * as z from "zod";
import { errorCodes } from "../errors.ts";

/**
 * What the Proxmox operator needs to reach Proxmox VE: the API URL, an API token id
 * (`user@realm!name`) and its secret. They are written only into a Kubernetes Secret in
 * the local cluster; the secret is registered with the redactor the moment it is read.
 */
export interface ProxmoxCredentials {
  url: string;
  tokenId: string;
  tokenSecret: string;
  /** Where they came from, for messages ("file /root/pve.yaml", "environment", "prompt"). */
  source: string;
}

const TOKEN_ID = /^[^@\s!]+@[^@\s!]+![A-Za-z][A-Za-z0-9._-]*$/;

const CredentialsSchema = z.strictObject({
  url: z.url({ error: "must be the Proxmox VE API URL, e.g. https://pve.example:8006/api2/json" }),
  tokenId: z.string().regex(TOKEN_ID, "must be an API token id such as root@pam!nr"),
  tokenSecret: z.string().min(1, "must not be empty"),
});

export interface CredentialsOptions {
  /** `--proxmox-credentials FILE` (YAML: url, tokenId, tokenSecret), or `-` for standard input. */
  file?: string | undefined;
  /** `--proxmox-url`, `--proxmox-token-id`: not secrets, so they may come from flags. */
  url?: string | undefined;
  tokenId?: string | undefined;
  env?: NodeJS.ProcessEnv;
  readStdin?: () => Promise<string>;
  /** Asks on the terminal (the secret without echo); undefined when there is no terminal. */
  prompt?: ((question: { message: string; secret: boolean }) => Promise<string>) | undefined;
  /** Called with the secret as soon as it is known, before anything can print it. */
  onSecret: (secret: string) => void;
}

/** Standard input, never more than 8 MiB of it (INPUT_TOO_LARGE). */
const readStdin = async () => (await readInputStream(process.stdin, { source: "standard input" })).toString("utf8");

/**
 * The credentials, from (in order) a file or standard input, the environment
 * (NR_PROXMOX_URL, NR_PROXMOX_TOKEN_ID, NR_PROXMOX_TOKEN_SECRET, with the URL and token id
 * also from flags), or a prompt on a terminal. Never from a flag's value for the secret.
 * Problems never quote the secret.
 */
export async function readProxmoxCredentials(options: CredentialsOptions): Promise<ProxmoxCredentials> {
  const env = options.env ?? process.env;
  if (options.file !== undefined) {
    const fromStdin = options.file === "-";
    const source = fromStdin ? "standard input" : options.file;
    let text: string;
    try {
      text = fromStdin
        ? await (options.readStdin ?? readStdin)()
        : (await readInputFile(options.file, { what: "the Proxmox credentials file" })).toString("utf8");
    } catch (error) {
      if (error instanceof UserError) throw error;
      throw new UserError(
        errorCodes.PROXMOX_CREDENTIALS_MISSING,
        `cannot read the Proxmox credentials from ${source}`,
        {
          why: (error as NodeJS.ErrnoException).code ?? String(error),
          next: "give a readable file with url, tokenId and tokenSecret",
        },
      );
    }
    // Register the secret before validating: a problem must never be able to show it.
    const secretLine = /^\s*tokenSecret\s*:\s*["']?([^"'\n]+)/m.exec(text)?.[1]?.trim();
    if (secretLine) options.onSecret(secretLine);
    const parsed = parseYamlWith(CredentialsSchema, text, { source });
    if (parsed.value === undefined) {
      const problems = parsed.problems.map((p) => (p.path?.[0] === "tokenSecret" ? { ...p, value: undefined } : p));
      throw invalidInput(errorCodes.PROXMOX_CREDENTIALS_INVALID, source, problems as Problem[], [
        `fix ${source}: it holds url, tokenId and tokenSecret`,
      ]);
    }
    options.onSecret(parsed.value.tokenSecret);
    return { ...parsed.value, source: fromStdin ? "standard input" : `file ${options.file}` };
  }

  const secretFromEnv = env.NR_PROXMOX_TOKEN_SECRET;
  if (secretFromEnv) options.onSecret(secretFromEnv);
  let url = options.url ?? env.NR_PROXMOX_URL;
  let tokenId = options.tokenId ?? env.NR_PROXMOX_TOKEN_ID;
  let tokenSecret = secretFromEnv;
  let source = "environment";
  if (url === undefined || tokenId === undefined || tokenSecret === undefined) {
    if (options.prompt === undefined) {
      const missing = [
        url === undefined ? "the URL (--proxmox-url or NR_PROXMOX_URL)" : undefined,
        tokenId === undefined ? "the API token id (--proxmox-token-id or NR_PROXMOX_TOKEN_ID)" : undefined,
        tokenSecret === undefined ? "the API token secret (NR_PROXMOX_TOKEN_SECRET)" : undefined,
      ].filter((entry) => entry !== undefined);
      throw new UserError(errorCodes.PROXMOX_CREDENTIALS_MISSING, "the operator phase needs Proxmox credentials", {
        why: `missing: ${missing.join(", ")}; there is no terminal to ask on`,
        next: [
          "give them in a file (url, tokenId, tokenSecret) with --proxmox-credentials FILE, or - for standard input",
          "or in NR_PROXMOX_URL, NR_PROXMOX_TOKEN_ID and NR_PROXMOX_TOKEN_SECRET",
          "or skip the operator for now with --skip-operator-install (VMs cannot be sold until it runs)",
        ],
      });
    }
    source = "prompt";
    url ??= await options.prompt({ message: "Proxmox VE API URL (https://host:8006/api2/json)", secret: false });
    tokenId ??= await options.prompt({ message: "Proxmox API token id (user@realm!name)", secret: false });
    if (tokenSecret === undefined) {
      tokenSecret = await options.prompt({ message: `Secret of API token ${tokenId}`, secret: true });
      if (tokenSecret) options.onSecret(tokenSecret);
    }
  }
  const checked = CredentialsSchema.safeParse({ url, tokenId, tokenSecret });
  if (!checked.success) {
    const problems: Problem[] = checked.error.issues.map((issue) => ({
      severity: "error",
      source,
      path: issue.path.map(String),
      message: issue.message,
    }));
    throw invalidInput(errorCodes.PROXMOX_CREDENTIALS_INVALID, `the Proxmox credentials from the ${source}`, problems);
  }
  return { ...checked.data, source };
}

/** A prompt on the terminal (the secret masked), or undefined when stdin or stderr is not one. */
export function terminalPrompt(): CredentialsOptions["prompt"] {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  return async ({ message, secret }) => {
    const output = process.stderr;
    if (secret) {
      const { default: password } = await import("@inquirer/password");
      return password({ message, mask: true }, { output });
    }
    const { default: input } = await import("@inquirer/input");
    return input({ message, required: true }, { output });
  };
}

/** How a Secret's `data` holds a value. */
export const base64 = (value: string) => Buffer.from(value, "utf8").toString("base64");

/**
 * The Secret the operator chart is told to use, by name (never through Helm values), for
 * `kubectl apply --server-side`: a client-side apply would keep a plaintext copy of
 * `stringData` in the `kubectl.kubernetes.io/last-applied-configuration` annotation, which
 * `kubectl get -o yaml`, backups and every reader of metadata see.
 */
export function credentialsSecret(credentials: ProxmoxCredentials, namespace: string, name: string): string {
  return `${JSON.stringify({
    apiVersion: "v1",
    kind: "List",
    items: [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
      {
        apiVersion: "v1",
        kind: "Secret",
        type: "Opaque",
        metadata: { name, namespace, labels: { "app.kubernetes.io/managed-by": "nr" } },
        // `data`, applied server-side: no last-applied-configuration annotation holds a copy.
        data: {
          url: base64(credentials.url),
          tokenId: base64(credentials.tokenId),
          tokenSecret: base64(credentials.tokenSecret),
        },
      },
    ],
  })}\n`;
}
