import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { ExitCode } from "@nodekit/errors";
import { loopbackServers, userErrorOf } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { createNvkeClient } from "./client.ts";
import { cluster, errorBody } from "./test-support.ts";

// A tiny controller stand-in on loopback: each test says how it answers.
type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
interface Seen {
  method: string;
  url: string;
  authorization?: string;
  contentType?: string;
  body: string;
}

const { listen } = loopbackServers();

async function serve(handler: Handler): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        ...(req.headers.authorization === undefined ? {} : { authorization: req.headers.authorization }),
        ...(req.headers["content-type"] === undefined ? {} : { contentType: req.headers["content-type"] }),
        body,
      });
      handler(req, body, res);
    });
  });
  return { url: await listen(server), seen, server };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

describe("listClusters", () => {
  test("follows continue page by page and yields every item once", async () => {
    // Given a controller with 7 clusters served 3 per page
    const all = Array.from({ length: 7 }, (_, i) => cluster(`c${i}`));
    const { url, seen } = await serve((req, _body, res) => {
      const query = new URL(req.url ?? "", "http://x").searchParams;
      const start = Number(query.get("continue") ?? "0");
      const limit = Number(query.get("limit"));
      const next = start + limit < all.length ? String(start + limit) : undefined;
      sendJson(res, 200, { items: all.slice(start, start + limit), ...(next ? { continue: next } : {}) });
    });
    const client = createNvkeClient({ baseUrl: url });

    // When iterating
    const names: string[] = [];
    for await (const c of client.listClusters({ limit: 3 })) names.push(c.name);

    // Then three requests fetched the pages in order
    expect(names).toEqual(all.map((c) => c.name));
    expect(seen.map((s) => s.url)).toEqual([
      "/api/v1/clusters?limit=3",
      "/api/v1/clusters?limit=3&continue=3",
      "/api/v1/clusters?limit=3&continue=6",
    ]);
  });

  test("fetches the next page only when the iteration gets there", async () => {
    const { url, seen } = await serve((_req, _body, res) =>
      sendJson(res, 200, { items: [cluster("a")], continue: "more" }),
    );
    const client = createNvkeClient({ baseUrl: url });
    for await (const c of client.listClusters()) {
      expect(c.name).toBe("a");
      break;
    }
    expect(seen).toHaveLength(1);
  });

  test("getClusterByName is one request and a missing name is NotFound", async () => {
    const { url, seen } = await serve((req, _body, res) => {
      const name = new URL(req.url ?? "", "http://x").searchParams.get("name");
      sendJson(res, 200, { items: name === "there" ? [cluster("there")] : [] });
    });
    const client = createNvkeClient({ baseUrl: `${url}/` });
    expect((await client.getClusterByName("there")).name).toBe("there");
    expect(seen).toHaveLength(1);
    const error = await userErrorOf(client.getClusterByName("nope"));
    expect(error.code).toBe("CLUSTER_NOT_FOUND");
    expect(error.exitCode).toBe(ExitCode.NotFound);
    expect(error.message).toBe('cluster "nope" not found');
  });
});

