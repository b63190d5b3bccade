import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { type RegistryAuth, type RunningRegistry, startRegistry } from "@nodekit/registry-harness";
import { testdir, userErrorOf } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { OciClient, type OciClientOptions } from "./client.ts";
import { configFileCredentials, envCredentials } from "./credentials.ts";
import { digestOf } from "./digest.ts";
import { EMPTY_DESCRIPTOR, EMPTY_JSON, MediaType } from "./media-types.ts";

const users = { alice: "alice-secret-pw" };
const aliceEnv = { NODEKIT_REGISTRY_USERNAME: "alice", NODEKIT_REGISTRY_PASSWORD: users.alice };
const encode = (text: string) => new TextEncoder().encode(text);

function clientFor(registry: RunningRegistry, options: OciClientOptions = {}): OciClient {
  return new OciClient({
    plainHttp: registry.caPem === undefined,
    ...(registry.caPem === undefined ? {} : { ca: registry.caPem }),
    credentials: envCredentials(aliceEnv),
    ...options,
  });
}

/** A registry of its own for one test, stopped when the test finishes. */
async function registryForTest(options: Parameters<typeof startRegistry>[0]): Promise<RunningRegistry> {
  const registry = await startRegistry(options);
  onTestFinished(() => registry.stop());
  return registry;
}

/** Push a one-layer artifact under `tag`; returns its manifest's descriptor and the layer. */
async function pushArtifact(client: OciClient, repo: string, tag: string, content: string) {
  await client.pushBlob(repo, EMPTY_JSON, MediaType.Empty);
  const layer = await client.pushBlob(repo, encode(content), "text/plain");
  const manifest = {
    schemaVersion: 2,
    mediaType: MediaType.ImageManifest,
    artifactType: "application/vnd.nodekit.test.v1",
    config: EMPTY_DESCRIPTOR,
    layers: [layer],
  };
  const pushed = await client.putManifest(repo, manifest, { tag });
  return { manifest: pushed.descriptor, layer };
}

const matrix: Array<{ kind: "distribution" | "ggcr"; auth: RegistryAuth["type"] }> = [
  { kind: "distribution", auth: "none" },
  { kind: "distribution", auth: "basic" },
  { kind: "distribution", auth: "token" },
  { kind: "ggcr", auth: "none" },
  { kind: "ggcr", auth: "basic" },
  { kind: "ggcr", auth: "token" },
];

