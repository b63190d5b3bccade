import { chmod, chown, lstat, mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { otherUser, tempDir, userErrorOf } from "@nodekit/test-utils";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  type CacheEntry,
  type CacheKey,
  cacheDirProblem,
  cacheFilePath,
  defaultTokenCacheDir,
  isFresh,
  readCache,
  refreshAt,
  removeCache,
  writeCache,
} from "./cache.ts";
import { CLIENT_SERVICE_ACCOUNT } from "./constants.ts";

const TOKEN = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXBheWxvYWQ.c2lnbmF0dXJl";
const key: CacheKey = { site: "lab", serviceAccount: CLIENT_SERVICE_ACCOUNT, source: "file:/home/op/lab.kubeconfig" };
const issuedAt = new Date("2030-01-01T12:00:00Z");

function tokenEntry(overrides: Partial<Extract<CacheEntry, { auth: "on" }>> = {}): CacheEntry {
  return {
    auth: "on",
    audience: "nvke-controller",
    configMap: { namespace: "nke-controller", name: "nvke-auth-config" },
    token: TOKEN,
    issuedAt,
    expiresAt: new Date(issuedAt.getTime() + 3600_000),
    ...overrides,
  };
}

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ path: dir, cleanup } = await tempDir("k8s-auth-cache-"));
});
afterEach(() => cleanup());

describe("refresh margin", () => {
  test("a one-hour token is renewed 6 minutes (10%) before it expires", () => {
    const entry = tokenEntry();
    expect(refreshAt(entry)).toEqual(new Date("2030-01-01T12:54:00Z"));
    expect(isFresh(entry, new Date("2030-01-01T12:53:59.999Z"))).toBe(true);
    expect(isFresh(entry, new Date("2030-01-01T12:54:00Z"))).toBe(false);
  });

  test("a short-lived token is renewed at least 60 s before it expires", () => {
    // 10 minutes: 10% is 60 s exactly; 5 minutes: 10% is 30 s, so the 60 s floor applies
    expect(refreshAt(tokenEntry({ expiresAt: new Date(issuedAt.getTime() + 600_000) }))).toEqual(
      new Date("2030-01-01T12:09:00Z"),
    );
    expect(refreshAt(tokenEntry({ expiresAt: new Date(issuedAt.getTime() + 300_000) }))).toEqual(
      new Date("2030-01-01T12:04:00Z"),
    );
  });

  test("a cached 'auth off' is used until it expires, with no margin", () => {
    const entry: CacheEntry = { auth: "off", checkedAt: issuedAt, expiresAt: new Date(issuedAt.getTime() + 300_000) };
    expect(isFresh(entry, new Date("2030-01-01T12:04:59.999Z"))).toBe(true);
    expect(isFresh(entry, new Date("2030-01-01T12:05:00Z"))).toBe(false);
  });
});

