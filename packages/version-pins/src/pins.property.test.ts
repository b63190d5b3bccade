import { formatProblem } from "@nodekit/errors";
import fc from "fast-check";
import { dump } from "js-yaml";
import { describe, expect, test } from "vitest";
import { ARCHITECTURES, type Artifact, DEFAULT_PINS, type PinSet, parsePins, pinSetHash } from "./index.ts";

const hex = fc.stringMatching(/^[a-f0-9]{64}$/);
const n = fc.nat({ max: 40 });
const semver = fc.tuple(n, n, n).map(([a, b, c]) => `v${a}.${b}.${c}`);
const artifact: fc.Arbitrary<Artifact> = fc.oneof(
  fc.record({
    url: fc.webUrl({ validSchemes: ["https"] }),
    sha256: hex,
    format: fc.constant("tar.gz" as const),
    member: fc.constantFrom("linux-amd64/helm", "liqoctl", "bin/tool"),
  }),
  fc.record({ url: fc.webUrl({ validSchemes: ["https"] }), sha256: hex, format: fc.constant("binary" as const) }),
);
const artifacts = fc.dictionary(fc.constantFrom(...ARCHITECTURES), artifact, { minKeys: 0, maxKeys: 3 });

/** Valid pin sets: every required tool, liqoctl at Liqo's version, arbitrary artifacts and related tools. */
const pinSet: fc.Arbitrary<PinSet> = fc
  .record({
    name: fc.string({ minLength: 1, maxLength: 30 }),
    k3s: fc.tuple(n, n, n, fc.integer({ min: 1, max: 3 })).map(([a, b, c, k]) => `v${a}.${b}.${c}+k3s${k}`),
    calico: semver,
    liqo: semver,
    helm: fc.tuple(n, n).map(([b, c]) => `v3.${b}.${c}`),
    operator: semver.map((v) => v.slice(1)),
    helmArtifacts: artifacts,
    liqoctlArtifacts: artifacts,
    extra: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/), semver, { maxKeys: 2 }),
  })
  .map((r) => ({
    schemaVersion: 1 as const,
    name: r.name,
    tools: {
      ...Object.fromEntries(Object.entries(r.extra).map(([name, version]) => [name, { version }])),
      k3s: { version: r.k3s },
      calico: { version: r.calico },
      liqo: { version: r.liqo },
      helm: { version: r.helm, artifacts: r.helmArtifacts },
      liqoctl: { version: r.liqo, artifacts: r.liqoctlArtifacts },
      "proxmox-operator": { version: r.operator },
    },
  }));

function shuffleKeys(value: unknown, order: number[]): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const entries = Object.entries(value as Record<string, unknown>);
  const shuffled = entries
    .map((entry, i) => ({ entry, rank: order[i % Math.max(order.length, 1)] ?? i }))
    .sort((a, b) => a.rank - b.rank)
    .map(({ entry: [key, member] }) => [key, shuffleKeys(member, order)] as const);
  return Object.fromEntries(shuffled);
}

describe("pin sets, for any valid one", () => {
  test("read back the same from JSON and from YAML", () => {
    fc.assert(
      fc.property(pinSet, (pins) => {
        for (const text of [JSON.stringify(pins), dump(pins)]) {
          const { value, problems } = parsePins(text, { source: "p" });
          expect(problems).toEqual([]);
          expect(value).toEqual(pins);
        }
      }),
    );
  });

  test("hash the same whatever the key order, and differently when a version changes", () => {
    fc.assert(
      fc.property(pinSet, fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), (pins, order) => {
        expect(pinSetHash(shuffleKeys(pins, order) as PinSet)).toBe(pinSetHash(pins));
        const changed = structuredClone(pins);
        changed.tools.k3s.version = `${changed.tools.k3s.version}0`;
        expect(pinSetHash(changed)).not.toBe(pinSetHash(pins));
      }),
    );
  });
});

describe("any mutation of a pin set", () => {
  const paths: Array<Array<string>> = [
    ["schemaVersion"],
    ["name"],
    ["tools", "k3s", "version"],
    ["tools", "calico", "version"],
    ["tools", "helm", "artifacts", "amd64", "url"],
    ["tools", "helm", "artifacts", "amd64", "sha256"],
    ["tools", "helm", "artifacts", "amd64", "format"],
    ["tools", "liqoctl", "version"],
    ["tools", "proxmox-operator", "chart", "repository"],
  ];
  const junk = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant([]),
    fc.constant({}),
  );

  test("never throws, and each problem is located: source, and a field path with a line when the field is in the text", () => {
    fc.assert(
      fc.property(fc.constantFrom(...paths), junk, fc.boolean(), (path, value, asYaml) => {
        const pins = structuredClone(DEFAULT_PINS) as unknown as Record<string, unknown>;
        let node = pins;
        for (const segment of path.slice(0, -1)) {
          node[segment] ??= {};
          node = node[segment] as Record<string, unknown>;
        }
        node[path.at(-1) ?? ""] = value;
        const text = asYaml ? dump(pins) : JSON.stringify(pins, null, 1);

        const { value: parsed, problems } = parsePins(text, { source: "pins.yaml" });

        if (parsed !== undefined) return; // the mutation happened to be valid (e.g. a name)
        expect(problems.length).toBeGreaterThan(0);
        for (const problem of problems) {
          expect(problem.source).toBe("pins.yaml");
          expect(problem.severity).toBe("error");
          expect(problem.line).toBeGreaterThan(0);
          expect(formatProblem(problem)).not.toMatch(/\n|at .*\.ts:/);
        }
      }),
    );
  });
});
