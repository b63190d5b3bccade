import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { ExitCode } from "@nodekit/errors";
import { loopbackServers, userErrorOf } from "@nodekit/test-utils";
import { afterEach, describe, expect, test } from "vitest";
import { createNodeRingsClient } from "./client.ts";
import { downloadArtifact } from "./download.ts";

// A NodeRings API and a download server that misbehave, on loopback (issue 22 item 8): every
// answer bounded, every failure a documented code, never a crash.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const servers = loopbackServers();
const serve = (handler: Handler) => servers.listen(createServer(handler));
const TOKEN = "nr-T0ken-8812";
const client = (baseUrl: string) =>
  createNodeRingsClient({ baseUrl, token: TOKEN, retry: { limit: 0 }, timeoutMs: 10_000 });

/** Streams `bytes` bytes of `x` for as long as the client reads, minding back-pressure; counts what went out. */
function flood(res: ServerResponse, bytes: number, headers: Record<string, string> = {}) {
  const sent = { bytes: 0 };
  res.writeHead(200, { "content-type": "application/json", ...headers });
  const chunk = Buffer.alloc(64 * 1024, 120);
  const more = () => {
    while (sent.bytes < bytes && !res.destroyed) {
      sent.bytes += chunk.length;
      if (!res.write(chunk)) return void res.once("drain", more);
    }
    res.end();
  };
  res.on("error", () => {});
  more();
  return sent;
}

describe("the NodeRings client", () => {
  test("a 2 GB answer is refused at 16 MiB (exit 6), memory flat", async () => {
    let sent = { bytes: 0 };
    const url = await serve((_req, res) => {
      sent = flood(res, 2 * 1024 ** 3);
    });
    const before = process.memoryUsage().rss;
    const error = await userErrorOf(client(url).healthz());
    expect([error.code, error.exitCode]).toEqual(["NODERINGS_RESPONSE_TOO_LARGE", ExitCode.Unreachable]);
    expect(error.message).toBe(
      `the answer to GET ${url}/healthz is larger than 16 MiB, the most read from one answer; it was not read further`,
    );
    expect(sent.bytes).toBeLessThan(64 * 1024 ** 2);
    expect(process.memoryUsage().rss - before).toBeLessThan(96 * 1024 ** 2);
  });

  test("a gzip bomb is refused at the cap, counted as it unpacks", async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 ** 2, 32)); // 64 MiB of spaces, ≈ 64 KiB packed
    const url = await serve((_req, res) =>
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" }).end(bomb),
    );
    const error = await userErrorOf(
      createNodeRingsClient({ baseUrl: url, token: TOKEN, maxResponseBytes: 1024 ** 2 }).healthz(),
    );
    expect(error.code).toBe("NODERINGS_RESPONSE_TOO_LARGE");
  });

  test("gzip with Connection: close, cut short: a bad answer (exit 6), not a crash", async () => {
    const body = gzipSync(JSON.stringify({ status: "ok", pad: "x".repeat(100_000) }));
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", connection: "close" });
      res.end(body.subarray(0, 100));
    });
    const error = await userErrorOf(client(url).healthz());
    expect([error.code, error.exitCode]).toEqual(["NODERINGS_BAD_RESPONSE", ExitCode.Unreachable]);
  });

  test("a redirect to another origin is not followed: the token goes nowhere else", async () => {
    const heard: Array<string | undefined> = [];
    const elsewhere = await serve((req, res) => {
      heard.push(req.headers.authorization);
      res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
    });
    const url = await serve((_req, res) => res.writeHead(302, { location: `${elsewhere}/healthz` }).end());
    const error = await userErrorOf(client(url).healthz());
    expect([error.code, error.exitCode]).toEqual(["NODERINGS_REDIRECTED", ExitCode.Unreachable]);
    expect(heard).toEqual([]);
    expect(`${error.message}${error.why}`).not.toContain(TOKEN);
  });
});

