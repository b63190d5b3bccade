import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { type FileHandle, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { Writable } from "node:stream";
import { UserError } from "@nodekit/errors";
import { classifyTransportError, request, type Transport } from "@nodekit/http";
import { isDownloadUrl } from "@nodekit/version-pins";
import { errorCodes } from "./errors.ts";

/** What to download: a URL and the sha256 it must hash to (a `RequiredArtifact` from `@nodekit/version-pins` is one). */
export interface DownloadSpec {
  url: string;
  /** Lower-case hex sha256 of the whole file. */
  sha256: string;
  /** The size in bytes, when known: a file of another size is refused, and no more than this is read. */
  size?: number;
  /** For messages: `helm v3.18.6 (amd64)`. The URL's file name when left out. */
  label?: string;
}

/** The most read of a download whose pin gives no size: far above any companion tool (helm's archive is ≈ 17 MB). */
export const DEFAULT_DOWNLOAD_CEILING_BYTES = 256 * 1024 * 1024;

export interface DownloadOptions {
  /** The connections and the trust for https (default: a fresh transport). No credentials are ever sent with a download. */
  transport?: Transport;
  /** Nothing received for this long, before the answer starts or within its body, abandons it (default 30 s). */
  stallTimeoutMs?: number;
  /** The whole download's deadline (default 1 hour). */
  timeoutMs?: number;
  /** The most read when the pin gives no size (default {@link DEFAULT_DOWNLOAD_CEILING_BYTES}). */
  maxBytes?: number;
  /** Ends the download (Ctrl-C): nothing is kept. */
  signal?: AbortSignal;
  /**
   * A download answered 429, 502, 503 or 504 (or whose connection was lost before its first
   * byte) is asked again after the wait Retry-After names, else a backoff from 500 ms: at most
   * `attempts` times (default 3), while the wait is at most `maxWaitMs` (default 30 s).
   */
  retry?: { attempts?: number; maxWaitMs?: number };
  /** Called as bytes arrive: `total` is the pinned size (or the Content-Length), when known. */
  onProgress?: (received: number, total: number | undefined) => void;
}

export interface Downloaded {
  path: string;
  sha256: string;
  bytes: number;
}

const PIN_RULE =
  "the pins allow https only (plain http only to this machine: 127.0.0.1, ::1, localhost), with no credentials in the URL";

/**
 * Downloads `spec.url` to `destination`, hashing while streaming, and keeps the file only
 * when its sha256 is `spec.sha256`: the bytes go to a temporary file beside the
 * destination, which is renamed into place after the digest matched and removed otherwise.
 * Every redirect hop is held to the pins' URL rule (https; plain http only to loopback). At
 * most the pinned size is read, or the ceiling when the pin gives none. A digest or size
 * mismatch is DOWNLOAD_DIGEST_MISMATCH, a body that ends early DOWNLOAD_TRUNCATED, one past
 * the ceiling DOWNLOAD_TOO_LARGE, anything else on the way DOWNLOAD_FAILED (or
 * DOWNLOAD_WRITE_FAILED for the local file). Nothing is left behind on failure.
 */
export async function downloadArtifact(
  spec: DownloadSpec,
  destination: string,
  options: DownloadOptions = {},
): Promise<Downloaded> {
  const stallMs = options.stallTimeoutMs ?? 30_000;
  const label = spec.label ?? basename(new URL(spec.url).pathname);
  const expected = spec.sha256.toLowerCase();
  const limit = spec.size ?? options.maxBytes ?? DEFAULT_DOWNLOAD_CEILING_BYTES;
  const fail = (message: string, why?: string) =>
    new UserError(errorCodes.DOWNLOAD_FAILED, message, {
      ...(why === undefined ? {} : { why }),
      next: ["retry; nothing was kept", "check that this machine can reach the download's host"],
      facts: { url: spec.url },
    });
  const mismatch = (message: string) =>
    new UserError(errorCodes.DOWNLOAD_DIGEST_MISMATCH, message, {
      why: "the file at that URL is not the one the pins name",
      next: "retry later; if it persists, report it: the file at the source may have been replaced",
      facts: { url: spec.url },
    });
  if (!isDownloadUrl(spec.url)) throw fail(`the download of ${label} from ${spec.url} was not started`, PIN_RULE);

  // A fresh temporary file for each attempt (a retry before the first byte starts over); the
  // last one is the download, every one is removed on failure.
  const temporaries: string[] = [];
  let temporary = "";
  const removeTemporaries = (but?: string) =>
    Promise.all(temporaries.filter((path) => path !== but).map((path) => rm(path, { force: true })));
  let hash = createHash("sha256");
  let received = 0;
  let total: number | undefined;
  let file: FileHandle | undefined;
  let sink: Writable | undefined;
  const writeFailed = (error: unknown) =>
    new UserError(
      errorCodes.DOWNLOAD_WRITE_FAILED,
      `cannot write the download of ${label} to ${dirname(destination)}: ${classifyTransportError(error).reason}`,
      {
        next: "check that the directory exists, is writable, and that the disk has room",
        facts: { path: destination },
      },
    );

  try {
    const answer = await request({
      url: spec.url,
      headers: { accept: "*/*" },
      ...(options.transport === undefined ? {} : { transport: options.transport }),
      timeoutMs: options.timeoutMs ?? 3_600_000,
      stallTimeoutMs: stallMs,
      signal: options.signal,
      retry: { ...options.retry },
      // The digest is over the file as stored: never unpacked on the way.
      decode: false,
      maxBodyBytes: limit,
      redirect: (_from, to) => (isDownloadUrl(to.href) ? true : PIN_RULE),
      sink(head) {
        const length = head.headers["content-length"];
        const declared = length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
        if (spec.size !== undefined && declared !== undefined && declared !== spec.size) {
          throw mismatch(
            `the download of ${label} from ${spec.url} is ${declared} bytes, not the pinned ${spec.size}; nothing was kept`,
          );
        }
        total = spec.size ?? declared;
        temporary = join(dirname(destination), `.${basename(destination)}.${randomBytes(6).toString("hex")}.partial`);
        temporaries.push(temporary);
        const path = temporary;
        hash = createHash("sha256");
        received = 0;
        // The file is opened when the body starts, and closed however the body ends (after a
        // write under way): only the file system's own failure of a live sink is a write failure.
        let ended = false;
        let pending: Promise<unknown> = Promise.resolve();
        const mark = (error: unknown) => (ended ? error : Object.assign(error as Error, { writing: true }));
        sink = new Writable({
          construct(done) {
            open(path, "wx", 0o600).then(
              (handle) => {
                file = handle;
                done();
              },
              (error: unknown) => done(mark(error) as Error),
            );
          },
          write(chunk: Buffer, _encoding, done) {
            const handle = file;
            if (handle === undefined) return done();
            pending = handle.write(chunk).then(
              () => {
                hash.update(chunk);
                received += chunk.length;
                options.onProgress?.(received, total);
                done();
              },
              (error: unknown) => done(mark(error) as Error),
            );
          },
          final(done) {
            const handle = file;
            file = undefined;
            (handle?.close() ?? Promise.resolve()).then(
              () => done(),
              (error: unknown) => done(mark(error) as Error),
            );
          },
          destroy(error, done) {
            ended = true;
            const handle = file;
            file = undefined;
            pending
              .catch(() => {})
              .then(() => handle?.close())
              .then(
                () => done(error),
                () => done(error),
              );
          },
        });
        return sink;
      },
    });
    if (answer.status < 200 || answer.status >= 300) {
      throw fail(
        `the download of ${label} from ${spec.url} answered HTTP ${answer.status}`,
        "the file is not at the pinned URL, or the server refused it",
      );
    }
  } catch (error) {
    // The sink closes its file as it is destroyed (after its open, if that was under way): wait for it.
    if (sink !== undefined && !sink.closed) await once(sink, "close").catch(() => {});
    await removeTemporaries();
    throw downloadFailure(error);
  }

  function downloadFailure(error: unknown): unknown {
    if ((error as { writing?: boolean }).writing === true) return writeFailed(error);
    if (error instanceof UserError && error.code.startsWith("DOWNLOAD_")) return error;
    const failure = classifyTransportError(error);
    switch (failure.class) {
      case "too-large":
        return spec.size !== undefined
          ? mismatch(
              `the download of ${label} from ${spec.url} is larger than the pinned ${spec.size} bytes; nothing was kept`,
            )
          : new UserError(
              errorCodes.DOWNLOAD_TOO_LARGE,
              `the download of ${label} from ${spec.url} is larger than ${limit} bytes, the most read of a download without a pinned size; nothing was kept`,
              {
                why: "a companion tool is a few tens of megabytes: the URL serves something else, or without end",
                next: "check the pins' URL for this tool; if the file really is this large, pin its size",
                facts: { url: spec.url, limitBytes: limit },
              },
            );
      case "timeout":
        if (failure.stage !== "body")
          return fail(`the download of ${label} from ${spec.url} did not start within ${stallMs} ms`);
        if (error instanceof UserError && error.facts.stallTimeoutMs !== undefined) {
          return fail(
            `the download of ${label} from ${spec.url} stalled after ${received} bytes (nothing for ${stallMs} ms)`,
          );
        }
        return fail(`the download of ${label} from ${spec.url} did not finish in time (${received} bytes)`);
      case "connection-lost":
        return truncated(spec, label, received, total, failure.reason);
      case "redirect":
        return fail(
          `the download of ${label} from ${spec.url} was redirected where it may not go`,
          (error as Error).message,
        );
      case "aborted":
        return error;
      default:
        return fail(`cannot download ${label} from ${spec.url}: ${failure.reason}`);
    }
  }

  if (total !== undefined && received !== total) {
    await removeTemporaries();
    throw truncated(spec, label, received, total);
  }
  const actual = hash.digest("hex");
  if (actual !== expected) {
    await removeTemporaries();
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
  await removeTemporaries(temporary);
  try {
    await rename(temporary, destination);
  } catch (error) {
    await removeTemporaries();
    throw new UserError(
      errorCodes.DOWNLOAD_WRITE_FAILED,
      `cannot move the download of ${label} into ${destination}: ${classifyTransportError(error).reason}`,
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
