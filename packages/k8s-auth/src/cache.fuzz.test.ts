import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { everyFuzzRun, FUZZ_RUNS, fuzzBytes, testdir } from "@nodekit/test-utils";
import fc from "fast-check";
import { expect, test } from "vitest";
import { type CacheKey, cacheFilePath, parseCacheFile, readCache } from "./cache.ts";
import { CLIENT_SERVICE_ACCOUNT } from "./constants.ts";

// Issue 9, "done when": 10,000 generated token cache files through the reader, with no
// crash; a file that is not an entry of ours is ignored, and no reason quotes the file.

const key: CacheKey = { site: "lab", serviceAccount: CLIENT_SERVICE_ACCOUNT, source: "file:/home/op/lab.kubeconfig" };
const entry = JSON.stringify(
  {
    version: 1,
    site: "lab",
    source: key.source,
    serviceAccount: CLIENT_SERVICE_ACCOUNT,
    state: {
      auth: "on",
      audience: "nvke",
      configMap: { namespace: "nke-controller", name: "nvke-auth-config" },
      token: "tok.en.value",
      issuedAt: "2030-01-01T12:00:00.000Z",
      expiresAt: "2030-01-01T13:00:00.000Z",
    },
  },
  null,
  2,
);
const off = JSON.stringify({
  version: 1,
  site: "lab",
  source: key.source,
  serviceAccount: CLIENT_SERVICE_ACCOUNT,
  state: { auth: "off", checkedAt: "2030-01-01T12:00:00Z", expiresAt: "2030-01-01T12:05:00Z" },
});
const tokens = ['"token"', '"auth"', '"on"', '"off"', '"version"', "1", "2", '"expiresAt"', '"2030-13-01T00:00:00Z"'];

test(`the token cache reader takes ${FUZZ_RUNS} generated files without a crash, and never quotes one`, async () => {
  await everyFuzzRun(fuzzBytes([entry, off], tokens), async (bytes) => {
    const lookup = await parseCacheFile(bytes, "/c/lab/nke-clients_nke-client.json", key);
    expect(["hit", "ignored"]).toContain(lookup.kind);
    if (lookup.kind === "ignored") expect(lookup.reason).not.toContain("tok.en.value");
  });
}, 300_000);

test("and from disk, through readCache itself", async () => {
  const dir = await testdir({});
  const path = cacheFilePath(dir.root, key);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await fc.assert(
    fc.asyncProperty(fuzzBytes([entry, off], tokens), async (bytes) => {
      await writeFile(path, bytes, { mode: 0o600 });
      const lookup = await readCache(dir.root, key);
      expect(["hit", "ignored"]).toContain(lookup.kind);
    }),
    { numRuns: 300 },
  );
}, 300_000);
