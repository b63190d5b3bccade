import { cliKitErrorCodes } from "@nodekit/cli-kit";
import { readInputFile } from "@nodekit/documents";
import { UserError } from "@nodekit/errors";
import { errorCodes } from "../errors.ts";

export interface ConnectionFlags {
  /** --request-timeout, in ms. */
  requestTimeoutMs: number | undefined;
  /** --certificate-authority: a PEM file. */
  certificateAuthority: string | undefined;
  /** --timeout of a --wait or --watch: the whole command ends then (plus a grace for a request in flight). */
  commandTimeout: { ms: number; text: string; graceMs: number } | undefined;
  env: Record<string, string | undefined>;
}

export interface ConnectionOptions {
  requestTimeoutMs?: number;
  certificateAuthority?: string;
  maxResponseBytes?: number;
  signal?: AbortSignal;
}

/** The limit on one answer's size can be raised (or lowered) with this variable, in MiB. */
const MAX_RESPONSE_ENV = "NVKECTL_MAX_RESPONSE_MB";

/** The controller client's connection settings from the command line and the environment. */
export async function connectionOptions(flags: ConnectionFlags): Promise<ConnectionOptions> {
  const options: ConnectionOptions = {};
  if (flags.requestTimeoutMs !== undefined) {
    if (flags.requestTimeoutMs <= 0) {
      throw new UserError(cliKitErrorCodes.INVALID_DURATION, "--request-timeout must be longer than 0", {
        next: "give it as a duration such as --request-timeout 30s or 2m",
      });
    }
    options.requestTimeoutMs = flags.requestTimeoutMs;
  }
  if (flags.certificateAuthority !== undefined) {
    options.certificateAuthority = await readCertificateAuthority(flags.certificateAuthority);
  }
  const limit = flags.env[MAX_RESPONSE_ENV];
  if (limit !== undefined && limit !== "") {
    const mib = Number(limit);
    if (!Number.isInteger(mib) || mib < 1) {
      throw new UserError(
        errorCodes.INVALID_SETTING,
        `${MAX_RESPONSE_ENV}=${JSON.stringify(limit)} is not a whole number of MiB`,
        {
          next: `set it to a whole number of MiB, e.g. ${MAX_RESPONSE_ENV}=64, or unset it for the default (32)`,
        },
      );
    }
    options.maxResponseBytes = mib * 1024 * 1024;
  }
  if (flags.commandTimeout !== undefined) {
    const { ms, text, graceMs } = flags.commandTimeout;
    const controller = new AbortController();
    const timer = setTimeout(
      () =>
        controller.abort(
          new UserError(
            errorCodes.WAIT_TIMEOUT,
            `gave up after --timeout ${text}: the NVKE controller did not answer in time`,
            {
              why: "--timeout bounds the whole command, every request to the controller included",
              next: "wait longer with a larger --timeout, or see whether the controller answers at all",
            },
          ),
        ),
      ms + graceMs,
    );
    timer.unref();
    options.signal = controller.signal;
  }
  return options;
}

async function readCertificateAuthority(file: string): Promise<string> {
  let text: string;
  try {
    text = (await readInputFile(file, { what: "--certificate-authority" })).toString("utf8");
  } catch (error) {
    if (error instanceof UserError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UserError(
      code === "ENOENT" ? errorCodes.CA_FILE_NOT_FOUND : errorCodes.CA_FILE_INVALID,
      `--certificate-authority ${file} ${code === "ENOENT" ? "does not exist" : `cannot be read (${code})`}`,
      { next: "name a PEM file holding the certificate authority that signed the controller's certificate" },
    );
  }
  if (!text.includes("-----BEGIN CERTIFICATE-----")) {
    throw new UserError(errorCodes.CA_FILE_INVALID, `--certificate-authority ${file} holds no PEM certificate`, {
      why: 'a PEM file has "-----BEGIN CERTIFICATE-----" blocks; this one has none',
      next: "name the certificate authority's certificate in PEM form (the ca.crt of a kubeconfig's cluster, decoded, is one)",
    });
  }
  return text;
}