describe("cache files", () => {
  test("an entry is written as <dir>/<site>/<namespace>_<name>.json, 0600 in 0700 directories, and read back", async () => {
    // Given a cache directory that does not exist yet
    const cacheDir = join(dir, "nvkectl", "tokens");

    // When an entry is written
    const path = await writeCache(cacheDir, key, tokenEntry());

    // Then it is where the layout says, private to its owner
    expect(path).toBe(join(cacheDir, "lab", "nke-clients_nke-client.json"));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(cacheDir, "lab"))).mode & 0o777).toBe(0o700);
    expect((await stat(cacheDir)).mode & 0o777).toBe(0o700);

    // And it records the site, ServiceAccount, audience and expiry
    const file = JSON.parse(await readFile(path, "utf8"));
    expect(file).toMatchObject({
      version: 1,
      site: "lab",
      serviceAccount: { namespace: "nke-clients", name: "nke-client" },
      state: { auth: "on", audience: "nvke-controller", expiresAt: "2030-01-01T13:00:00.000Z" },
    });

    // And reads back as the same entry
    expect(await readCache(cacheDir, key)).toEqual({ kind: "hit", entry: tokenEntry() });
  });

  test("a directory that exists with wider permissions is narrowed to 0700", async () => {
    const cacheDir = join(dir, "tokens");
    await mkdir(cacheDir, { mode: 0o755 });
    await writeCache(cacheDir, key, tokenEntry());
    expect((await stat(cacheDir)).mode & 0o777).toBe(0o700);
  });

  test("rewriting replaces the file atomically: concurrent writers leave one whole entry and no temporary files", async () => {
    // Given twenty writers racing on the same entry
    const tokens = Array.from({ length: 20 }, (_, i) => `${TOKEN}-${i}`);
    await Promise.all(tokens.map((token) => writeCache(dir, key, tokenEntry({ token }))));

    // Then the file parses and holds one of them
    const result = await readCache(dir, key);
    expect(result.kind).toBe("hit");
    expect(tokens).toContain(result.kind === "hit" && result.entry.auth === "on" ? result.entry.token : "");

    // And nothing else is left in the directory
    expect(await readdir(join(dir, "lab"))).toEqual(["nke-clients_nke-client.json"]);
    expect((await stat(cacheFilePath(dir, key))).mode & 0o777).toBe(0o600);
  });

  test("entries are kept apart by site and ServiceAccount", async () => {
    // Given an entry for lab with nke-clients/nke-client
    await writeCache(dir, key, tokenEntry());

    // Then another site, or another ServiceAccount on the same site, finds nothing
    expect(await readCache(dir, { ...key, site: "edge" })).toEqual({ kind: "miss" });
    expect(await readCache(dir, { ...key, serviceAccount: { namespace: "nke-clients", name: "robot" } })).toEqual({
      kind: "miss",
    });
    expect(await readCache(dir, { ...key, serviceAccount: { namespace: "other", name: "nke-client" } })).toEqual({
      kind: "miss",
    });

    // And each keeps its own token and audience
    await writeCache(dir, { ...key, site: "edge" }, tokenEntry({ token: "edge-token", audience: "edge-audience" }));
    expect(await readCache(dir, { ...key, site: "edge" })).toMatchObject({
      entry: { token: "edge-token", audience: "edge-audience" },
    });
    expect(await readCache(dir, key)).toMatchObject({ entry: { token: TOKEN, audience: "nvke-controller" } });
  });

  test("a new audience replaces the token cached for the old one", async () => {
    await writeCache(dir, key, tokenEntry({ audience: "old-audience", token: "old-token" }));
    await writeCache(dir, key, tokenEntry({ audience: "new-audience", token: "new-token" }));
    expect(await readCache(dir, key)).toMatchObject({
      kind: "hit",
      entry: { audience: "new-audience", token: "new-token" },
    });
  });

  test("an entry written for other cluster credentials is ignored", async () => {
    await writeCache(dir, key, tokenEntry());
    const result = await readCache(dir, { ...key, source: "file:/home/op/other.kubeconfig" });
    expect(result).toEqual({ kind: "ignored", reason: expect.stringMatching(/other cluster credentials/) });
  });

  test("site names that are not plain file names are hashed, so they cannot escape the directory", async () => {
    for (const site of ["../escape", "a/b", ".", "..", "", "x".repeat(300)]) {
      const path = cacheFilePath(dir, { site, serviceAccount: CLIENT_SERVICE_ACCOUNT });
      expect(path.startsWith(`${dir}/_`)).toBe(true);
      expect(path.slice(dir.length + 1).split("/")).toHaveLength(2);
    }
    // And they round-trip
    const odd: CacheKey = { ...key, site: "../escape" };
    await writeCache(dir, odd, tokenEntry());
    expect(await readCache(dir, odd)).toMatchObject({ kind: "hit" });
  });

  test("a corrupt file is ignored without quoting it, and the next write replaces it", async () => {
    // Given a truncated cache file (it holds a token)
    const path = cacheFilePath(dir, key);
    await mkdir(join(dir, "lab"), { recursive: true });
    await writeFile(path, `{"version":1,"state":{"token":"${TOKEN}`, { mode: 0o600 });

    // When it is read
    const result = await readCache(dir, key);

    // Then it is ignored, and the reason names the file but not what is in it
    expect(result).toEqual({ kind: "ignored", reason: `${path} is not valid JSON; it will be replaced` });
    expect(JSON.stringify(result)).not.toContain(TOKEN);

    // And a write replaces it
    await writeCache(dir, key, tokenEntry());
    expect(await readCache(dir, key)).toEqual({ kind: "hit", entry: tokenEntry() });
  });

  test("valid JSON of the wrong shape is ignored, naming the bad fields only", async () => {
    const path = cacheFilePath(dir, key);
    await mkdir(join(dir, "lab"), { recursive: true });
    await writeFile(path, JSON.stringify({ version: 1, site: "lab", state: { auth: "on", token: TOKEN } }), {
      mode: 0o600,
    });
    const result = await readCache(dir, key);
    expect(result.kind).toBe("ignored");
    expect(JSON.stringify(result)).not.toContain(TOKEN);
    expect(result.kind === "ignored" && result.reason).toMatch(/not a token cache file \(.*source.*\)/);
  });

  test("removeCache drops the entry, and dropping a missing one is fine", async () => {
    await writeCache(dir, key, tokenEntry());
    await removeCache(dir, key);
    expect(await readCache(dir, key)).toEqual({ kind: "miss" });
    await expect(removeCache(dir, key)).resolves.toBeUndefined();
  });

  test("an unreadable cache path is ignored, not thrown", async () => {
    await mkdir(cacheFilePath(dir, key), { recursive: true }); // a directory where the file should be
    expect(await readCache(dir, key)).toEqual({
      kind: "ignored",
      reason: expect.stringMatching(/is not a regular file/),
    });
  });
});

