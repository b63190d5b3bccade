import { describe, expect, test } from "vitest";
import type { InstallRecord, RecordContent } from "./install-record.ts";
import { type ContractOf, contractIn, planUpgrade } from "./upgrade-plan.ts";

const digest = (c: string) => `sha256:${c.repeat(64)}`;

const record: InstallRecord = {
  installedAt: "2026-12-01T10:00:00.000Z",
  site: "lab",
  deployPath: "nico",
  release: { name: "nvke", version: "0.9.0", digest: digest("a"), file: "release.json" },
  items: [
    {
      id: "spire",
      kind: "chart",
      version: "0.5.0",
      chart: "spire",
      release: "spire",
      namespace: "spire",
      digest: digest("1"),
    },
    {
      id: "nvke-controller",
      kind: "chart",
      version: "0.9.0",
      chart: "nvke-controller",
      release: "nvke-controller",
      namespace: "nke-controller",
      digest: digest("2"),
    },
    { id: "extras", kind: "manifests", digest: digest("3") },
  ],
  providers: [
    { type: "CoreProvider", name: "cluster-api", version: "v1.11.7" },
    { type: "InfrastructureProvider", name: "nico", version: "v0.3.0" },
  ],
  certManager: "v1.19.1",
  namespaces: ["nke-controller"],
  crds: [],
  stackConfigSha256: digest("c"),
  objects: [],
};

/** The record's release (the fixture names one): the targets below edit it. */
const recordRelease = record.release ?? expect.unreachable("the record names a release");

const target = (edit: (t: RecordContent) => RecordContent): RecordContent => {
  const { installedAt: _time, ...content } = structuredClone(record);
  return edit(content);
};

/** Contracts as metadata.yaml release series would say them. */
const contracts: ContractOf = (p, version) =>
  contractIn(
    {
      releaseSeries:
        p.name === "cluster-api"
          ? [
              { major: 1, minor: 10, contract: "v1beta1" },
              { major: 1, minor: 11, contract: "v1beta2" },
              { major: 1, minor: 12, contract: "v1beta2" },
            ]
          : [
              { major: 0, minor: 3, contract: "v1beta2" },
              { major: 0, minor: 4, contract: "v1beta2" },
              { major: 0, minor: 5, contract: "v1beta1" },
            ],
    },
    version,
  );

describe("upgrade plan: the record against the target, under clusterctl's rules", () => {
  test("one chart and one provider newer: per item from → to and what restarts; the rest unchanged", () => {
    const plan = planUpgrade(
      record,
      target((t) => ({
        ...t,
        release: { ...recordRelease, version: "0.10.0", digest: digest("b") },
        items: t.items.map((i) => (i.id === "nvke-controller" ? { ...i, version: "0.10.0", digest: digest("9") } : i)),
        providers: t.providers.map((p) => (p.name === "nico" ? { ...p, version: "v0.4.0" } : p)),
      })),
      contracts,
    );
    expect(plan.refused).toEqual([]);
    expect(plan.from).toEqual({ release: "nvke 0.9.0", deployPath: "nico", installedAt: record.installedAt });
    expect(plan.to).toEqual({ release: "nvke 0.10.0", deployPath: "nico" });
    expect(plan.items.map((i) => [i.id, i.change, i.fromVersion, i.toVersion])).toEqual([
      ["spire", "unchanged", "0.5.0", "0.5.0"],
      ["nvke-controller", "changed", "0.9.0", "0.10.0"],
      ["extras", "unchanged", undefined, undefined],
    ]);
    expect(plan.items[1]?.restarts).toMatch(/^helm upgrade of release nvke-controller in nke-controller/);
    expect(plan.providers.map((p) => [p.name, p.change, p.from, p.to, p.fromContract, p.toContract])).toEqual([
      ["cluster-api", "unchanged", "v1.11.7", "v1.11.7", "v1beta2", "v1beta2"],
      ["nico", "upgrade", "v0.3.0", "v0.4.0", "v1beta2", "v1beta2"],
    ]);
    expect(plan.stackConfigChanged).toBe(false);
  });

  test("refused: a provider downgrade, a contract that goes back or is skipped, an older release, a chart downgrade", () => {
    const plan = planUpgrade(
      record,
      target((t) => ({
        ...t,
        release: { ...recordRelease, version: "0.8.1" },
        items: t.items.map((i) => (i.id === "spire" ? { ...i, version: "0.4.9" } : i)),
        providers: [
          { type: "CoreProvider", name: "cluster-api", version: "v1.10.4" },
          { type: "InfrastructureProvider", name: "nico", version: "v0.5.0" },
        ],
      })),
      contracts,
    );
    expect(plan.refused).toEqual([
      "release nvke 0.8.1 is older than the installed nvke 0.9.0: a downgrade, which the upgrade refuses",
      "CoreProvider cluster-api: a downgrade (v1.11.7 → v1.10.4); clusterctl never moves a provider back",
      "InfrastructureProvider nico: its contract would go back (v1beta2 → v1beta1)",
      "item spire: chart 0.5.0 → 0.4.9 is a downgrade",
    ]);
  });

  test("a skipped contract and an unknown one are refused; a provider the target drops is not deleted", () => {
    const skipping: ContractOf = (p, version) =>
      contractIn(
        {
          releaseSeries: [
            { major: 1, minor: 11, contract: "v1alpha4" },
            { major: 1, minor: 12, contract: "v1beta2" },
          ],
        },
        version,
      ) ?? contracts(p, version);
    const plan = planUpgrade(
      record,
      target((t) => ({ ...t, providers: [{ type: "CoreProvider", name: "cluster-api", version: "v1.12.0" }] })),
      skipping,
    );
    expect(plan.refused).toEqual([
      "CoreProvider cluster-api: it would skip a contract (v1alpha4 → v1beta2); clusterctl upgrades one contract at a time: upgrade to a release of the next contract first",
      "InfrastructureProvider nico: the target no longer installs it; the upgrade does not delete providers (clusterctl delete does)",
    ]);
    const unknown = planUpgrade(
      record,
      target((t) => ({
        ...t,
        providers: t.providers.map((p) => (p.name === "nico" ? { ...p, version: "v0.7.0" } : p)),
      })),
      contracts,
    );
    expect(unknown.refused).toEqual([
      "InfrastructureProvider nico: the contract of v0.7.0 is not known (no release series for it in the provider's metadata.yaml)",
    ]);
  });
});
