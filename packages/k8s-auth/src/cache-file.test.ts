import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import * as z from "zod";
import { INSTANT_PATTERN, readCacheFile } from "./cache.ts";
import { cacheFileSchema } from "./cache-schema.ts";

// readCacheFile reads a cache hit without zod. Whatever it accepts, the schema must accept
// and turn into the same entry; what the schema accepts as nvkectl writes it, it must accept.

const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const instant = fc.oneof(
  fc
    .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc.constantFrom("2026-12-01T10:00:00+02:00", "2026-12-01T10:00:00", "2026-02-30T00:00:00Z", "yesterday", ""),
);
const text = fc.oneof(fc.string({ maxLength: 6 }), fc.constant(""));
const ref = fc.record({ namespace: text, name: text }, { requiredKeys: [] });
const on = fc.record(
  {
    auth: fc.constant("on"),
    audience: text,
    configMap: ref,
    token: text,
    issuedAt: instant,
    expiresAt: instant,
    extra: text,
  },
  { requiredKeys: ["auth"] },
);
const off = fc.record(
  { auth: fc.constantFrom("off", "maybe"), checkedAt: instant, expiresAt: instant },
  { requiredKeys: ["auth"] },
);
const file = fc
  .record(
    { version: fc.constantFrom(1, 2, "1"), site: text, source: text, serviceAccount: ref, state: fc.oneof(on, off) },
    { requiredKeys: [] },
  )
  .map(asJson);

describe("readCacheFile is held equal to the cache file's zod schema", () => {
  test("what it accepts, zod accepts and reads the same; what it refuses goes to zod", () => {
    fc.assert(
      fc.property(fc.oneof(file, fc.jsonValue({ maxDepth: 2 })), (value) => {
        const fast = readCacheFile(value);
        const parsed = cacheFileSchema.safeParse(value);
        if (fast !== undefined) return parsed.success && isDeepStrictEqual(fast, parsed.data);
        // The only files it may leave to zod are those zod refuses too.
        return !parsed.success;
      }),
      { numRuns: 3000 },
    );
  });

  test("the date-time pattern is zod's own", () => {
    expect(INSTANT_PATTERN.source).toBe(z.regexes.datetime({ offset: true }).source);
  });
});
