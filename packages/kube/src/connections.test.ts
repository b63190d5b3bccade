import { spawn } from "node:child_process";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { fileURLToPath } from "node:url";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { eventually, testdir } from "@nodekit/test-utils";
import { renderKubeconfig } from "@nodekit/testenv";
import {
  type CertificateAuthority,
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
  type KeyPairPem,
} from "@nodekit/testenv/pki";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { connect } from "./client.ts";
import { keepConnections } from "./index.ts";

// An HTTPS server on loopback that asks for a client certificate, answers every request with
// an empty NamespaceList, and notes each TLS connection it accepted (a handshake each): the
// client certificate's CN it was opened with, whether it is still open, and the CN of each
// request's connection.
interface Connection {
  user: string;
  open: boolean;
}
const connections: Connection[] = [];
const requests: string[] = [];
let ca: CertificateAuthority;
let alice: KeyPairPem;
let bob: KeyPairPem;
let server: Server;
let url = "";

const cn = (socket: TLSSocket) => String(socket.getPeerCertificate().subject?.CN);

beforeAll(async () => {
  ca = await createCertificateAuthority();
  const serving = await issueServingCertificate(ca);
  [alice, bob] = await Promise.all([
    issueClientCertificate(ca, { user: "alice" }),
    issueClientCertificate(ca, { user: "bob" }),
  ]);
  server = createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true });
  server.on("secureConnection", (socket: TLSSocket) => {
    const connection = { user: cn(socket), open: true };
    connections.push(connection);
    socket.on("close", () => {
      connection.open = false;
    });
  });
  server.on("request", (request, response) => {
    requests.push(cn(request.socket as TLSSocket));
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ apiVersion: "v1", kind: "NamespaceList", metadata: {}, items: [] }));
  });
  // Connections stay open a minute when idle (undici keeps them for the Keep-Alive time the server says).
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A kubeconfig for the server, with `who`'s certificate embedded. */
const kubeconfigOf = (who: KeyPairPem, name: string) =>
  renderKubeconfig({ server: url, caPem: ca.certPem, name, certPem: who.certPem, keyPem: who.keyPem });

/**
 * A kubeconfig whose user gets its client certificate from an exec plugin (as a cloud's
 * credential plugin hands out short-lived ones): the plugin prints the file `credential.json`
 * of `dir`, which a test rewrites to rotate the certificate. The credential has expired when
 * it is handed out, so client-node runs the plugin again for every request.
 */
async function execKubeconfig(dir: Awaited<ReturnType<typeof testdir>>): Promise<string> {
  await dir.write({
    plugin: { content: '#!/bin/sh\nexec cat "$1"\n', mode: 0o755 },
    kubeconfig: [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: pool",
      "  cluster:",
      `    server: ${JSON.stringify(url)}`,
      `    certificate-authority-data: ${Buffer.from(ca.certPem).toString("base64")}`,
      "users:",
      "- name: rotating",
      "  user:",
      "    exec:",
      "      apiVersion: client.authentication.k8s.io/v1",
      `      command: ${JSON.stringify(dir.path("plugin"))}`,
      `      args: [${JSON.stringify(dir.path("credential.json"))}]`,
      "      interactiveMode: Never",
      "contexts:",
      "- name: pool",
      "  context: {cluster: pool, user: rotating}",
      "current-context: pool",
      "",
    ].join("\n"),
  });
  return dir.path("kubeconfig");
}

/** Makes the exec plugin of {@link execKubeconfig} hand out `who`'s certificate. */
const handOut = (dir: Awaited<ReturnType<typeof testdir>>, who: KeyPairPem) =>
  dir.write({
    "credential.json": JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: {
        clientCertificateData: who.certPem,
        clientKeyData: who.keyPem,
        expirationTimestamp: "2000-01-01T00:00:00Z",
      },
    }),
  });

/** What `requests` (run one after another) made the server see: the connections it opened, and each request's CN. */
async function seenDuring(run: () => Promise<void>): Promise<{ opened: Connection[]; users: string[] }> {
  const [connectionsBefore, requestsBefore] = [connections.length, requests.length];
  await run();
  return { opened: connections.slice(connectionsBefore), users: requests.slice(requestsBefore) };
}

async function eightRequests(core: CoreV1Api, options?: Parameters<CoreV1Api["listNamespace"]>[1]): Promise<void> {
  for (let i = 0; i < 8; i++) expect((await core.listNamespace({}, options)).items).toEqual([]);
}