describe("auth", () => {
  test("sends the bearer token, and on a 401 drops it and retries once with a fresh one", async () => {
    // Given a controller that accepts only "fresh"
    const { url, seen } = await serve((req, _body, res) => {
      if (req.headers.authorization === "Bearer fresh") sendJson(res, 200, { items: [] });
      else sendJson(res, 401, errorBody(401, "Unauthorized", "token rejected"));
    });
    let current = "stale";
    let dropped = 0;
    const client = createNvkeClient({
      baseUrl: url,
      token: async () => current,
      onUnauthorized: async () => {
        dropped++;
        current = "fresh";
      },
    });

    // When listing
    const page = await client.listClustersPage();

    // Then the second attempt carried the fresh token
    expect(page.items).toEqual([]);
    expect(dropped).toBe(1);
    expect(seen.map((s) => s.authorization)).toEqual(["Bearer stale", "Bearer fresh"]);
  });

  test("a second 401 is Unauthorized with the controller's message, and the token is nowhere in the error", async () => {
    const { url, seen } = await serve((_req, _body, res) =>
      sendJson(res, 401, errorBody(401, "Unauthorized", "bearer token is not valid for audience nvke")),
    );
    const secret = "eyJhbGciOiJSUzI1NiJ9.secret-token";
    const lines: string[] = [];
    const client = createNvkeClient({
      baseUrl: url,
      token: async () => secret,
      onUnauthorized: async () => {},
      log: (line) => lines.push(line),
    });
    const error = await userErrorOf(client.getCluster(randomUUID()));
    expect(seen).toHaveLength(2);
    expect(error.code).toBe("CONTROLLER_UNAUTHORIZED");
    expect(error.exitCode).toBe(ExitCode.Unauthorized);
    expect(error.message).toBe("bearer token is not valid for audience nvke");
    const everything = JSON.stringify({ error, message: error.message, why: error.why, next: error.next, lines });
    expect(everything).not.toContain(secret);
    expect(lines.join("\n")).toMatch(/GET \/api\/v1\/clusters\/.* → 401/);
    expect(error.why).toMatch(/with 401 Unauthorized to a bearer token, also after a retry with a fresh token$/);
    expect(error.facts.tokenSent).toBe(true);
  });

  test("a 401 to requests that carried no token says so, and never claims a fresh token was tried", async () => {
    const { url, seen } = await serve((_req, _body, res) =>
      sendJson(
        res,
        401,
        errorBody(401, "Unauthorized", 'authentication required: send a bearer token for audience "a"'),
      ),
    );
    const client = createNvkeClient({ baseUrl: url, token: async () => undefined, onUnauthorized: async () => {} });
    const error = await userErrorOf(client.getCluster(randomUUID()));
    expect(seen.map((request) => request.authorization)).toEqual([undefined, undefined]);
    expect(error.why).toMatch(
      /with 401 Unauthorized to a request without a bearer token, also when asked again \(no token was available to send\)$/,
    );
    expect(error.why).not.toContain("fresh token");
    expect(error.next[0]).toMatch(
      /^the controller requires a bearer token, and none was sent because no auth ConfigMap/,
    );
    expect(error.facts.tokenSent).toBe(false);
  });

  test("sends no Authorization header when the token provider gives none", async () => {
    const { url, seen } = await serve((_req, _body, res) => sendJson(res, 200, { status: "ok" }));
    await createNvkeClient({ baseUrl: url, token: async () => undefined }).healthz();
    expect(seen[0]?.authorization).toBeUndefined();
  });
});

