import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { answers } from "./answers.ts";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A loopback server that leaves its first `slow` requests unanswered for `delayMs`. */
async function serverAnswering(status: number, slow: number, delayMs: number): Promise<string> {
  let seen = 0;
  server = createServer((_req, res) => {
    seen += 1;
    setTimeout(() => res.writeHead(status).end(), seen <= slow ? delayMs : 0);
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`;
}

describe("answers", () => {
  test("a slow server that answers on a later try answers: one timeout is not 'not running'", async () => {
    const url = await serverAnswering(200, 1, 1_000);
    expect(await answers(url, (status) => status === 200, { tryMs: 200, patienceMs: 5_000 })).toBe(true);
  });

  test("a server that never answers within the patience does not", async () => {
    const url = await serverAnswering(200, 1_000, 10_000);
    expect(await answers(url, (status) => status === 200, { tryMs: 100, patienceMs: 400 })).toBe(false);
  });

  test("a refused connection is the answer at once, without waiting out the patience", async () => {
    const url = await serverAnswering(200, 0, 0);
    server?.close();
    server = undefined;
    const started = performance.now();
    expect(await answers(url, () => true, { patienceMs: 60_000 })).toBe(false);
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  test("the status is judged by the caller", async () => {
    const url = await serverAnswering(401, 0, 0);
    expect(await answers(url, (status) => status === 401)).toBe(true);
    expect(await answers(url, (status) => status === 200)).toBe(false);
  });
});