describe.each(matrix)("$kind registry, auth $auth", ({ kind, auth }) => {
  let registry: RunningRegistry;
  beforeAll(async () => {
    const registryAuth: RegistryAuth = auth === "none" ? { type: "none" } : { type: auth, users };
    registry = await startRegistry({ kind, auth: registryAuth });
  }, 60_000);
  afterAll(() => registry?.stop());

  test("pushes an artifact and reads it back by tag and by digest, each read checked", async () => {
    const client = clientFor(registry);
    const repo = `${registry.host}/nodekit/round-trip`;
    const { manifest, layer } = await pushArtifact(client, repo, "v1", "hello registry");

    const resolved = await client.resolve(`${repo}:v1`);
    expect(resolved).toMatchObject({
      digest: manifest.digest,
      mediaType: MediaType.ImageManifest,
      size: manifest.size,
    });
    const byTag = await client.getManifest(`${repo}:v1`);
    const byDigest = await client.getManifest(`${repo}@${manifest.digest}`);
    expect(byTag.descriptor.digest).toBe(manifest.digest);
    expect(byDigest.bytes).toEqual(byTag.bytes);
    expect(byDigest.manifest.layers).toEqual([layer]);
    expect(new TextDecoder().decode(await client.getBlob(repo, layer.digest))).toBe("hello registry");
    expect(await client.headBlob(repo, layer.digest)).toMatchObject({ digest: layer.digest, size: layer.size });
  });

  test("says a missing tag, manifest or blob is not found", async () => {
    const client = clientFor(registry);
    const repo = `${registry.host}/nodekit/round-trip`;
    await pushArtifact(client, repo, "present", "x");
    expect((await userErrorOf(client.getManifest(`${repo}:absent`))).code).toBe("OCI_NOT_FOUND");
    expect((await userErrorOf(client.resolve(`${repo}@${digestOf(encode("nothing"))}`))).code).toBe("OCI_NOT_FOUND");
    expect((await userErrorOf(client.getBlob(repo, digestOf(encode("nothing"))))).code).toBe("OCI_NOT_FOUND");
    expect(await client.headBlob(repo, digestOf(encode("nothing")))).toBeUndefined();
    expect(await client.manifestExists(`${repo}:absent`)).toBeUndefined();
  });

  test(`finds referrers through ${kind === "ggcr" ? "the referrers API" : "the sha256-<hex> tag"}`, async () => {
    const client = clientFor(registry);
    const repo = `${registry.host}/nodekit/referred`;
    const { manifest: subject } = await pushArtifact(client, repo, "v1", "subject");
    expect(await client.referrers(repo, subject.digest)).toMatchObject({ descriptors: [] });

    const sig = await client.pushBlob(repo, encode("signature"), "application/vnd.nodekit.sig");
    const attach = (artifactType: string) =>
      client.attachReferrer(repo, {
        schemaVersion: 2,
        mediaType: MediaType.ImageManifest,
        artifactType,
        config: EMPTY_DESCRIPTOR,
        layers: [sig],
        subject: { mediaType: subject.mediaType, digest: subject.digest, size: subject.size },
        annotations: { "org.opencontainers.image.created": "2026-01-01T00:00:00Z" },
      });
    const first = await attach("application/vnd.nodekit.sig.v1");
    const second = await attach("application/vnd.nodekit.other.v1");
    const via = kind === "ggcr" ? "api" : "tag";
    expect(first.via).toBe(via);

    const all = await client.referrers(repo, subject.digest);
    expect(all.via).toBe(via);
    expect(all.descriptors.map((d) => d.digest).sort()).toEqual(
      [first.descriptor.digest, second.descriptor.digest].sort(),
    );
    const filtered = await client.referrers(repo, subject.digest, { artifactType: "application/vnd.nodekit.sig.v1" });
    expect(filtered.descriptors.map((d) => d.digest)).toEqual([first.descriptor.digest]);
    if (kind === "distribution") {
      // The tag schema: an index under sha256-<hex> that lists both.
      const index = await client.getManifest(`${repo}:${subject.digest.replace(":", "-")}`);
      expect(index.descriptor.mediaType).toBe(MediaType.ImageIndex);
      // Attaching again adds nothing twice.
      await attach("application/vnd.nodekit.sig.v1");
      expect((await client.referrers(repo, subject.digest)).descriptors).toHaveLength(2);
    }
  });

  test("refuses a blob whose stored bytes were changed, naming both digests", async () => {
    const client = clientFor(registry);
    const repo = `${registry.host}/nodekit/tampered`;
    const { layer } = await pushArtifact(client, repo, "v1", "original content");
    await registry.tamperBlob(layer.digest, encode("changed content!"));
    const error = await userErrorOf(client.getBlob(repo, layer.digest));
    expect(error.code).toBe("OCI_DIGEST_MISMATCH");
    expect(error.exitCode).toBe(1);
    expect(error.why).toContain(layer.digest);
    expect(error.why).toContain(digestOf(encode("changed content!")));
  });

  test("verifyBlob hashes a blob as it streams: its size when it matches, OCI_DIGEST_MISMATCH for other bytes of the same size, OCI_NOT_FOUND when absent", async () => {
    const client = clientFor(registry);
    const repo = `${registry.host}/nodekit/streamed`;
    const content = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 31) % 251);
    const blob = await client.pushBlob(repo, content);
    expect(await client.verifyBlob(repo, blob.digest, { size: blob.size })).toEqual({ size: content.length });
    const changed = Uint8Array.from(content);
    changed[content.length - 1] = (changed[content.length - 1] ?? 0) ^ 1;
    await registry.tamperBlob(blob.digest, changed);
    const error = await userErrorOf(client.verifyBlob(repo, blob.digest, { size: blob.size }));
    expect(error.code).toBe("OCI_DIGEST_MISMATCH");
    expect(error.message).toBe(`the blob ${repo}@${blob.digest} does not match its digest`);
    expect(error.why).toContain(`hashes to ${digestOf(changed)}`);
    expect((await userErrorOf(client.verifyBlob(repo, `sha256:${"1".repeat(64)}`))).code).toBe("OCI_NOT_FOUND");
  });

  if (auth !== "none") {
    test("refuses without credentials, and with a wrong password", async () => {
      const repo = `${registry.host}/nodekit/round-trip`;
      const anonymous = new OciClient({ plainHttp: true });
      const none = await userErrorOf(anonymous.getManifest(`${repo}:v1`));
      expect(none.code).toBe("OCI_AUTH_REFUSED");
      expect(none.exitCode).toBe(7);
      const wrong = new OciClient({
        plainHttp: true,
        credentials: envCredentials({ ...aliceEnv, NODEKIT_REGISTRY_PASSWORD: "nope" }),
      });
      const error = await userErrorOf(wrong.getManifest(`${repo}:v1`));
      expect(error.code).toBe("OCI_AUTH_REFUSED");
      expect(`${error.message} ${error.why}`).not.toContain("nope");
    });

    test("ping reports the challenge without sending credentials", async () => {
      const ping = await new OciClient({ plainHttp: true }).ping(registry.host);
      expect(ping.status).toBe(401);
      expect(ping.challenge?.scheme).toBe(auth === "basic" ? "basic" : "bearer");
      if (auth === "token") expect(ping.challenge?.params.realm).toBe(registry.tokenServer?.realm);
    });
  } else {
    test("ping answers 200 with no challenge", async () => {
      const ping = await new OciClient({ plainHttp: true }).ping(registry.host);
      expect(ping).toMatchObject({ status: 200 });
      expect(ping.challenge).toBeUndefined();
    });
  }
});