describe("errors", () => {
  test("a 422 is Rejected with the controller's message verbatim and its details as problems", async () => {
    const message =
      'cannot scale node pool "workers" to 300 nodes: pod CIDR 10.244.0.0/16 has room for 256 nodes with /24 per node (control plane uses 3)';
    const { url } = await serve((_req, _body, res) =>
      sendJson(
        res,
        422,
        errorBody(422, "Invalid", message, [{ field: "desiredNodeCount", message: "exceeds capacity" }]),
      ),
    );
    const error = await userErrorOf(createNvkeClient({ baseUrl: url }).scaleNodePool(randomUUID(), 300));
    expect(error.code).toBe("CONTROLLER_REJECTED");
    expect(error.exitCode).toBe(ExitCode.Rejected);
    expect(error.message).toBe(message);
    expect(error.problems).toEqual([
      { severity: "error", source: "request", path: ["desiredNodeCount"], message: "exceeds capacity" },
    ]);
  });

  test("a 409 is Conflict (exit 5) and a 404 is NotFound, both verbatim", async () => {
    const { url } = await serve((req, _body, res) => {
      if (req.method === "DELETE") {
        sendJson(
          res,
          409,
          errorBody(
            409,
            "Conflict",
            'node pool "cp" is the last joined control-plane pool of cluster "c1"; delete the cluster instead',
          ),
        );
      } else sendJson(res, 404, errorBody(404, "NotFound", 'cluster "x" not found'));
    });
    const client = createNvkeClient({ baseUrl: url });
    const conflict = await userErrorOf(client.deleteNodePool(randomUUID()));
    expect([conflict.code, conflict.exitCode]).toEqual(["CONTROLLER_CONFLICT", ExitCode.Conflict]);
    expect(conflict.message).toBe(
      'node pool "cp" is the last joined control-plane pool of cluster "c1"; delete the cluster instead',
    );
    const missing = await userErrorOf(client.getCluster(randomUUID()));
    expect([missing.code, missing.exitCode, missing.message]).toEqual([
      "CONTROLLER_NOT_FOUND",
      ExitCode.NotFound,
      'cluster "x" not found',
    ]);
  });

  test("an HTML 500 from a proxy names the status and an excerpt, and is Unreachable", async () => {
    const { url } = await serve((_req, _body, res) => {
      res.writeHead(500, { "content-type": "text/html" });
      res.end(
        "<html><head><title>500 Internal Server Error</title></head><body><h1>Bad Gateway Thing</h1></body></html>",
      );
    });
    const error = await userErrorOf(createNvkeClient({ baseUrl: url }).listClustersPage());
    expect(error.code).toBe("CONTROLLER_BAD_RESPONSE");
    expect(error.exitCode).toBe(ExitCode.Unreachable);
    expect(error.message).toContain("HTTP 500, text/html");
    expect(error.message).toContain("500 Internal Server Error Bad Gateway Thing");
    expect(error.message).not.toContain("<html>");
    expect(error.next.join("\n")).toContain("check that the controller URL is the site's controller API");
  });

  test("a 500 with the controller's error body keeps its message and is Unreachable", async () => {
    const { url } = await serve((_req, _body, res) =>
      sendJson(res, 500, errorBody(500, "InternalError", "etcd is unhappy")),
    );
    const error = await userErrorOf(createNvkeClient({ baseUrl: url }).listClustersPage());
    expect([error.code, error.exitCode, error.message]).toEqual([
      "CONTROLLER_ERROR",
      ExitCode.Unreachable,
      "etcd is unhappy",
    ]);
  });

  test("a 200 that is not the contract is a bad response, not a crash", async () => {
    const { url } = await serve((_req, _body, res) => sendJson(res, 200, { clusters: [] }));
    const error = await userErrorOf(createNvkeClient({ baseUrl: url }).listClustersPage());
    expect(error.code).toBe("CONTROLLER_BAD_RESPONSE");
    expect(error.message).toContain("does not match the NVKE API contract");
  });

  test("connection refused names the URL and says what to check", async () => {
    const { url, server } = await serve(() => {});
    await new Promise((r) => server.close(r));
    const error = await userErrorOf(createNvkeClient({ baseUrl: url }).listClustersPage());
    expect(error.code).toBe("CONTROLLER_UNREACHABLE");
    expect(error.exitCode).toBe(ExitCode.Unreachable);
    expect(error.message).toBe(`cannot reach the NVKE controller at ${url}: connection refused`);
    expect(error.next.join("\n")).toMatch(/controller URL[\s\S]*NodePort/);
  });

  test("no answer within timeoutMs is a timeout", async () => {
    const { url } = await serve(() => {});
    const error = await userErrorOf(createNvkeClient({ baseUrl: url, timeoutMs: 200 }).healthz());
    expect(error.code).toBe("CONTROLLER_TIMEOUT");
    expect(error.exitCode).toBe(ExitCode.Unreachable);
  });
});

describe("requests", () => {
  test("patch is sent as a JSON merge patch, null included", async () => {
    const c = cluster("c1");
    const { url, seen } = await serve((_req, _body, res) => sendJson(res, 200, c));
    await createNvkeClient({ baseUrl: url }).patchCluster(c.id, { description: null, labels: { team: "a" } });
    expect(seen[0]).toMatchObject({
      method: "PATCH",
      url: `/api/v1/clusters/${c.id}`,
      contentType: "application/merge-patch+json",
      body: '{"description":null,"labels":{"team":"a"}}',
    });
  });

  test("create posts JSON and a base URL path prefix is kept", async () => {
    const { url, seen } = await serve((_req, _body, res) => sendJson(res, 202, cluster("c1")));
    const created = await createNvkeClient({ baseUrl: `${url}/nvke` }).createCluster({
      name: "c1",
      provider: "capd",
      clusterReleaseName: "r1",
      controlPlaneConfig: { replicas: 1 },
      network: { podCIDR: "10.244.0.0/16", serviceCIDR: "10.96.0.0/12" },
      infra: { machineTemplate: { apiVersion: "x/v1", kind: "DockerMachineTemplate" } },
    });
    expect(created.name).toBe("c1");
    expect(seen[0]).toMatchObject({ method: "POST", url: "/nvke/api/v1/clusters", contentType: "application/json" });
  });
});
