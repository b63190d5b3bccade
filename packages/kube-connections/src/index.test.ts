import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HttpMethod, KubeConfig, RequestContext } from "@kubernetes/client-node";
import { afterEach, describe, expect, test } from "vitest";
import { keepConnections } from "./index.ts";

// Which dispatcher each request of a KubeConfig is given, without a server: undici reads the
// certificates only when it connects (packages/kube's connections test connects, counting
// the TLS connections a real server accepts).

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const b64 = (text: string) => Buffer.from(text).toString("base64");

/** A kubeconfig of one cluster and two users: `alice`'s certificate and key inline, `bob`'s in files. */
async function kubeconfig(): Promise<{ kc: KubeConfig; certFile: string }> {
  const dir = await mkdtemp(join(tmpdir(), "kube-connections-"));
  dirs.push(dir);
  const certFile = join(dir, "bob.crt");
  await writeFile(certFile, "bob's certificate");
  await writeFile(join(dir, "bob.key"), "bob's key");
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "lab", server: "https://127.0.0.1:6443", caData: b64("the lab's CA") }],
    users: [
      { name: "alice", certData: b64("alice's certificate"), keyData: b64("alice's key") },
      { name: "bob", certFile, keyFile: join(dir, "bob.key") },
    ],
    contexts: [
      { name: "alice", cluster: "lab", user: "alice" },
      { name: "bob", cluster: "lab", user: "bob" },
    ],
    currentContext: "alice",
  });
  return { kc, certFile };
}

/** The dispatcher the KubeConfig gives a request. */
async function dispatcherOf(kc: KubeConfig) {
  const context = new RequestContext("https://127.0.0.1:6443/api/v1/namespaces", HttpMethod.GET);
  await kc.applySecurityAuthentication(context);
  return context.getDispatcher();
}

describe("keepConnections", () => {
  test("every request of a cluster and user is given one dispatcher", async () => {
    const { kc } = await kubeconfig();
    expect(keepConnections(kc)).toBe(kc);
    const first = await dispatcherOf(kc);
    expect(first).toBeDefined();
    expect(await dispatcherOf(kc)).toBe(first);
    expect(await Promise.all([dispatcherOf(kc), dispatcherOf(kc)])).toEqual([first, first]);
  });

  test("where @kubernetes/client-node gives each request a new one", async () => {
    // If this fails, client-node keeps its connections itself and this package can go.
    const { kc } = await kubeconfig();
    expect(await dispatcherOf(kc)).not.toBe(await dispatcherOf(kc));
  });

  test("another user gets a dispatcher of their own", async () => {
    const { kc } = await kubeconfig();
    keepConnections(kc);
    const alice = await dispatcherOf(kc);
    kc.setCurrentContext("bob");
    const bob = await dispatcherOf(kc);
    expect(bob).not.toBe(alice);
    expect(await dispatcherOf(kc)).toBe(bob);
    kc.setCurrentContext("alice");
    expect(await dispatcherOf(kc)).toBe(alice);
  });

  test("a certificate file replaced gets a new dispatcher, and the old one is closed", async () => {
    const { kc, certFile } = await kubeconfig();
    keepConnections(kc, { closeReplacedAfterMs: 0 });
    kc.setCurrentContext("bob");
    const before = await dispatcherOf(kc);
    await writeFile(certFile, "bob's certificate");
    expect(await dispatcherOf(kc)).toBe(before); // the same bytes: the same dispatcher
    await writeFile(certFile, "bob's renewed certificate");
    const after = await dispatcherOf(kc);
    expect(after).not.toBe(before);
    expect(await dispatcherOf(kc)).toBe(after);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((before as unknown as { closed: boolean }).closed).toBe(true);
    expect((after as unknown as { closed: boolean }).closed).toBe(false);
  });

  test("keeping twice keeps one pool", async () => {
    const { kc } = await kubeconfig();
    keepConnections(kc);
    const first = await dispatcherOf(kc);
    keepConnections(kc);
    expect(await dispatcherOf(kc)).toBe(first);
  });
});
