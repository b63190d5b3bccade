import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { TLSSocket } from "node:tls";
import { loopbackServers, testdir } from "@nodekit/test-utils";
import { createCertificateAuthority, issueClientCertificate, issueServingCertificate } from "@nodekit/testenv/pki";
import { beforeAll, describe, expect, test } from "vitest";
import { apply, getJson, list, patchStatus, remove, resource, type World } from "./world.ts";

// world.ts's requests as kubectl makes them, against an API server on loopback that checks
// the client certificate and says what it got: the kubeconfig's CA and credential, the
// methods, paths and content types of apply, status patches and delete, client-go's retries,
// and the API's Status in the errors.

interface Seen {
  method: string;
  url: string;
  contentType: string | undefined;
  authorization: string | undefined;
  /** The client certificate's CN, when the handshake carried one the CA signed. */
  user: string | undefined;
  body: string;
}

/** An answer: its body as JSON, or a string sent as it is. */
type Answer = { status: number; body: unknown; headers?: Record<string, string> };

const { listen } = loopbackServers();
const status = (code: number, reason: string, message: string): Answer => ({
  status: code,
  body: { kind: "Status", apiVersion: "v1", status: "Failure", reason, message, code },
});
let pki: { ca: string; serving: { certPem: string; keyPem: string }; client: { certPem: string; keyPem: string } };

beforeAll(async () => {
  const ca = await createCertificateAuthority();
  pki = {
    ca: ca.certPem,
    serving: await issueServingCertificate(ca),
    client: await issueClientCertificate(ca, { user: "stand-in-admin", groups: ["system:masters"] }),
  };
});

/**
 * An API server answering each request with the next of `answers` (404 once they run out),
 * and a World whose kubeconfig reaches it with a client certificate, or with `token`.
 */
async function apiServer(answers: Answer[], credential: { token?: string } = {}): Promise<{ w: World; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer(
    { key: pki.serving.keyPem, cert: pki.serving.certPem, ca: [pki.ca], requestCert: true, rejectUnauthorized: false },
    (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const socket = req.socket as TLSSocket;
        seen.push({
          method: req.method ?? "",
          url: req.url ?? "",
          contentType: req.headers["content-type"],
          authorization: req.headers.authorization,
          user: socket.authorized ? (socket.getPeerCertificate().subject?.CN as string | undefined) : undefined,
          body: Buffer.concat(chunks).toString("utf8"),
        });
        const answer = answers.shift() ?? status(404, "NotFound", `the server could not find ${req.url}`);
        res
          .writeHead(answer.status, { "content-type": "application/json", ...answer.headers })
          .end(typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body));
      });
    },
  );
  const url = await listen(server, "https");
  const b64 = (pem: string) => Buffer.from(pem).toString("base64");
  const user =
    credential.token === undefined
      ? { "client-certificate-data": b64(pki.client.certPem), "client-key-data": b64(pki.client.keyPem) }
      : { token: credential.token };
  const dir = await testdir({
    "kubeconfig.yaml": JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "agent", cluster: { server: url, "certificate-authority-data": b64(pki.ca) } }],
      users: [{ name: "admin", user }],
      contexts: [{ name: "agent", context: { cluster: "agent", user: "admin" } }],
      "current-context": "agent",
    }),
  });
  const w: World = {
    kubeconfig: dir.path("kubeconfig.yaml"),
    state: dir.root,
    bin: dir.root,
    platformClusterId: "noderings-test",
    nodeIp: "10.20.0.11",
  };
  return { w, seen };
}

