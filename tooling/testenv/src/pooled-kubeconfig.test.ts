import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { renderKubeconfig } from "./kubeconfig.ts";
import { createCertificateAuthority, issueClientCertificate, issueServingCertificate } from "./pki.ts";
import { PooledKubeConfig } from "./pooled-kubeconfig.ts";

// An HTTPS server that answers every request with an empty NamespaceList and counts the TLS
// connections it accepted (a handshake each).
let connections = 0;
let kubeconfig = "";
let server: Server;

beforeAll(async () => {
  const ca = await createCertificateAuthority();
  const [serving, client] = await Promise.all([
    issueServingCertificate(ca),
    issueClientCertificate(ca, { user: "admin", groups: ["system:masters"] }),
  ]);
  server = createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true });
  server.on("secureConnection", () => connections++);
  server.on("request", (_request, response) => {
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ apiVersion: "v1", kind: "NamespaceList", metadata: {}, items: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  kubeconfig = renderKubeconfig({
    server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caPem: ca.certPem,
    name: "admin",
    certPem: client.certPem,
    keyPem: client.keyPem,
  });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function connectionsFor(kc: KubeConfig): Promise<number> {
  kc.loadFromString(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const before = connections;
  for (let i = 0; i < 8; i++) expect((await core.listNamespace()).items).toEqual([]);
  return connections - before;
}

describe("PooledKubeConfig", () => {
  test("its requests, one after another, keep their TLS connection", async () => {
    // (undici opens a second one on the second request; from then on it keeps it)
    expect(await connectionsFor(new PooledKubeConfig())).toBeLessThanOrEqual(2);
  });

  test("where the plain KubeConfig of @kubernetes/client-node opens one per request", async () => {
    // If this fails, client-node keeps its connections itself and PooledKubeConfig can go.
    expect(await connectionsFor(new KubeConfig())).toBe(8);
  });
});