describe("keepConnections", () => {
  test("a KubeConfig's requests, one after another, keep their TLS connection", async () => {
    const kc = keepConnections(new KubeConfig());
    kc.loadFromString(kubeconfigOf(alice, "alice"));
    const { opened, users } = await seenDuring(() => eightRequests(kc.makeApiClient(CoreV1Api)));
    // (undici opens a second one on the second request; from then on it keeps it)
    expect(opened.length).toBeGreaterThanOrEqual(1);
    expect(opened.length).toBeLessThanOrEqual(2);
    expect(users).toEqual(Array(8).fill("alice"));
  });

  test("where the plain KubeConfig of @kubernetes/client-node opens one per request", async () => {
    // If this fails, client-node keeps its connections itself and keepConnections can go.
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigOf(alice, "alice"));
    const { opened } = await seenDuring(() => eightRequests(kc.makeApiClient(CoreV1Api)));
    expect(opened).toHaveLength(8);
  });

  test("connect's client keeps its connection: eight requests, at most two handshakes", async () => {
    const dir = await testdir({ kubeconfig: kubeconfigOf(alice, "alice") });
    const client = await connect(dir.path("kubeconfig"), { requestTimeoutMs: 10_000 });
    const { opened, users } = await seenDuring(async () => {
      await eightRequests(client.core, client.requestOptions);
      await eightRequests(client.core, client.metadataOnly);
    });
    expect(opened.length).toBeGreaterThanOrEqual(1);
    expect(opened.length).toBeLessThanOrEqual(2);
    expect(users).toEqual(Array(16).fill("alice"));
  });

  test("a client certificate an exec plugin rotates gets a new connection, which presents the new certificate", async () => {
    const dir = await testdir();
    const kubeconfig = await execKubeconfig(dir);
    await handOut(dir, alice);
    const client = await connect(kubeconfig, { requestTimeoutMs: 10_000 });
    const before = await seenDuring(() => eightRequests(client.core, client.requestOptions));
    expect(before.users).toEqual(Array(8).fill("alice"));
    expect(before.opened.length).toBeLessThanOrEqual(2);

    await handOut(dir, bob);
    const after = await seenDuring(() => eightRequests(client.core, client.requestOptions));
    // Every request after the rotation is bob's, on connections opened with bob's certificate…
    expect(after.users).toEqual(Array(8).fill("bob"));
    expect(after.opened.length).toBeGreaterThanOrEqual(1);
    expect(after.opened.length).toBeLessThanOrEqual(2);
    expect(after.opened.map((connection) => connection.user)).toEqual(after.opened.map(() => "bob"));
    // …and kept from then on too.
    const again = await seenDuring(() => eightRequests(client.core, client.requestOptions));
    expect(again.users).toEqual(Array(8).fill("bob"));
    expect(again.opened).toEqual([]);
  });

  test("the dispatcher of the certificate replaced is closed, its connections with it", async () => {
    const dir = await testdir();
    const kc = keepConnections(new KubeConfig(), { closeReplacedAfterMs: 0 });
    kc.loadFromFile(await execKubeconfig(dir));
    const core = kc.makeApiClient(CoreV1Api);
    await handOut(dir, alice);
    const { opened } = await seenDuring(() => eightRequests(core));
    expect(opened.some((connection) => connection.open)).toBe(true);
    await handOut(dir, bob);
    await eightRequests(core);
    // (undici would let them go by itself only after the server's keep-alive time, a minute)
    await eventually(async () => expect(opened.filter((connection) => connection.open)).toEqual([]), 2_000, 20);
    expect(connections.filter((connection) => connection.user === "bob" && connection.open)).not.toEqual([]);
  });

  test("a CLI that is done exits: the connections kept hold no process open", async () => {
    const dir = await testdir({ kubeconfig: kubeconfigOf(alice, "alice") });
    const index = JSON.stringify(fileURLToPath(new URL("./index.ts", import.meta.url)));
    const script = [
      `const { connect } = await import(${index});`,
      `const client = await connect(${JSON.stringify(dir.path("kubeconfig"))}, { requestTimeoutMs: 10_000 });`,
      "for (let i = 0; i < 3; i++) await client.core.listNamespace({}, client.requestOptions);",
      // What keeps the event loop alive once the work is done (undici lets an idle socket go on its next turn)…
      "await new Promise((resolve) => setImmediate(resolve));",
      "console.log(JSON.stringify(process.getActiveResourcesInfo()));",
      // …and until the test has looked at its connection: its stdin, open until the test ends it.
      "process.stdin.resume();",
    ].join("\n");
    const before = connections.length;
    const child = spawn(process.execPath, ["--conditions=source", "--input-type=module", "-e", script], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const printed = await new Promise<string>((resolve, reject) => {
      child.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString("utf8")));
      void exited.then((code) => reject(new Error(`the child exited ${code} before its output`)));
    });
    // No socket keeps it alive (an idle one undici has unref'd is not listed)…
    expect((JSON.parse(printed) as string[]).filter((resource) => /TCP|TLS/.test(resource))).toEqual([]);
    // …while its connection is still open: kept for the next request.
    const opened = connections.slice(before);
    expect(opened.length).toBeLessThanOrEqual(2);
    expect(opened.filter((connection) => connection.open)).not.toEqual([]);
    child.stdin.end();
    // The server asks for a keep-alive of 60 s: a socket that held the process open would keep it that long.
    const timeout = new Promise<string>((resolve) => setTimeout(() => resolve("still running"), 10_000).unref());
    expect(await Promise.race([exited, timeout])).toBe(0);
  });
});