describe("bearer tokens", () => {
  let registry: RunningRegistry;
  const readers = { bob: "bob-pw", alice: users.alice };
  beforeAll(async () => {
    registry = await startRegistry({
      kind: "distribution",
      auth: {
        type: "token",
        users: readers,
        // bob may only pull; anonymous callers get nothing.
        grant: (user, _repo, requested) =>
          user === "alice" ? requested : user === "bob" ? requested.filter((a) => a === "pull") : [],
      },
    });
  }, 60_000);
  afterAll(() => registry?.stop());

  test("asks for pull to read and pull,push to write, and reuses the tokens", async () => {
    const secrets: string[] = [];
    const client = clientFor(registry, { secrets: { add: (s) => s && secrets.push(s) } });
    const repo = `${registry.host}/nodekit/scoped`;
    const before = registry.tokenServer?.requests.length ?? 0;
    await pushArtifact(client, repo, "v1", "scoped");
    await client.getManifest(`${repo}:v1`);
    await client.getManifest(`${repo}:v1`);
    const asked = registry.tokenServer?.requests.slice(before) ?? [];
    expect(asked.every((r) => r.user === "alice" && r.status === 200)).toBe(true);
    expect(new Set(asked.flatMap((r) => r.scopes))).toEqual(
      new Set(["repository:nodekit/scoped:pull", "repository:nodekit/scoped:pull,push"]),
    );
    // One token per scope, not one per request.
    expect(asked.length).toBeLessThanOrEqual(3);
    expect(secrets).toContain(users.alice);
    expect(secrets.some((s) => s.split(".").length === 3)).toBe(true); // the JWT
  });

  test("authorizePull: one token request for many repositories, then no more for them", async () => {
    const writer = clientFor(registry);
    const repos = ["nodekit/many-a", "nodekit/many-b", "nodekit/many-c"];
    const digests = [];
    for (const repo of repos)
      digests.push((await pushArtifact(writer, `${registry.host}/${repo}`, "v1", repo)).manifest.digest);
    const client = clientFor(registry);
    await client.getManifest(`${registry.host}/${repos[0]}:v1`); // learns the challenge
    const before = registry.tokenServer?.requests.length ?? 0;
    await client.authorizePull(registry.host, [...repos, repos[1] ?? ""]);
    for (const [i, repo] of repos.entries()) {
      expect(await client.manifestExists(`${registry.host}/${repo}@${digests[i]}`)).toMatchObject({
        digest: digests[i],
      });
    }
    const asked = registry.tokenServer?.requests.slice(before) ?? [];
    // The first repository's token was cached by the read; the others come in one request.
    expect(asked).toEqual([
      { user: "alice", status: 200, scopes: repos.slice(1).map((repo) => `repository:${repo}:pull`) },
    ]);
  });

  test("a token without push refuses the upload with OCI_AUTH_REFUSED", async () => {
    const bob = clientFor(registry, {
      credentials: envCredentials({ NODEKIT_REGISTRY_USERNAME: "bob", NODEKIT_REGISTRY_PASSWORD: "bob-pw" }),
    });
    const error = await userErrorOf(bob.pushBlob(`${registry.host}/nodekit/scoped`, encode("bob was here")));
    expect(error.code).toBe("OCI_AUTH_REFUSED");
  });

  test("a token server answering 401 is OCI_AUTH_REFUSED, and nothing is read", async () => {
    const client = clientFor(registry);
    registry.tokenServer?.refuse(true);
    try {
      const error = await userErrorOf(client.getManifest(`${registry.host}/nodekit/scoped:v1`));
      expect(error.code).toBe("OCI_AUTH_REFUSED");
      expect(error.message).toContain("token endpoint");
      expect(error.why).not.toContain(users.alice);
    } finally {
      registry.tokenServer?.refuse(false);
    }
  });
});

