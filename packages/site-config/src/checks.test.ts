import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { API_VERSION, isSiteConfig, KIND } from "./checks.ts";
import { siteConfigSchema } from "./schema.ts";

// isSiteConfig lets a valid config file be read without zod; it must say yes exactly when
// the zod schema accepts the value and returns it unchanged.

const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const name = fc.oneof(fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?$/), fc.constantFrom("Lab", "", "a_b"));
const url = fc.oneof(
  name.map((n) => `https://${n || "x"}.example.com`),
  fc.constantFrom("http://127.0.0.1:30080", "ftp://x", "not a url", "https://user:pw@h", "https://"),
);
const kubeconfig = fc.oneof(
  name.map((n) => `/home/op/${n}.kubeconfig`),
  fc.constantFrom("", "relative.kubeconfig"),
);
const site = fc
  .record(
    { name, url, kubeconfig, extra: fc.option(fc.string(), { nil: undefined }) },
    { requiredKeys: ["name", "url", "kubeconfig"] },
  )
  .map(asJson);
const config = fc
  .record(
    {
      apiVersion: fc.constantFrom(API_VERSION, "v0"),
      kind: fc.constantFrom(KIND, "Other"),
      activeSite: fc.oneof(name, fc.integer()),
      sites: fc.array(site, { maxLength: 4 }),
      surprise: fc.string(),
    },
    { requiredKeys: [] },
  )
  .map(asJson);

function agrees(value: unknown): boolean {
  const parsed = siteConfigSchema.safeParse(value);
  return isSiteConfig(value) === (parsed.success && isDeepStrictEqual(parsed.data, value));
}

describe("isSiteConfig is held equal to the zod schema", () => {
  test("for random configurations, valid and not", () => {
    fc.assert(fc.property(fc.oneof(config, fc.jsonValue({ maxDepth: 2 })), agrees), { numRuns: 3000 });
  });

  test("accepts what nvkectl writes, refuses what zod would change or reject", () => {
    const valid = {
      apiVersion: API_VERSION,
      kind: KIND,
      activeSite: "lab",
      sites: [{ name: "lab", url: "https://lab.example.com", kubeconfig: "/home/op/lab.kubeconfig" }],
    };
    expect(isSiteConfig(valid)).toBe(true);
    expect(isSiteConfig({ apiVersion: API_VERSION, kind: KIND })).toBe(false); // sites would be filled in
    expect(isSiteConfig({ ...valid, activeSite: "edge" })).toBe(false);
    expect(isSiteConfig({ ...valid, sites: [...valid.sites, ...valid.sites] })).toBe(false);
    for (const value of [valid, { apiVersion: API_VERSION, kind: KIND }, { ...valid, activeSite: "edge" }]) {
      expect(agrees(value)).toBe(true);
    }
  });
});