describe("the agent cluster's API, as kubectl reaches it", () => {
  test("with the kubeconfig's CA and client certificate: an object, a collection's items; a 404 is absent", async () => {
    const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: "liqo" } };
    const { w, seen } = await apiServer([
      { status: 200, body: namespace },
      { status: 200, body: { kind: "NodeList", items: [{ metadata: { name: "pve-1" } }] } },
    ]);
    expect(await getJson(w, resource("v1", "namespaces", "liqo"))).toEqual(namespace);
    expect(await list(w, resource("v1", "nodes"))).toEqual([{ metadata: { name: "pve-1" } }]);
    expect(await getJson(w, resource("core.liqo.io/v1beta1", "foreignclusters", "noderings"))).toBeUndefined();
    expect(seen.map((s) => [s.method, s.url, s.user, s.authorization])).toEqual([
      ["GET", "/api/v1/namespaces/liqo", "stand-in-admin", undefined],
      ["GET", "/api/v1/nodes", "stand-in-admin", undefined],
      ["GET", "/apis/core.liqo.io/v1beta1/foreignclusters/noderings", "stand-in-admin", undefined],
    ]);
  });

  test("with a kubeconfig's bearer token", async () => {
    const { w, seen } = await apiServer([{ status: 200, body: { kind: "NodeList", items: [] } }], {
      token: "peering-token-0123456789",
    });
    expect(await list(w, resource("v1", "nodes"))).toEqual([]);
    expect([seen[0]?.user, seen[0]?.authorization]).toEqual([undefined, "Bearer peering-token-0123456789"]);
  });

  test("an answer other than 2xx fails with the API's reason and message, as kubectl prints them", async () => {
    const { w } = await apiServer([
      status(403, "Forbidden", 'nodes "pve-1" is forbidden: User "peer" cannot get resource "nodes"'),
      { status: 502, body: "bad gateway" },
    ]);
    await expect(getJson(w, resource("v1", "nodes", "pve-1"))).rejects.toThrow(
      'Error from server (Forbidden): nodes "pve-1" is forbidden: User "peer" cannot get resource "nodes"',
    );
    // Not a Status: the status code stands for the reason, the body for the message
    await expect(getJson(w, resource("v1", "nodes", "pve-1"))).rejects.toThrow("Error from server (502): bad gateway");
  });
});

describe("writes", () => {
  test("apply is a forced server-side apply, sent again after a 429 once its Retry-After has passed", async () => {
    const { w, seen } = await apiServer([
      { ...status(429, "TooManyRequests", "storage is (re)initializing"), headers: { "retry-after": "1" } },
      { status: 200, body: {} },
    ]);
    const config = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "pins", namespace: "liqo" }, data: {} };
    const started = Date.now();
    await apply(w, config);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(seen).toHaveLength(2);
    for (const sent of seen) {
      expect([sent.method, sent.url, sent.contentType]).toEqual([
        "PATCH",
        "/api/v1/namespaces/liqo/configmaps/pins?fieldManager=nr-stand-in&force=true",
        "application/apply-patch+yaml",
      ]);
      expect(JSON.parse(sent.body)).toEqual(config);
    }
  });

  test("a status merge patch; a 5xx is sent again only with a whole-seconds Retry-After", async () => {
    const { w, seen } = await apiServer([
      { ...status(503, "ServiceUnavailable", "etcd is leaderless"), headers: { "retry-after": "0" } },
      { status: 200, body: {} },
      status(500, "InternalError", "boom"),
      { ...status(500, "InternalError", "dated"), headers: { "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT" } },
    ]);
    const node = resource("v1", "nodes", "pve-1");
    await patchStatus(w, node, { phase: "Running" });
    expect(seen.map((s) => [s.method, s.url, s.contentType, s.body])).toEqual(
      Array(2).fill([
        "PATCH",
        "/api/v1/nodes/pve-1/status",
        "application/merge-patch+json",
        '{"status":{"phase":"Running"}}',
      ]),
    );
    await expect(patchStatus(w, node, {})).rejects.toThrow("Error from server (InternalError): boom");
    await expect(patchStatus(w, node, {})).rejects.toThrow("Error from server (InternalError): dated");
    expect(seen).toHaveLength(4);
  });

  test("a 429 is sent again at most 5 times, then the API's error stands", async () => {
    const busy = { ...status(429, "TooManyRequests", "too many requests"), headers: { "retry-after": "0" } };
    const { w, seen } = await apiServer(Array(7).fill(busy));
    await expect(apply(w, { apiVersion: "v1", kind: "Namespace", metadata: { name: "liqo" } })).rejects.toThrow(
      "Error from server (TooManyRequests): too many requests",
    );
    expect(seen).toHaveLength(6);
  });

  test("delete: a 404 is no error; it waits until the object is gone, unless told not to", async () => {
    const { w, seen } = await apiServer([
      { status: 200, body: {} },
      { status: 200, body: { metadata: { name: "liqo", deletionTimestamp: "2026-01-01T00:00:00Z" } } },
    ]);
    const namespace = resource("v1", "namespaces", "liqo");
    await remove(w, namespace);
    await remove(w, namespace);
    await remove(w, resource("v1", "namespaces", "other"), { wait: false });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      "DELETE /api/v1/namespaces/liqo",
      "GET /api/v1/namespaces/liqo",
      "GET /api/v1/namespaces/liqo",
      "DELETE /api/v1/namespaces/liqo",
      "DELETE /api/v1/namespaces/other",
    ]);
  });
});