describe("transport", () => {
  test("an address nothing listens on is OCI_UNREACHABLE", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((r) => server.close(() => r()));
    const error = await userErrorOf(new OciClient({ plainHttp: true }).getManifest(`127.0.0.1:${port}/x/y:v1`));
    expect(error.code).toBe("OCI_UNREACHABLE");
    expect(error.exitCode).toBe(6);
  });

  test("existence checks (HEAD) keep their connection: twenty checks, not twenty connections", async () => {
    let connections = 0;
    const digest = `sha256:${"a".repeat(64)}`;
    const server = createServer((req, res) => {
      // A registry's HEAD answer: the blob's headers, no body.
      res.writeHead(req.method === "HEAD" ? 200 : 405, { "content-length": "42", "docker-content-digest": digest });
      res.end();
    });
    server.on("connection", () => {
      connections += 1;
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    try {
      const client = new OciClient({ plainHttp: true });
      for (let i = 0; i < 20; i++) {
        expect(await client.headBlob(`127.0.0.1:${port}/x/y`, digest)).toEqual({
          mediaType: "application/octet-stream",
          digest,
          size: 42,
        });
      }
      // undici's default closes the connection after every HEAD: 20 here. Kept, the checks
      // share one (undici may open a second while the first is being returned to its pool).
      expect(connections).toBeLessThanOrEqual(2);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  test("a registry that never answers hits the deadline", async () => {
    const server = createServer(() => {
      // never answers
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    try {
      const error = await userErrorOf(
        new OciClient({ plainHttp: true, timeoutMs: 300 }).getManifest(`127.0.0.1:${port}/x/y:v1`),
      );
      expect(error.code).toBe("OCI_UNREACHABLE");
      expect(error.message).toContain("did not answer within 0.3 s");
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  test("TLS: an untrusted certificate is refused; the registry's CA makes it work", async () => {
    const registry = await registryForTest({ kind: "distribution", tls: true, auth: { type: "basic", users } });
    const repo = `${registry.host}/nodekit/tls`;
    const untrusting = new OciClient({ credentials: envCredentials(aliceEnv) });
    expect((await userErrorOf(untrusting.ping(registry.host))).code).toBe("OCI_TLS_UNTRUSTED");
    const client = clientFor(registry);
    const { manifest } = await pushArtifact(client, repo, "v1", "over tls");
    expect((await client.resolve(`${repo}:v1`)).digest).toBe(manifest.digest);
  });

  test("verifyBlob follows a blob redirect to storage, and a body longer than the blob's size is a mismatch", async () => {
    const registry = await registryForTest({ kind: "ggcr", blobRedirect: true, auth: { type: "basic", users } });
    const client = clientFor(registry);
    const repo = `${registry.host}/nodekit/redirected-verify`;
    const { layer } = await pushArtifact(client, repo, "v1", "stored elsewhere, hashed here");
    expect(await client.verifyBlob(repo, layer.digest, { size: layer.size })).toEqual({ size: layer.size });
    await registry.tamperBlob(layer.digest, encode("stored elsewhere, hashed here, and more"));
    const error = await userErrorOf(client.verifyBlob(repo, layer.digest, { size: layer.size }));
    expect(error.code).toBe("OCI_DIGEST_MISMATCH");
    expect(error.why).toContain(`is longer than its ${layer.size} bytes`);
  });

  test("follows a blob redirect to another origin without the Authorization header", async () => {
    // The storage origin refuses any request that carries the registry's Authorization header.
    const registry = await registryForTest({ kind: "ggcr", blobRedirect: true, auth: { type: "basic", users } });
    const client = clientFor(registry);
    const repo = `${registry.host}/nodekit/redirected`;
    const { layer } = await pushArtifact(client, repo, "v1", "stored elsewhere");
    expect(new TextDecoder().decode(await client.getBlob(repo, layer.digest))).toBe("stored elsewhere");
  });

  test("a manifest over the size cap is not read", async () => {
    const registry = await registryForTest({ kind: "ggcr" });
    const repo = `${registry.host}/nodekit/big`;
    await pushArtifact(clientFor(registry), repo, "v1", "x");
    const error = await userErrorOf(clientFor(registry, { maxManifestBytes: 100 }).getManifest(`${repo}:v1`));
    expect(error.code).toBe("OCI_TOO_LARGE");
  });

  test("a manifest altered in transit is refused by digest, and by the registry's own digest header for a tag", async () => {
    const registry = await registryForTest({ kind: "ggcr" });
    // A loopback proxy that changes one byte of every manifest body it relays.
    const proxy = createServer((req, res) => {
      const upstream = new URL(registry.url);
      const forward = httpRequest(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on("data", (c: Buffer) => chunks.push(c));
          answer.on("end", () => {
            let body = Buffer.concat(chunks);
            if (req.url?.includes("/manifests/") && body.length > 0)
              body = Buffer.from(body.toString().replace('"schemaVersion":2', '"schemaVersion": 2'));
            res.writeHead(answer.statusCode ?? 502, { ...answer.headers, "content-length": String(body.length) });
            res.end(body);
          });
        },
      );
      req.pipe(forward);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const { port } = proxy.address() as AddressInfo;
    try {
      const { manifest } = await pushArtifact(clientFor(registry), `${registry.host}/nodekit/mitm`, "v1", "x");
      const viaProxy = new OciClient({ plainHttp: true });
      const byDigest = await userErrorOf(viaProxy.getManifest(`127.0.0.1:${port}/nodekit/mitm@${manifest.digest}`));
      expect(byDigest.code).toBe("OCI_DIGEST_MISMATCH");
      const byTag = await userErrorOf(viaProxy.getManifest(`127.0.0.1:${port}/nodekit/mitm:v1`));
      expect(byTag.code).toBe("OCI_DIGEST_MISMATCH");
    } finally {
      proxy.closeAllConnections();
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });

  test("reads a docker config.json login (DOCKER_CONFIG) for a Basic-auth registry", async () => {
    const registry = await registryForTest({ kind: "ggcr", auth: { type: "basic", users } });
    const auth = Buffer.from(`alice:${users.alice}`).toString("base64");
    const dir = await testdir({
      "docker/config.json": JSON.stringify({ auths: { [`http://${registry.host}`]: { auth } } }),
    });
    const client = new OciClient({
      plainHttp: true,
      credentials: configFileCredentials({ env: { DOCKER_CONFIG: dir.path("docker") }, homedir: dir.root }),
    });
    await pushArtifact(client, `${registry.host}/nodekit/config-login`, "v1", "logged in");
    expect((await client.resolve(`${registry.host}/nodekit/config-login:v1`)).mediaType).toBe(MediaType.ImageManifest);
  });
});
