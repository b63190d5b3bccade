import { writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { loopbackServers, tempDir } from "@nodekit/test-utils";
import { afterEach, describe, expect, test } from "vitest";
import { classifyApiError } from "./classify.ts";
import { connect } from "./client.ts";
import { retryAfterMs } from "./transport.ts";

// A stand-in for one HTTP behaviour of the real API server (the 429 "storage is
// (re)initializing" it answers right after a CRD is Established, with Retry-After): the
// real one is asked in apps/nvkectl/test/providers.int.test.ts.

const servers = loopbackServers();
const dirs: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of dirs.splice(0)) await cleanup();
});

const SECRET = { apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "default" }, data: {} };
const TOO_MANY = {
  apiVersion: "v1",
  kind: "Status",
  status: "Failure",
  message: "storage is (re)initializing",
  reason: "TooManyRequests",
  code: 429,
};

/** A kubeconfig for `server` (an http:// URL: client-node needs insecure-skip-tls-verify for one). */
async function kubeconfigFor(server: string): Promise<string> {
  const dir = await tempDir("kube-transport-");
  dirs.push(dir.cleanup);
  const path = join(dir.path, "kubeconfig");
  await writeFile(
    path,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${server}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`,
  );
  return path;
}

/** A server that gives `answers` in turn (the last one again when they run out), and counts. */
async function answering(answers: Array<{ status: number; headers?: Record<string, string>; body: unknown }>) {
  const seen: string[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    seen.push(`${request.method} ${request.url}`);
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)] as (typeof answers)[number];
    response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
    response.end(JSON.stringify(answer.body));
  });
  const url = await servers.listen(server);
  return { seen, kubeconfig: await kubeconfigFor(url) };
}

const read = (client: Awaited<ReturnType<typeof connect>>) =>
  client.core.readNamespacedSecret({ name: "s", namespace: "default" }, client.requestOptions);

describe("connect's calls keep kubectl's habits", () => {
  test("an answer 429 with Retry-After is asked again after the wait, and the next answer is the call's", async () => {
    const { seen, kubeconfig } = await answering([
      { status: 429, headers: { "retry-after": "1" }, body: TOO_MANY },
      { status: 200, body: SECRET },
    ]);
    const client = await connect(kubeconfig, { requestTimeoutMs: 10_000 });
    const started = Date.now();
    const secret = await read(client);
    expect(secret.metadata?.name).toBe("s");
    expect(seen).toEqual(["GET /api/v1/namespaces/default/secrets/s", "GET /api/v1/namespaces/default/secrets/s"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  test("a few times only: then the 429 is the caller's, unavailable (exit 6)", async () => {
    const { seen, kubeconfig } = await answering([{ status: 429, headers: { "retry-after": "0" }, body: TOO_MANY }]);
    const client = await connect(kubeconfig, { requestTimeoutMs: 10_000, retries: 2 });
    const error = await read(client).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(classifyApiError(error)).toMatchObject({ kind: "unavailable", status: 429, reason: "TooManyRequests" });
    expect(seen).toHaveLength(3);
  });

  test("a wait that would end past the request timeout is not begun", async () => {
    const { seen, kubeconfig } = await answering([
      { status: 429, headers: { "retry-after": "30" }, body: TOO_MANY },
      { status: 200, body: SECRET },
    ]);
    const client = await connect(kubeconfig, { requestTimeoutMs: 2_000 });
    const started = Date.now();
    const error = await read(client).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(classifyApiError(error)).toMatchObject({ kind: "unavailable", status: 429 });
    expect(seen).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  test("without Retry-After a 429 is not asked again; nor is a 401 or a 403", async () => {
    for (const [status, kind] of [
      [429, "unavailable"],
      [401, "unauthorized"],
      [403, "forbidden"],
    ] as const) {
      const { seen, kubeconfig } = await answering([
        { status, body: { kind: "Status", code: status, message: `answered ${status}` } },
        { status: 200, body: SECRET },
      ]);
      const client = await connect(kubeconfig, { requestTimeoutMs: 10_000 });
      const error = await read(client).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(classifyApiError(error)).toMatchObject({ kind, status });
      // client-node drops a 401's body (its generated code); the others' Status message is kept.
      if (status !== 401) expect(classifyApiError(error).message).toBe(`answered ${status}`);
      expect(seen).toHaveLength(1);
    }
  });

  test("no answer within the request timeout is unreachable (no answer in time)", async () => {
    const silent = createServer(() => {});
    const client = await connect(await kubeconfigFor(await servers.listen(silent)), { requestTimeoutMs: 300 });
    const started = Date.now();
    const error = await read(client).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(classifyApiError(error)).toEqual({ kind: "unreachable", message: "no answer in time" });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  test("a refused connection is unreachable, on any port kubectl would try (fetch refuses port 9 as unsafe)", async () => {
    // Nothing listens on 127.0.0.1:9 (discard): kubectl is refused there; fetch never connects.
    const client = await connect(await kubeconfigFor("https://127.0.0.1:9"), { requestTimeoutMs: 5_000 });
    const error = await read(client).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(classifyApiError(error)).toMatchObject({ kind: "unreachable", tls: false });
    expect(classifyApiError(error).message).toContain("ECONNREFUSED");
  });
});

describe("retryAfterMs (client-go's checkWait)", () => {
  test.each([
    [429, "2", 2_000],
    [503, "1", 1_000],
    [429, undefined, undefined],
    [429, "Wed, 21 Oct 2015 07:28:00 GMT", undefined],
    [404, "1", undefined],
    [200, "1", undefined],
  ])("%i with Retry-After %s → %s ms", (status, header, expected) => {
    const headers: Record<string, string> = header === undefined ? {} : { "retry-after": header };
    expect(retryAfterMs({ httpStatusCode: status, headers })).toBe(expected);
  });
});
