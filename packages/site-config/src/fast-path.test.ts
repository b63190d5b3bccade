import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ExitCode } from "@nodekit/errors";
import { mostly, mutatedValues, testdir, userErrorOf } from "@nodekit/test-utils";
import fc from "fast-check";
import { expect, test } from "vitest";
import { parseConfig } from "./parse.ts";
import { API_VERSION, KIND, type SiteConfig } from "./rules.ts";
import { siteConfigSchema } from "./schema.ts";
import { acceptedConfig, loadConfig } from "./store.ts";

// A read takes the config file without zod when the check generated from the schema
// (config.generated.ts) and the schema's own rules (rules.ts) accept it (acceptedConfig);
// anything else goes to the schema. These properties hold the fast path to the schema: when it
// accepts, the schema accepts and returns the same value, its fields in the same order; and
// whichever path a file takes, the reader returns what the schema says (the configuration, or
// CONFIG_INVALID with the problems parseConfig names).

const NAMES = ["lab", "edge", "x"];
const site = fc.record({
  name: mostly(
    fc.oneof(fc.constantFrom(...NAMES), fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/)),
    fc.constantFrom("Lab_1", "", "-lab", "a".repeat(64), "__proto__"),
  ),
  url: mostly(
    fc.oneof(fc.webUrl(), fc.constantFrom("https://lab.example.com", "http://127.0.0.1:30080")),
    fc.constantFrom(
      "ftp://lab.example.com",
      "https://op:secret@lab.example.com",
      "http://",
      "file:///etc/passwd",
      "lab.example.com",
    ),
  ),
  kubeconfig: mostly(
    fc.oneof(
      fc.constant("/home/op/lab.kubeconfig"),
      fc.string({ maxLength: 8 }).map((rest) => `/${rest}`),
    ),
    fc.constantFrom("lab.kubeconfig", "", "./k"),
  ),
});

/** A configuration as nvkectl writes it, with names that may repeat and an active site that may name none. */
const config = fc.array(site, { maxLength: 4 }).chain((sites) =>
  fc
    .option(mostly(fc.constantFrom("lab", ...sites.map((s) => s.name)), fc.string({ maxLength: 4 })), {
      nil: undefined,
    })
    .map((activeSite) => {
      const value: SiteConfig = { apiVersion: API_VERSION, kind: KIND, sites };
      if (activeSite !== undefined) value.activeSite = activeSite;
      return value;
    }),
);

/** Values a mutation puts somewhere: JSON of every kind, and the strings the rules are about. */
const replacement = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(API_VERSION, KIND, "nvkectl.nvke.io/v2", ...NAMES, "https://lab.example.com", "/k/lab", "rel", ""),
);

const KEYS = ["extra", "token", "__proto__", "sites", "activeSite", "name", "url", "kubeconfig"];

/** What the reader sees: the value as JSON text, parsed again. */
const values = mutatedValues(
  config,
  replacement,
  KEYS,
  // No sites: the schema fills them in (an empty list), the fast path leaves that to it.
  { arbitrary: config.map(({ sites: _, ...rest }) => rest), weight: 1 },
).map((value) => JSON.stringify(value));

test("what the fast path accepts, the schema accepts, returning the same value in the same order", () => {
  const taken = { accepted: 0, declined: 0 };
  fc.assert(
    fc.property(values, (text) => {
      const value: unknown = JSON.parse(text);
      const fast = acceptedConfig(value);
      const zod = siteConfigSchema.safeParse(value);
      if (fast === undefined) {
        taken.declined += 1;
        return;
      }
      taken.accepted += 1;
      expect(zod.success).toBe(true);
      expect(fast).toStrictEqual(zod.data);
      expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.data));
    }),
    { numRuns: 10_000 },
  );
  // Both paths are taken often enough for the property to say something.
  expect(taken.accepted).toBeGreaterThan(1_000);
  expect(taken.declined).toBeGreaterThan(1_000);
}, 120_000);

test("whichever path a file takes, loadConfig returns what the schema says", async () => {
  const dir = await testdir({});
  const file = join(dir.root, "nvkectl", "config.yaml");
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const taken = { accepted: 0, schema: 0, invalid: 0 };
  await fc.assert(
    fc.asyncProperty(values, async (text) => {
      await writeFile(file, text, { mode: 0o600 });
      const value: unknown = JSON.parse(text);
      const zod = siteConfigSchema.safeParse(value);
      if (zod.success) {
        taken[acceptedConfig(value) === undefined ? "schema" : "accepted"] += 1;
        const loaded = await loadConfig({ path: file });
        expect(loaded).toStrictEqual({ path: file, config: zod.data, exists: true });
        expect(JSON.stringify(loaded.config)).toBe(JSON.stringify(zod.data));
      } else {
        // What the reader did before the fast path: the schema said no, so the YAML reader
        // (parseConfig) decides: an empty document ("null") is an empty configuration.
        const parsed = parseConfig(text, { source: file });
        if (parsed.config !== undefined) {
          taken.schema += 1;
          expect(await loadConfig({ path: file })).toStrictEqual({ path: file, config: parsed.config, exists: true });
          return;
        }
        taken.invalid += 1;
        const error = await userErrorOf(loadConfig({ path: file }));
        expect(error.code).toBe("CONFIG_INVALID");
        expect(error.exitCode).toBe(ExitCode.InvalidInput);
        expect(error.problems).toEqual(parsed.problems);
      }
    }),
    { numRuns: 1_000 },
  );
  expect(taken.accepted).toBeGreaterThan(50);
  expect(taken.schema).toBeGreaterThan(0);
  expect(taken.invalid).toBeGreaterThan(50);
}, 300_000);
