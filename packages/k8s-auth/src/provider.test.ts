import { execFile } from "node:child_process";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { UserError } from "@nodekit/errors";
import { tempDir } from "@nodekit/test-utils";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type CacheEntry, type CacheKey, cacheFilePath, writeCache } from "./cache.ts";
import { CLIENT_SERVICE_ACCOUNT } from "./constants.ts";
import type { TokenProviderOptions } from "./provider.ts";
import { recordingProvider } from "./test-support.ts";

const TOKEN = "eyJhbGciOiJSUzI1NiJ9.cHJvdmlkZXItdGVzdA.c2lnbmF0dXJl";
const issuedAt = new Date("2030-01-01T12:00:00Z");
const at = (minutes: number) => new Date(issuedAt.getTime() + minutes * 60_000);

let dir: string;
let cleanup: () => Promise<void>;
let kubeconfig: string;
beforeEach(async () => {
  ({ path: dir, cleanup } = await tempDir("k8s-auth-provider-"));
  // Never created: any attempt to ask the cluster fails with KUBECONFIG_NOT_FOUND.
  kubeconfig = join(dir, "absent.kubeconfig");
});
afterEach(() => cleanup());

function keyFor(site = "lab"): CacheKey {
  return { site, serviceAccount: CLIENT_SERVICE_ACCOUNT, source: `file:${kubeconfig}` };
}

const cachedToken: CacheEntry = {
  auth: "on",
  audience: "nvke-controller",
  configMap: { namespace: "nke-controller", name: "nvke-auth-config" },
  token: TOKEN,
  issuedAt,
  expiresAt: at(60),
};

/** A provider on a fake clock that records its events and the tokens it hands out. */
const provider = (now: Date, overrides: Partial<TokenProviderOptions> = {}) =>
  recordingProvider({ kubeconfig, cacheDir: join(dir, "tokens"), now: () => now, ...overrides });

async function askedTheCluster(promise: Promise<unknown>): Promise<boolean> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error === undefined) return false;
  if (error instanceof UserError && error.code === "KUBECONFIG_NOT_FOUND") return true;
  throw error;
}

describe("createTokenProvider with a cached token", () => {
  test("a fresh token comes from the cache, is handed to onToken, and the cluster is not asked", async () => {
    // Given a one-hour token cached at 12:00
    await writeCache(join(dir, "tokens"), keyFor(), cachedToken);

    // When a token is asked for at 12:08
    const { tokens, events, handed } = provider(at(8));
    const token = await tokens.token();

    // Then it is the cached one, registered for redaction, and the log says how long it lasts
    expect(token).toBe(TOKEN);
    expect(handed).toEqual([TOKEN]);
    expect(events).toEqual([
      {
        type: "cache-hit",
        message: "using cached token, expires in 52m",
        fields: { site: "lab", audience: "nvke-controller", expiresAt: "2030-01-01T13:00:00.000Z" },
      },
    ]);
  });

  test("within the refresh margin (the last 10% of its life) the token is renewed from the cluster", async () => {
    await writeCache(join(dir, "tokens"), keyFor(), cachedToken);

    // 12:53:59 is still fresh
    expect(await provider(new Date(at(54).getTime() - 1000)).tokens.token()).toBe(TOKEN);

    // 12:54 is not: the provider goes to the cluster (here: a kubeconfig that does not exist)
    const late = provider(at(54));
    expect(await askedTheCluster(late.tokens.token())).toBe(true);
    expect(late.types()).toEqual(["cache-stale"]);
    expect(late.handed).toEqual([]);
  });

  test("invalidate() drops the token: the next call asks the cluster", async () => {
    await writeCache(join(dir, "tokens"), keyFor(), cachedToken);
    const { tokens, types } = provider(at(1));
    expect(await tokens.token()).toBe(TOKEN);

    await tokens.invalidate();

    await expect(stat(cacheFilePath(join(dir, "tokens"), keyFor()))).rejects.toMatchObject({ code: "ENOENT" });
    expect(await askedTheCluster(tokens.token())).toBe(true);
    expect(types()).toEqual(["cache-hit", "cache-invalidated", "cache-miss"]);
  });

  test("a token cached for another site or ServiceAccount is not used", async () => {
    await writeCache(join(dir, "tokens"), keyFor("edge"), cachedToken);
    expect(await askedTheCluster(provider(at(1)).tokens.token())).toBe(true);

    await writeCache(join(dir, "tokens"), keyFor("lab"), cachedToken);
    const other = provider(at(1), { serviceAccount: { namespace: "nke-clients", name: "robot" } });
    expect(await askedTheCluster(other.tokens.token())).toBe(true);
  });

  test("a corrupt cache file is ignored (without quoting it) and the cluster is asked", async () => {
    const path = cacheFilePath(join(dir, "tokens"), keyFor());
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, `{"token":"${TOKEN}"`, { mode: 0o600 });

    const { tokens, events } = provider(at(1));
    expect(await askedTheCluster(tokens.token())).toBe(true);
    expect(events.map((e) => e.type)).toEqual(["cache-ignored"]);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
  });

  test("the token never appears in events", async () => {
    await writeCache(join(dir, "tokens"), keyFor(), cachedToken);
    const { tokens, events } = provider(at(1));
    await tokens.token();
    await tokens.invalidate();
    expect(events.length).toBeGreaterThan(0);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
  });

  test("concurrent calls share one lookup", async () => {
    await writeCache(join(dir, "tokens"), keyFor(), cachedToken);
    const { tokens, types } = provider(at(1));
    expect(await Promise.all([tokens.token(), tokens.token(), tokens.token()])).toEqual([TOKEN, TOKEN, TOKEN]);
    expect(types()).toEqual(["cache-hit"]);
  });
});

