import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { ExitCode } from "@nodekit/errors";
import { createTransport } from "@nodekit/http";
import { loopbackServers, userErrorOf } from "@nodekit/test-utils";
import { createCertificateAuthority, issueServingCertificate } from "@nodekit/testenv/pki";
import { describe, expect, test } from "vitest";
import { createNvkeClient, type NvkeClientOptions } from "./client.ts";
import { cluster, errorBody } from "./test-support.ts";

// Deadlines, limits, redirects and Retry-After, as the controller client says them: the
// behaviour itself is @nodekit/http's (packages/http/src/request.test.ts), its words and
// codes are the client's.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const { listen } = loopbackServers();
const serve = (handler: Handler) => listen(createServer(handler), "http");

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

describe("through @nodekit/http", () => {
  const client = (options: Omit<NvkeClientOptions, "transport">) =>
    createNvkeClient({ transport: createTransport(), ...options });

  test("one deadline covers the body: headers then a stall is a timeout, not a hang", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"status":');
    });
    const error = await userErrorOf(client({ baseUrl: url, timeoutMs: 300 }).healthz());
    expect([error.code, error.exitCode]).toEqual(["CONTROLLER_TIMEOUT", ExitCode.Unreachable]);
    expect(error.message).toBe(`the NVKE controller at ${url} did not answer GET /healthz within 300 ms`);
  });

  test("the caller's signal ends a request, and its UserError is what is thrown", async () => {
    const url = await serve(() => {});
    const { UserError, defineErrorCodes } = await import("@nodekit/errors");
    const codes = defineErrorCodes("test", { GAVE_UP: { exitCode: ExitCode.Unreachable, meaning: "gave up" } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new UserError(codes.GAVE_UP, "gave up after --timeout 200ms")), 200);
    const error = await userErrorOf(client({ baseUrl: url, signal: controller.signal }).healthz());
    expect([error.code, error.message]).toEqual(["GAVE_UP", "gave up after --timeout 200ms"]);
  });

  test("a body over the limit is refused as soon as it is seen, naming the limit", async () => {
    let sent = 0;
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = `${'"x",'.repeat(16 * 1024)}`;
      res.write('{"items":[');
      const more = () => {
        while (sent < 64 && res.write(chunk)) sent++;
        if (sent < 64) res.once("drain", more);
        else res.end('"x"]}');
      };
      more();
    });
    const error = await userErrorOf(client({ baseUrl: url, maxResponseBytes: 1024 * 1024 }).listClustersPage());
    expect([error.code, error.exitCode]).toEqual(["CONTROLLER_RESPONSE_TOO_LARGE", ExitCode.Unreachable]);
    expect(error.message).toBe(
      `the answer to GET ${url}/api/v1/clusters is larger than 1 MiB, the most read from one response; it was not read further`,
    );
    expect(error.facts.limitBytes).toBe(1024 * 1024);
  });

  test("a redirect to another origin is refused, and the other origin hears nothing", async () => {
    let other = 0;
    const elsewhere = await serve((_req, res) => {
      other++;
      json(res, 200, { items: [] });
    });
    const url = await serve((_req, res) => res.writeHead(302, { location: `${elsewhere}/api/v1/clusters` }).end());
    const error = await userErrorOf(client({ baseUrl: url, token: async () => "t0ken" }).listClustersPage());
    expect([error.code, error.exitCode]).toEqual(["CONTROLLER_REDIRECTED", ExitCode.Unreachable]);
    expect(error.message).toBe(
      `the answer to GET ${url}/api/v1/clusters is a redirect (302) to another origin, ${elsewhere}; it was not followed`,
    );
    expect(other).toBe(0);
  });

  test("a redirect within the controller's origin is followed", async () => {
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(req.url ?? "");
      if (req.url?.startsWith("/old")) res.writeHead(308, { location: "/new/api/v1/clusters" }).end();
      else json(res, 200, { items: [cluster("a")] });
    });
    const page = await client({ baseUrl: `${url}/old` }).listClustersPage();
    expect(page.items.map((c) => c.name)).toEqual(["a"]);
    expect(seen).toEqual(["/old/api/v1/clusters", "/new/api/v1/clusters"]);
  });

  test("a read answered 429 waits as Retry-After says and is sent again", async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls++;
      if (calls < 3) json(res, 429, errorBody(429, "TooManyRequests", "slow down"), { "retry-after": "2" });
      else json(res, 200, { items: [] });
    });
    const waits: number[] = [];
    const page = await client({
      baseUrl: url,
      sleep: async (ms) => {
        waits.push(ms);
      },
    }).listClustersPage();
    expect(page.items).toEqual([]);
    expect(waits).toEqual([2000, 2000]);
    expect(calls).toBe(3);
  });

  test("a write answered 429 is not retried: exit 6 saying when to try again", async () => {
    let calls = 0;
    const url = await serve((req, res) => {
      calls++;
      req.resume();
      json(res, 429, errorBody(429, "TooManyRequests", "slow down"), { "retry-after": "90" });
    });
    const now = Date.parse("2026-12-01T10:00:00Z");
    const error = await userErrorOf(
      client({ baseUrl: url, now: () => now, sleep: async () => {} }).deleteCluster(randomUUID()),
    );
    expect(calls).toBe(1);
    expect([error.code, error.exitCode]).toEqual(["CONTROLLER_BUSY", ExitCode.Unreachable]);
    expect(error.why).toBe(
      "it asks to be called again in 90 s, at 2026-12-01T10:01:30Z; a DELETE is never retried by itself, so nothing was changed",
    );
    expect(error.next).toEqual(["try again after 90 s"]);
  });

  test("a read whose Retry-After is too long, or that stays busy, gives up saying when", async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls++;
      json(res, 429, errorBody(429, "TooManyRequests", "slow down"), { "retry-after": "3600" });
    });
    const error = await userErrorOf(client({ baseUrl: url, sleep: async () => {} }).listClustersPage());
    expect(calls).toBe(1);
    expect(error.code).toBe("CONTROLLER_BUSY");
    expect(error.message).toBe(`the NVKE controller is too busy for GET ${url}/api/v1/clusters (429: slow down)`);
    const stays = await serve((_req, res) =>
      json(res, 503, errorBody(503, "ServiceUnavailable", "starting"), { "retry-after": "1" }),
    );
    const waits: number[] = [];
    const busy = await userErrorOf(
      client({ baseUrl: stays, sleep: async (ms) => void waits.push(ms) }).listClustersPage(),
    );
    expect(busy.code).toBe("CONTROLLER_BUSY");
    expect(waits).toEqual([1000, 1000, 1000]);
  });

  test("the 401 message says when no token was sent", async () => {
    const url = await serve((_req, res) =>
      json(res, 401, errorBody(401, "Unauthorized", "a bearer token is required")),
    );
    const error = await userErrorOf(client({ baseUrl: url, token: async () => undefined }).listClustersPage());
    expect(error.code).toBe("CONTROLLER_UNAUTHORIZED");
    expect(error.why).toBe(
      `the NVKE controller answered GET ${url}/api/v1/clusters with 401 Unauthorized to a request without a bearer token, also when asked again (no token was available to send)`,
    );
    expect(error.facts).toEqual({ tokenSent: false });
  });
});

