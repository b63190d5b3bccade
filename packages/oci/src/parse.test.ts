import { userErrorOf } from "@nodekit/test-utils";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseChallenges } from "./challenge.ts";
import {
  chainCredentials,
  configFileCredentials,
  envCredentials,
  formatAuthsFile,
  parseAuthsFile,
} from "./credentials.ts";
import { digestOf, isDigest, matchesDigest } from "./digest.ts";
import { formatReference, parseReference } from "./reference.ts";

const sha = `sha256:${"a".repeat(64)}`;

describe("parseReference", () => {
  test.each([
    ["127.0.0.1:5000/nvke/release:1.4.0", { registry: "127.0.0.1:5000", repository: "nvke/release", tag: "1.4.0" }],
    [`registry.example.com/a/b/c@${sha}`, { registry: "registry.example.com", repository: "a/b/c", digest: sha }],
    [
      `oci://localhost:5000/charts/x:0.1.0@${sha}`,
      { registry: "localhost:5000", repository: "charts/x", tag: "0.1.0", digest: sha },
    ],
    ["[::1]:5000/x", { registry: "[::1]:5000", repository: "x" }],
  ])("%s", (text, expected) => {
    expect(parseReference(text)).toEqual(expected);
  });

  test.each([
    ["release:1.0", "names no registry"],
    ["host/UPPER:1", "not a repository name"],
    ["host/x@sha256:abc", "not a sha256 or sha512 digest"],
    ["host/x:bad tag", "not a valid tag"],
  ])("%s is refused with OCI_INVALID_REFERENCE", async (text, why) => {
    const error = await userErrorOf(Promise.resolve().then(() => parseReference(text)));
    expect(error.code).toBe("OCI_INVALID_REFERENCE");
    expect(error.why).toContain(why);
  });

  test("format is the inverse of parse", () => {
    const component = fc.stringMatching(/^[a-z0-9]+(?:[._-][a-z0-9]+)*$/);
    fc.assert(
      fc.property(
        fc.array(component, { minLength: 1, maxLength: 3 }),
        fc.option(fc.stringMatching(/^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,20}$/), { nil: undefined }),
        fc.option(fc.stringMatching(/^[0-9a-f]{64}$/), { nil: undefined }),
        (path, tag, hex) => {
          const ref = {
            registry: "127.0.0.1:5000",
            repository: path.join("/"),
            ...(tag === undefined ? {} : { tag }),
            ...(hex === undefined ? {} : { digest: `sha256:${hex}` }),
          };
          expect(parseReference(formatReference(ref))).toEqual(ref);
        },
      ),
    );
  });
});

describe("parseChallenges", () => {
  test("a distribution bearer challenge, quoted commas and all", () => {
    expect(
      parseChallenges(
        'Bearer realm="http://127.0.0.1:1/token",service="reg",scope="repository:a/b:pull,push",error="insufficient_scope"',
      ),
    ).toEqual([
      {
        scheme: "bearer",
        params: {
          realm: "http://127.0.0.1:1/token",
          service: "reg",
          scope: "repository:a/b:pull,push",
          error: "insufficient_scope",
        },
      },
    ]);
  });
  test("two challenges, an escaped quote, a token value", () => {
    expect(parseChallenges('Basic realm="a \\"b\\"", Bearer realm=x')).toEqual([
      { scheme: "basic", params: { realm: 'a "b"' } },
      { scheme: "bearer", params: { realm: "x" } },
    ]);
  });
  test("never throws", () => {
    fc.assert(fc.property(fc.string(), (text) => Array.isArray(parseChallenges(text))));
  });
});