describe("createTokenProvider with auth cached as off", () => {
  const off: CacheEntry = { auth: "off", checkedAt: issuedAt, expiresAt: at(5) };

  test("answers no token until the marker expires, then asks the cluster again", async () => {
    await writeCache(join(dir, "tokens"), keyFor(), off);

    const early = provider(at(4));
    expect(await early.tokens.token()).toBeUndefined();
    expect(early.events).toEqual([
      {
        type: "cache-auth-off",
        message: "auth off (cached; asking the cluster again in 60s)",
        fields: { site: "lab" },
      },
    ]);
    expect(early.handed).toEqual([]);

    expect(await askedTheCluster(provider(at(5)).tokens.token())).toBe(true);
  });

  test("invalidate() drops it too (the controller answered 401, so auth is on now)", async () => {
    await writeCache(join(dir, "tokens"), keyFor(), off);
    const { tokens } = provider(at(1));
    await tokens.invalidate();
    expect(await askedTheCluster(tokens.token())).toBe(true);
  });
});

describe("createTokenProvider options", () => {
  test("a lifetime under 600 s is refused up front", () => {
    expect(() => provider(at(0), { expirationSeconds: 60 })).toThrow(
      expect.objectContaining({ code: "AUTH_TOKEN_EXPIRATION_INVALID", exitCode: 2 }),
    );
  });
});

describe("a cache hit does not load @kubernetes/client-node", () => {
  const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  // Loaded with --import before anything else: any resolution of @kubernetes/client-node
  // (static import, dynamic import or require) throws, so the script fails if it happens.
  const hook = `data:text/javascript,${encodeURIComponent(
    `import { registerHooks } from "node:module";
     registerHooks({ resolve(specifier, context, next) {
       if (specifier === "@kubernetes/client-node" || specifier.startsWith("@kubernetes/client-node/"))
         throw new Error("FORBIDDEN IMPORT: @kubernetes/client-node");
       return next(specifier, context);
     } });`,
  )}`;
  // Runs as a platform team would: imports the package by name (from source) and asks for a token.
  const script = `
    import { createTokenProvider } from "@nodekit/k8s-auth";
    const tokens = createTokenProvider({
      site: "lab",
      kubeconfig: process.env.TEST_KUBECONFIG,
      cacheDir: process.env.TEST_CACHE_DIR,
      now: () => new Date(process.env.TEST_NOW),
    });
    const token = await tokens.token();
    process.stdout.write(JSON.stringify({ result: token === undefined ? "auth off" : token === process.env.TEST_TOKEN ? "cached token" : "other" }));
  `;
  const run = (now: Date) =>
    promisify(execFile)(
      process.execPath,
      ["--conditions=source", "--import", hook, "--input-type=module", "-e", script],
      {
        cwd: packageDir,
        env: {
          PATH: process.env.PATH,
          TEST_KUBECONFIG: kubeconfig,
          TEST_CACHE_DIR: join(dir, "tokens"),
          TEST_NOW: now.toISOString(),
          TEST_TOKEN: TOKEN,
        },
        timeout: 20_000,
      },
    );

  test("with a fresh cached token the token is served and client-node is never resolved", async () => {
    await writeCache(join(dir, "tokens"), keyFor(), cachedToken);
    const { stdout } = await run(at(1));
    expect(JSON.parse(stdout)).toEqual({ result: "cached token" });
  });

  test("with 'auth off' cached, neither", async () => {
    await writeCache(join(dir, "tokens"), keyFor(), { auth: "off", checkedAt: issuedAt, expiresAt: at(5) });
    const { stdout } = await run(at(1));
    expect(JSON.parse(stdout)).toEqual({ result: "auth off" });
  });

  test("control: with a stale token the same script does try to load client-node, and the hook stops it", async () => {
    await writeCache(join(dir, "tokens"), keyFor(), cachedToken);
    const failure = await run(at(59)).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain("FORBIDDEN IMPORT: @kubernetes/client-node");
    // And the cached file is untouched
    expect(JSON.parse(await readFile(cacheFilePath(join(dir, "tokens"), keyFor()), "utf8")).state.token).toBe(TOKEN);
  });
});