describe("a cache other users could reach (issue 9: security 1 and 3)", () => {
  test("a world-readable token file is not used, and removed: the token in it may have been read", async () => {
    const path = await writeCache(dir, key, tokenEntry());
    await chmod(path, 0o644);

    expect(await readCache(dir, key)).toEqual({
      kind: "unsafe",
      reason: `${path} is readable or writable by other users (mode 0644); it was not used and has been removed`,
    });
    await expect(lstat(path)).rejects.toMatchObject({ code: "ENOENT" });
  });

  test("a link planted in the cache is neither read nor written through", async () => {
    const planted = join(dir, "planted.json");
    await writeFile(planted, "not yours\n", { mode: 0o600 });
    await mkdir(join(dir, "lab"), { recursive: true, mode: 0o700 });
    await symlink(planted, cacheFilePath(dir, key));

    expect((await readCache(dir, key)).kind).toBe("unsafe");
    expect((await userErrorOf(writeCache(dir, key, tokenEntry()))).code).toBe("FILE_IS_SYMLINK");
    expect(await readFile(planted, "utf8")).toBe("not yours\n");
  });

  test("a cache directory of one's own that others may write to is reported (the provider then skips the cache)", async () => {
    await mkdir(join(dir, "lab"), { mode: 0o777 });
    await chmod(join(dir, "lab"), 0o777);
    expect(await cacheDirProblem(dir, key)).toBe(
      `the token cache directory ${join(dir, "lab")} is not safe: every user may write to it (mode 0777), so another user could change or replace what is in it`,
    );
  });

  const other = otherUser();
  test.skipIf(other.skip !== undefined)(
    `a cache directory another local user made is not used (${other.skip ?? "as root, against nodekit-other"})`,
    async () => {
      const user = other.user ?? { uid: -1, gid: -1 };
      await mkdir(join(dir, "lab"), { mode: 0o700 });
      await chown(join(dir, "lab"), user.uid, user.gid);
      expect(await cacheDirProblem(dir, key)).toMatch(/is not safe: it belongs to nodekit-other/);
      expect((await userErrorOf(writeCache(dir, key, tokenEntry()))).code).toBe("DIR_UNSAFE");
      expect(await readdir(join(dir, "lab"))).toEqual([]);
    },
  );
});

describe("defaultTokenCacheDir", () => {
  test("is $XDG_CACHE_HOME/nvkectl/tokens, else ~/.cache/nvkectl/tokens", () => {
    expect(defaultTokenCacheDir({ XDG_CACHE_HOME: "/x/cache", HOME: "/home/op" })).toBe("/x/cache/nvkectl/tokens");
    expect(defaultTokenCacheDir({ HOME: "/home/op" })).toBe("/home/op/.cache/nvkectl/tokens");
    // A relative XDG_CACHE_HOME is ignored, as the XDG spec says
    expect(defaultTokenCacheDir({ XDG_CACHE_HOME: "cache", HOME: "/home/op" })).toBe("/home/op/.cache/nvkectl/tokens");
  });
});
