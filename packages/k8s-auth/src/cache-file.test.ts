import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import * as z from "zod";
import { isInstantText, readCacheFile } from "./cache.ts";
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
});

// isInstantText replaced this pattern (zod's own, compiled on first use); it stays here as the judge.
const INSTANT_PATTERN =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$/;

const twoDigit = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, "0"));
/** Instants from their parts, impossible ones included (31 April, 29 February of any year, hour 24, offset +24:00). */
const instantText = fc
  .record({
    year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1900, 2000, 2024, 2100, 2400)),
    month: twoDigit(13),
    day: fc.oneof(twoDigit(32), fc.constantFrom("29", "30", "31")),
    hour: twoDigit(24),
    minute: twoDigit(60),
    second: twoDigit(60),
    fraction: fc.oneof(fc.constant(""), fc.stringMatching(/^\.[0-9]{0,10}$/)),
    zone: fc.oneof(
      fc.constantFrom("Z", "z", ""),
      fc
        .tuple(fc.constantFrom("+", "-", "\u2212"), twoDigit(24), fc.constantFrom(":", ""), twoDigit(60))
        .map((p) => p.join("")),
    ),
  })
  .map(
    (p) =>
      `${String(p.year).padStart(4, "0")}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${p.fraction}${p.zone}`,
  );
const nearChar = fc.oneof(
  fc.constantFrom(..."0123456789-+:.TZ z\u0660\u0669\uff10\u0966\u00b2\n"),
  fc.string({ minLength: 1, maxLength: 1, unit: "binary" }),
);
/** A text with one position replaced, removed, or a character added. */
const nearMiss = fc.oneof(
  fc.tuple(instantText, fc.nat(), nearChar).map(([text, at, char]) => {
    const i = at % text.length;
    return text.slice(0, i) + char + text.slice(i + 1);
  }),
  fc.tuple(instantText, fc.nat()).map(([text, at]) => {
    const i = at % text.length;
    return text.slice(0, i) + text.slice(i + 1);
  }),
  fc.tuple(instantText, fc.nat(), nearChar).map(([text, at, char]) => {
    const i = at % (text.length + 1);
    return text.slice(0, i) + char + text.slice(i);
  }),
);

describe("isInstantText is the pattern it replaced", () => {
  test("the pattern is zod's own", () => {
    expect(INSTANT_PATTERN.source).toBe(z.regexes.datetime({ offset: true }).source);
  });

  test("it says what the pattern says: instants, impossible ones, near-misses at every position, random strings", () => {
    fc.assert(
      fc.property(fc.oneof(instantText, nearMiss, fc.string(), fc.string({ unit: "binary" })), (text) => {
        expect(isInstantText(text)).toBe(INSTANT_PATTERN.test(text));
      }),
      { numRuns: 20000 },
    );
  });

  test("every date as toISOString writes it is accepted and reads back as the same instant", () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date("0000-01-01T00:00:00Z"),
          max: new Date("9999-12-31T23:59:59.999Z"),
          noInvalidDate: true,
        }),
        (date) => {
          const text = date.toISOString();
          expect(isInstantText(text)).toBe(true);
          expect(Date.parse(text)).toBe(date.getTime());
        },
      ),
      { numRuns: 2000 },
    );
  });

  test("what it accepts, Date.parse reads as a date", () => {
    fc.assert(
      fc.property(instantText, (text) => !isInstantText(text) || Number.isFinite(Date.parse(text))),
      { numRuns: 5000 },
    );
  });
});