describe("https behind a private certificate authority", () => {
  test("the transport trusts the CA it is given, and says so when it is not given", async () => {
    const ca = await createCertificateAuthority();
    const serving = await issueServingCertificate(ca);
    const url = await listen(
      createHttpsServer({ cert: serving.certPem, key: serving.keyPem }, (_req, res) =>
        json(res, 200, { status: "ok" }),
      ) as unknown as Server,
      "https",
    );
    const trusted = createNvkeClient({ baseUrl: url, transport: createTransport({ ca: ca.certPem }) });
    expect(await trusted.healthz()).toEqual({ status: "ok" });
    const untrusted = createNvkeClient({ baseUrl: url, transport: createTransport() });
    const error = await userErrorOf(untrusted.healthz());
    expect([error.code, error.exitCode]).toEqual(["CONTROLLER_TLS_UNTRUSTED", ExitCode.Unreachable]);
    expect(error.message).toMatch(
      new RegExp(`^the NVKE controller at ${url} presented a certificate that is not trusted: .+ \\(\\w+\\)$`),
    );
  });
});

describe("a name that does not resolve", () => {
  const eaiAgain = () =>
    Object.assign(new Error("getaddrinfo EAI_AGAIN controller.lab"), {
      code: "EAI_AGAIN",
      syscall: "getaddrinfo",
      hostname: "controller.lab",
    });

  test("says so (the lookup is injected: nothing leaves the machine)", async () => {
    const transport = createTransport({
      lookup: (_host, _options, callback) => process.nextTick(() => (callback as (e: Error) => void)(eaiAgain())),
    });
    const error = await userErrorOf(createNvkeClient({ baseUrl: "http://controller.lab:30080", transport }).healthz());
    expect([error.code, error.exitCode]).toEqual(["CONTROLLER_UNREACHABLE", ExitCode.Unreachable]);
    expect(error.message).toBe(
      "cannot reach the NVKE controller at http://controller.lab:30080: the host name does not resolve",
    );
  });
});