describe("downloads", () => {
  let dir: string | undefined;
  const extra: Server[] = [];
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    dir = undefined;
    for (const server of extra.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  const scratch = async () => {
    dir = await mkdtemp(join(tmpdir(), "download-faults-"));
    return dir;
  };
  const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

  test("without a pinned size, a body past the ceiling is refused (exit 1) and nothing kept", async () => {
    let sent = { bytes: 0 };
    const url = await serve((_req, res) => {
      sent = flood(res, 512 * 1024 ** 2, { "content-type": "application/gzip" });
    });
    const at = await scratch();
    const error = await userErrorOf(
      downloadArtifact({ url: `${url}/tool.tar.gz`, sha256: "0".repeat(64) }, join(at, "tool"), {
        maxBytes: 4 * 1024 ** 2,
      }),
    );
    expect([error.code, error.exitCode]).toEqual(["DOWNLOAD_TOO_LARGE", ExitCode.CheckFailed]);
    expect(sent.bytes).toBeLessThan(64 * 1024 ** 2);
    expect(await readdir(at)).toEqual([]);
  });

  test("a pinned size is held while streaming: one byte more is a mismatch", async () => {
    const bytes = Buffer.alloc(1000, 7);
    const url = await serve((_req, res) => {
      res.writeHead(200); // no Content-Length: only the stream says how long it is
      res.end(Buffer.concat([bytes, Buffer.from("!")]));
    });
    const at = await scratch();
    const error = await userErrorOf(
      downloadArtifact({ url: `${url}/t`, sha256: sha256(bytes), size: 1000 }, join(at, "t")),
    );
    expect(error.code).toBe("DOWNLOAD_DIGEST_MISMATCH");
    expect(await readdir(at)).toEqual([]);
  });

  test("every redirect hop is held to the pins' URL rule: plain http off 127.0.0.1 is refused", async () => {
    const bytes = Buffer.from("the real tool");
    let hits = 0;
    // 127.0.0.2 is this machine too, but not an address the pins allow plain http to.
    const other = createServer((_req, res) => {
      hits++;
      res.end(bytes);
    });
    extra.push(other);
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.2", resolve));
    const hop = `http://127.0.0.2:${(other.address() as AddressInfo).port}/tool`;
    const url = await serve((_req, res) => res.writeHead(302, { location: hop }).end());
    const at = await scratch();
    const error = await userErrorOf(downloadArtifact({ url: `${url}/tool`, sha256: sha256(bytes) }, join(at, "tool")));
    expect(error.code).toBe("DOWNLOAD_FAILED");
    expect(error.why).toContain("plain http only to this machine");
    expect(hits).toBe(0);
    expect(await readdir(at)).toEqual([]);
  });

  test("a connection lost before the first byte is asked again, into a fresh file, and completes", async () => {
    const bytes = Buffer.from("the real tool");
    let calls = 0;
    const url = await serve((_req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(200, { "content-length": String(bytes.length) });
        res.flushHeaders();
        setTimeout(() => res.socket?.destroy(), 50);
      } else res.end(bytes);
    });
    const at = await scratch();
    const done = await downloadArtifact({ url: `${url}/tool`, sha256: sha256(bytes) }, join(at, "tool"), {
      retry: { attempts: 1 },
    });
    expect([done.bytes, calls]).toEqual([bytes.length, 2]);
    expect(await readdir(at)).toEqual(["tool"]);
  });

  test("a redirect that keeps to the rule is followed, and the digest still decides", async () => {
    const bytes = Buffer.from("the real tool");
    const storage = await serve((_req, res) => res.end(bytes));
    const url = await serve((_req, res) => res.writeHead(302, { location: `${storage}/blob` }).end());
    const at = await scratch();
    const done = await downloadArtifact({ url: `${url}/tool`, sha256: sha256(bytes) }, join(at, "tool"));
    expect(done).toEqual({ path: join(at, "tool"), sha256: sha256(bytes), bytes: bytes.length });
  });
});
