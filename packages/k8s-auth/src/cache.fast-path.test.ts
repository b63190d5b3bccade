import { mostly, mutatedValues } from "@nodekit/test-utils";
import fc from "fast-check";
import { expect, test } from "vitest";
import { acceptedCacheFile, type CacheKey, parseCacheFile } from "./cache.ts";
import { cacheFileSchema } from "./cache-schema.ts";
import { CLIENT_SERVICE_ACCOUNT } from "./constants.ts";

// A read takes the token cache file without zod when the check generated from the schema
// (cache.generated.ts) accepts it, and turns its instants into Dates with the schema's own
// transform (acceptedCacheFile); anything else goes to the schema. These properties hold the
// fast path to the schema: when it accepts, the schema accepts and returns an equal value; and
// whichever path a file takes, the reader's answer is what the schema says.

const key: CacheKey = { site: "lab", serviceAccount: CLIENT_SERVICE_ACCOUNT, source: "file:/home/op/lab.kubeconfig" };
const PATH = "/c/lab/nke-clients_nke-client.json";

const OFFSETS = ["Z", "+00:00", "+05:30", "-08:00", "+23:59"];
/** RFC 3339 instants as a writer might put them (with or without fractions, any offset), and some that are not. */
const instant = mostly(
  fc
    .tuple(
      fc.date({ min: new Date("0000-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }),
      fc.constantFrom(...OFFSETS),
      fc.constantFrom("", ".5", ".123456789"),
    )
    .map(([date, offset, fraction]) => date.toISOString().replace(/\.\d{3}Z$/, `${fraction}${offset}`)),
  fc.constantFrom(
    "2030-13-01T00:00:00Z",
    "2031-02-29T00:00:00Z",
    "2032-02-29T00:00:00Z",
    "2030-01-01T24:00:00Z",
    "2030-01-01T12:00:00",
    "2030-01-01 12:00:00Z",
    "2030-01-01T12:00:00+0530",
    "2030-01-01",
    "",
  ),
);
const name = mostly(fc.constantFrom("nke-clients", "nke-client", "nke-controller"), fc.constantFrom("", "x"));
const ref = fc.record({ namespace: name, name });
const state = fc.oneof(
  fc.record({
    auth: fc.constant("on"),
    audience: mostly(fc.constantFrom("nvke", "https://kubernetes.default.svc"), fc.constant("")),
    configMap: ref,
    token: mostly(fc.constantFrom("tok.en.value", "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"), fc.constant("")),
    issuedAt: instant,
    expiresAt: instant,
  }),
  fc.record({ auth: fc.constant("off"), checkedAt: instant, expiresAt: instant }),
);
const file = fc.record({
  version: mostly(fc.constant(1), fc.constantFrom(2, 0, 1.5)),
  site: fc.constantFrom("lab", "edge", ""),
  source: fc.constantFrom(key.source, "file:/home/op/edge.kubeconfig", "server:https://10.0.0.1:6443 user:op"),
  serviceAccount: mostly(fc.constant(CLIENT_SERVICE_ACCOUNT), ref),
  state,
});

const replacement = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom<unknown>("on", "off", 1, "", "lab", "2030-01-01T12:00:00Z", "2030-01-01T12:00:00.5+05:30"),
);
const KEYS = ["extra", "__proto__", "token", "auth", "issuedAt", "checkedAt", "expiresAt", "version"];

/** What the reader sees: the file's JSON text, as bytes. */
const files = mutatedValues(file, replacement, KEYS).map(
  (value) => new Uint8Array(Buffer.from(JSON.stringify(value), "utf8")),
);

/** The parsed JSON of `bytes`. */
const jsonOf = (bytes: Uint8Array): unknown => JSON.parse(Buffer.from(bytes).toString("utf8"));

test("what the fast path accepts, the schema accepts, returning an equal value (the same instants)", () => {
  const taken = { accepted: 0, declined: 0 };
  fc.assert(
    fc.property(files, (bytes) => {
      const value = jsonOf(bytes);
      const fast = acceptedCacheFile(value);
      if (fast === undefined) {
        taken.declined += 1;
        return;
      }
      taken.accepted += 1;
      const zod = cacheFileSchema.safeParse(value);
      expect(zod.success).toBe(true);
      expect(fast).toStrictEqual(zod.data);
    }),
    { numRuns: 10_000 },
  );
  // Both paths are taken often enough for the property to say something.
  expect(taken.accepted).toBeGreaterThan(1_000);
  expect(taken.declined).toBeGreaterThan(1_000);
}, 120_000);

test("whichever path a file takes, the reader's answer is what the schema says", async () => {
  const taken = { accepted: 0, schema: 0, refused: 0 };
  await fc.assert(
    fc.asyncProperty(files, async (bytes) => {
      const value = jsonOf(bytes);
      const lookup = await parseCacheFile(bytes, PATH, key);
      const zod = cacheFileSchema.safeParse(value);
      if (!zod.success) {
        taken.refused += 1;
        const fields = [...new Set(zod.error.issues.map((issue) => issue.path.join(".") || "(root)"))];
        expect(lookup).toStrictEqual({
          kind: "ignored",
          reason: `${PATH} is not a token cache file (${fields.join(", ")}); it will be replaced`,
        });
        return;
      }
      taken[acceptedCacheFile(value) === undefined ? "schema" : "accepted"] += 1;
      const data = zod.data;
      const ours =
        data.site === key.site &&
        data.serviceAccount.namespace === key.serviceAccount.namespace &&
        data.serviceAccount.name === key.serviceAccount.name;
      if (!ours) {
        expect(lookup).toStrictEqual({
          kind: "ignored",
          reason: `${PATH} belongs to another site or ServiceAccount; it will be replaced`,
        });
      } else if (data.source !== key.source) {
        expect(lookup).toStrictEqual({
          kind: "ignored",
          reason: `${PATH} was written for other cluster credentials; it will be replaced`,
        });
      } else {
        expect(lookup).toStrictEqual({ kind: "hit", entry: data.state });
      }
    }),
    { numRuns: 10_000 },
  );
  expect(taken.accepted).toBeGreaterThan(1_000);
  // A file with a key the schema drops: the schema returns it without that key.
  expect(taken.schema).toBeGreaterThan(100);
  expect(taken.refused).toBeGreaterThan(1_000);
}, 120_000);