describe("credentials", () => {
  const auth = Buffer.from("alice:pa:ss").toString("base64");
  test("auths entries: auth, username/password, scheme and path stripped from the key", () => {
    const found = parseAuthsFile(
      JSON.stringify({
        auths: {
          "https://reg.example.com/v1/": { auth },
          "127.0.0.1:5000": { username: "bob", password: "pw" },
          "helper.example.com": {},
        },
        credsStore: "desktop",
      }),
      "config.json",
    );
    expect(Object.fromEntries(found)).toEqual({
      "reg.example.com": { username: "alice", password: "pa:ss" },
      "127.0.0.1:5000": { username: "bob", password: "pw" },
    });
  });
  test("formatAuthsFile writes the auth form parseAuthsFile reads back, for any user and password", () => {
    expect(JSON.parse(formatAuthsFile({ "127.0.0.1:5000": { username: "ops", password: "pw" } }))).toEqual({
      auths: { "127.0.0.1:5000": { auth: Buffer.from("ops:pw").toString("base64") } },
    });
    const user = fc.string({ minLength: 1 }).filter((name) => !name.includes(":"));
    fc.assert(
      fc.property(user, fc.string(), (username, password) => {
        const text = formatAuthsFile({ "reg.example.com": { username, password } });
        expect(Object.fromEntries(parseAuthsFile(text, "config.json"))).toEqual({
          "reg.example.com": { username, password },
        });
      }),
    );
  });
  test("a malformed file is OCI_CREDENTIALS_INVALID naming the file, and quotes no secret", async () => {
    const error = await userErrorOf(
      Promise.resolve().then(() =>
        parseAuthsFile('{"auths": {"x": {"auth": "bm9jb2xvbg=="}}}', "/h/.docker/config.json"),
      ),
    );
    expect(error.code).toBe("OCI_CREDENTIALS_INVALID");
    expect(error.message).toContain("/h/.docker/config.json");
    expect(`${error.message}${error.why}`).not.toContain("bm9jb2xvbg");
    expect((await userErrorOf(Promise.resolve().then(() => parseAuthsFile("{", "c.json")))).why).toBe(
      "it is not valid JSON",
    );
  });
  test("docker's config first, then helm's registry config; DOCKER_CONFIG and HELM_REGISTRY_CONFIG move them", async () => {
    const files: Record<string, string> = {
      "/home/u/.docker/config.json": JSON.stringify({ auths: { a: { username: "docker", password: "1" } } }),
      "/home/u/.config/helm/registry/config.json": JSON.stringify({
        auths: { a: { username: "helm", password: "2" }, b: { username: "helm", password: "3" } },
      }),
      "/elsewhere/config.json": JSON.stringify({ auths: { a: { username: "moved", password: "4" } } }),
    };
    const readFile = async (path: string) => files[path];
    const store = configFileCredentials({ env: {}, homedir: "/home/u", readFile });
    expect(await store.get("a")).toEqual({ username: "docker", password: "1" });
    expect(await store.get("b")).toEqual({ username: "helm", password: "3" });
    expect(await store.get("c")).toBeUndefined();
    const moved = configFileCredentials({ env: { DOCKER_CONFIG: "/elsewhere" }, homedir: "/home/u", readFile });
    expect(await moved.get("a")).toEqual({ username: "moved", password: "4" });
  });
  test("the environment, optionally for one registry only, comes first in a chain", async () => {
    const env = { NODEKIT_REGISTRY_USERNAME: "e", NODEKIT_REGISTRY_PASSWORD: "p", NODEKIT_REGISTRY_HOST: "https://a" };
    const chain = chainCredentials(envCredentials(env), { get: async () => ({ username: "file", password: "f" }) });
    expect(await chain.get("a")).toEqual({ username: "e", password: "p" });
    expect(await chain.get("b")).toEqual({ username: "file", password: "f" });
  });
});

test("digests: sha256 and sha512, lowercase hex of the right length", () => {
  const bytes = new TextEncoder().encode("{}");
  expect(digestOf(bytes)).toBe("sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  expect(matchesDigest(bytes, digestOf(bytes, "sha512:"))).toBe(true);
  expect(isDigest(`sha256:${"A".repeat(64)}`)).toBe(false);
  expect(isDigest("md5:abc")).toBe(false);
});
