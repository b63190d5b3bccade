import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";
import { systemReason } from "./http.ts";

/** What to download: a URL and the sha256 it must hash to (a `RequiredArtifact` from `@nodekit/version-pins` is one). */
export interface DownloadSpec {
  url: string;
  /** Lower-case hex sha256 of the whole file. */
  sha256: string;
  /** The size in bytes, when known: a file of another size is refused. */
  size?: number;
  /** For messages: `helm v3.18.6 (amd64)`. The URL's file name when left out. */
  label?: string;
}

export interface DownloadOptions {
  /** The transport (default: the global fetch). No credentials are ever sent with a download. */
  fetch?: typeof globalThis.fetch;
  /** Deadline for the response headers (default 30 s). */
  timeoutMs?: number;
  /** A body that sends nothing for this long is abandoned (default 30 s). */
  stallTimeoutMs?: number;
  /** Called as bytes arrive: `total` is the Content-Length (or `size`), when known. */
  onProgress?: (received: number, total: number | undefined) => void;
}

export interface Downloaded {
  path: string;
  sha256: string;
  bytes: number;
}

/**
 * Downloads `spec.url` to `destination`, hashing while streaming, and keeps the file only
 * when its sha256 is `spec.sha256`: the bytes go to a temporary file beside the
 * destination, which is renamed into place after the digest matched and removed otherwise.
 * A digest mismatch is DOWNLOAD_DIGEST_MISMATCH, a body that ends early
 * DOWNLOAD_TRUNCATED, anything else on the way DOWNLOAD_FAILED (or DOWNLOAD_WRITE_FAILED
 * for the local file). Nothing is left behind on failure.
 */
export async function downloadArtifact(
  spec: DownloadSpec,
  destination: string,
  options: DownloadOptions = {},
): Promise<Downloaded> {
  const fetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const stallMs = options.stallTimeoutMs ?? 30_000;
  const label = spec.label ?? basename(new URL(spec.url).pathname);
  const expected = spec.sha256.toLowerCase();
  const controller = new AbortController();
  const fail = (message: string, why?: string) =>
    new UserError(errorCodes.DOWNLOAD_FAILED, message, {
      ...(why === undefined ? {} : { why }),
      next: ["retry; nothing was kept", "check that this machine can reach the download's host"],
      facts: { url: spec.url },
    });

  let response: Response;
  const headersTimer = setTimeout(() => controller.abort(new DOMException("headers", "TimeoutError")), timeoutMs);
  try {
    response = await fetch(spec.url, { signal: controller.signal, redirect: "follow", headers: { accept: "*/*" } });
  } catch (error) {
    throw controller.signal.aborted
      ? fail(`the download of ${label} from ${spec.url} did not start within ${timeoutMs} ms`)
      : fail(`cannot download ${label} from ${spec.url}: ${systemReason(error)}`);
  } finally {
    clearTimeout(headersTimer);
  }
  if (!response.ok || response.body === null) {
    await response.body?.cancel().catch(() => {});
    throw fail(
      `the download of ${label} from ${spec.url} answered HTTP ${response.status}`,
      "the file is not at the pinned URL, or the server refused it",
    );
  }
  const lengthHeader = response.headers.get("content-length");
  const declared = lengthHeader !== null && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
  const total = spec.size ?? declared;
  if (spec.size !== undefined && declared !== undefined && declared !== spec.size) {
    await response.body.cancel().catch(() => {});
    throw new UserError(
      errorCodes.DOWNLOAD_DIGEST_MISMATCH,
      `the download of ${label} from ${spec.url} is ${declared} bytes, not the pinned ${spec.size}; nothing was kept`,
      {
        why: "the file at that URL is not the one the pins name",
        next: "retry later; if it persists, report it: the file at the source may have been replaced",
        facts: { url: spec.url },
      },
    );
  }

  const hash = createHash("sha256");
  let received = 0;
  let stalled = false;
  let stallTimer: NodeJS.Timeout | undefined;
  const armStall = () => {
    clearTimeout(stallTimer);
    stallTimer = setTimeout(() => {
      stalled = true;
      controller.abort(new DOMException("stalled", "TimeoutError"));
    }, stallMs);
  };
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      received += chunk.length;
      hash.update(chunk);
      armStall();
      options.onProgress?.(received, total);
      done(null, chunk);
    },
  });
  const temporary = join(dirname(destination), `.${basename(destination)}.${randomBytes(6).toString("hex")}.partial`);
  let writeError: unknown;
  const file = createWriteStream(temporary, { mode: 0o600 });
  // pipeline() also destroys the file stream with a failure of the body: only the file system's own errors count here.
  file.on("error", (error: NodeJS.ErrnoException) => {
    if (error.syscall !== undefined) writeError = error;
  });
  armStall();
  try {
    await pipeline(Readable.fromWeb(response.body as import("node:stream/web").ReadableStream), meter, file, {
      signal: controller.signal,
    });
  } catch (error) {
    await rm(temporary, { force: true });
    if (writeError !== undefined) {
      throw new UserError(
        errorCodes.DOWNLOAD_WRITE_FAILED,
        `cannot write the download of ${label} to ${dirname(destination)}: ${systemReason(writeError)}`,
        {
          next: "check that the directory exists, is writable, and that the disk has room",
          facts: { path: destination },
        },
      );
    }
    if (stalled)
      throw fail(
        `the download of ${label} from ${spec.url} stalled after ${received} bytes (nothing for ${stallMs} ms)`,
      );
    throw truncated(spec, label, received, total, systemReason(error));
  } finally {
    clearTimeout(stallTimer);
  }
  if (total !== undefined && received !== total) {
    await rm(temporary, { force: true });
    throw truncated(spec, label, received, total);
  }
  const actual = hash.digest("hex");
  if (actual !== expected) {
    await rm(temporary, { force: true });
    throw new UserError(
      errorCodes.DOWNLOAD_DIGEST_MISMATCH,
      `the download of ${label} from ${spec.url} does not match its pinned digest; nothing was kept`,
      {
        why: `expected sha256 ${expected}, got ${actual}: the file was changed at the source or on the way`,
        next: "retry later; if it persists, report it: do not install this file by hand",
        facts: { url: spec.url, expected, actual },
      },
    );
  }
  try {
    await rename(temporary, destination);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new UserError(
      errorCodes.DOWNLOAD_WRITE_FAILED,
      `cannot move the download of ${label} into ${destination}: ${systemReason(error)}`,
      {
        next: "check that the directory is writable",
        facts: { path: destination },
      },
    );
  }
  return { path: destination, sha256: actual, bytes: received };
}

function truncated(
  spec: DownloadSpec,
  label: string,
  received: number,
  total: number | undefined,
  reason?: string,
): UserError {
  return new UserError(
    errorCodes.DOWNLOAD_TRUNCATED,
    `the download of ${label} from ${spec.url} ended after ${received}${total === undefined ? "" : ` of ${total}`} bytes; nothing was kept`,
    {
      ...(reason === undefined ? {} : { why: `the connection ended early: ${reason}` }),
      next: "retry the download",
      facts: { url: spec.url, received, ...(total === undefined ? {} : { total }) },
    },
  );
}
