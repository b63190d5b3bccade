import type { InstallRecord, RecordContent, RecordedItem, RecordedProvider } from "./install-record.ts";

// `nvkectl upgrade plan` (issue 26 §2, NV-15), the pure part: what the site's install record
// says against what the install would record now (a newer release or deploy path), per item
// from → to, what restarts, and the Cluster API provider upgrades under clusterctl's own
// rules (https://cluster-api.sigs.k8s.io/clusterctl/commands/upgrade, cmd/clusterctl/client/
// cluster/upgrader.go): a provider moves within its contract or to the next one, never back,
// every provider of the management cluster ends on the core provider's contract, and a
// version whose contract is not known (its metadata.yaml's releaseSeries) is not planned.

/** Cluster API's contracts, oldest first (a provider's metadata.yaml maps its release series to one). */
const CONTRACTS = ["v1alpha2", "v1alpha3", "v1alpha4", "v1beta1", "v1beta2"] as const;

interface ItemChange {
  id: string;
  kind: "chart" | "manifests";
  /** added: only the target has it; removed: only the record; changed: its content differs; unchanged. */
  change: "added" | "removed" | "changed" | "unchanged";
  fromVersion?: string;
  toVersion?: string;
  fromDigest?: string;
  toDigest?: string;
  /** What the change restarts, for people. */
  restarts?: string;
}

interface ProviderChange {
  type: string;
  name: string;
  from?: string;
  to?: string;
  fromContract?: string;
  toContract?: string;
  change: "added" | "removed" | "upgrade" | "unchanged" | "refused";
  /** Why it is refused. */
  reason?: string;
  restarts?: string;
}

export interface UpgradePlan {
  site: string;
  from: { release?: string; deployPath: string; installedAt: string };
  to: { release?: string; deployPath: string };
  items: ItemChange[];
  providers: ProviderChange[];
  stackConfigChanged: boolean;
  /** Every refusal, one line each; the plan cannot be applied while there is one. */
  refused: string[];
}

type Version = [number, number, number];

function parseVersion(text: string): Version | undefined {
  const found = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text);
  return found === null ? undefined : [Number(found[1]), Number(found[2]), Number(found[3])];
}

function compareVersions(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** A provider's contract at a version, from its metadata.yaml's releaseSeries (major.minor → contract). */
export type ContractOf = (provider: { type: string; name: string }, version: string) => string | undefined;

export const providerKey = (p: { type: string; name: string }) => `${p.type}/${p.name}`;
const releaseName = (record: Pick<RecordContent, "release">) =>
  record.release === undefined ? undefined : `${record.release.name} ${record.release.version}`;

function itemChange(from: RecordedItem | undefined, to: RecordedItem | undefined): ItemChange {
  const item = (to ?? from) as RecordedItem;
  const change =
    from === undefined
      ? "added"
      : to === undefined
        ? "removed"
        : from.digest === to.digest &&
            from.version === to.version &&
            from.chartDigest === to.chartDigest &&
            from.chart === to.chart
          ? "unchanged"
          : "changed";
  const restarts =
    change === "unchanged" || change === "removed"
      ? undefined
      : item.kind === "chart"
        ? `helm upgrade of release ${item.release ?? item.id} in ${item.namespace ?? "default"}: its workloads roll where their pod templates change`
        : `its objects are applied again (server-side); workloads among them roll where their pod templates change`;
  return {
    id: item.id,
    kind: item.kind,
    change,
    ...(from?.version === undefined ? {} : { fromVersion: from.version }),
    ...(to?.version === undefined ? {} : { toVersion: to.version }),
    ...(from === undefined ? {} : { fromDigest: from.chartDigest ?? from.digest }),
    ...(to === undefined ? {} : { toDigest: to.chartDigest ?? to.digest }),
    ...(restarts === undefined ? {} : { restarts }),
  };
}

function providerChanges(
  current: readonly RecordedProvider[],
  target: readonly RecordedProvider[],
  contractOf: ContractOf,
): ProviderChange[] {
  const byKey = new Map(current.map((p) => [providerKey(p), p]));
  const targetKeys = new Set(target.map(providerKey));
  const core = target.find((p) => p.type === "CoreProvider");
  const coreContract = core === undefined ? undefined : contractOf(core, core.version);
  const changes: ProviderChange[] = target.map((to) => {
    const from = byKey.get(providerKey(to));
    const base = { type: to.type, name: to.name, to: to.version };
    const toContract = contractOf(to, to.version);
    const withContract = toContract === undefined ? {} : { toContract };
    if (from === undefined) {
      return { ...base, ...withContract, change: "added", restarts: "clusterctl init installs it" };
    }
    const fromContract = contractOf(from, from.version);
    const both = {
      ...base,
      from: from.version,
      ...withContract,
      ...(fromContract === undefined ? {} : { fromContract }),
    };
    const a = parseVersion(from.version);
    const b = parseVersion(to.version);
    if (a === undefined || b === undefined) {
      return {
        ...both,
        change: "refused",
        reason: `${from.version} → ${to.version} is not a version clusterctl reads`,
      };
    }
    const order = compareVersions(b, a);
    if (order === 0 && from.digest === to.digest) return { ...both, change: "unchanged" };
    if (order < 0) {
      return {
        ...both,
        change: "refused",
        reason: `a downgrade (${from.version} → ${to.version}); clusterctl never moves a provider back`,
      };
    }
    if (fromContract === undefined || toContract === undefined) {
      return {
        ...both,
        change: "refused",
        reason: `the contract of ${fromContract === undefined ? from.version : to.version} is not known (no release series for it in the provider's metadata.yaml)`,
      };
    }
    const step = CONTRACTS.indexOf(toContract as never) - CONTRACTS.indexOf(fromContract as never);
    if (step < 0 || step > 1) {
      return {
        ...both,
        change: "refused",
        reason:
          step < 0
            ? `its contract would go back (${fromContract} → ${toContract})`
            : `it would skip a contract (${fromContract} → ${toContract}); clusterctl upgrades one contract at a time: upgrade to a release of the next contract first`,
      };
    }
    if (coreContract !== undefined && toContract !== coreContract) {
      return {
        ...both,
        change: "refused",
        reason: `its contract ${toContract} is not the core provider's (${coreContract}); every provider of a management cluster must follow the core provider's contract`,
      };
    }
    return {
      ...both,
      change: "upgrade",
      restarts: `clusterctl upgrade apply: its controller restarts${step === 1 ? `; a contract upgrade (${fromContract} → ${toContract}): its CRDs' stored objects are migrated` : ""}`,
    };
  });
  for (const from of current) {
    if (!targetKeys.has(providerKey(from))) {
      changes.push({
        type: from.type,
        name: from.name,
        from: from.version,
        change: "refused",
        reason: "the target no longer installs it; the upgrade does not delete providers (clusterctl delete does)",
      });
    }
  }
  return changes;
}

/** The upgrade from what the site's record says to what the install would record now. */
export function planUpgrade(record: InstallRecord, target: RecordContent, contractOf: ContractOf): UpgradePlan {
  const targetItems = new Map(target.items.map((item) => [item.id, item]));
  const recordItems = new Map(record.items.map((item) => [item.id, item]));
  const items = [
    ...target.items.map((to) => itemChange(recordItems.get(to.id), to)),
    ...record.items.filter((from) => !targetItems.has(from.id)).map((from) => itemChange(from, undefined)),
  ];
  const providers = providerChanges(record.providers, target.providers, contractOf);
  const refused: string[] = providers
    .filter((p) => p.change === "refused")
    .map((p) => `${p.type} ${p.name}: ${p.reason}`);
  const from = record.release === undefined ? undefined : parseVersion(record.release.version);
  const to = target.release === undefined ? undefined : parseVersion(target.release.version);
  if (from !== undefined && to !== undefined && compareVersions(to, from) < 0) {
    refused.unshift(
      `release ${releaseName(target)} is older than the installed ${releaseName(record)}: a downgrade, which the upgrade refuses`,
    );
  }
  for (const item of items) {
    if (item.kind !== "chart" || item.fromVersion === undefined || item.toVersion === undefined) continue;
    const a = parseVersion(item.fromVersion);
    const b = parseVersion(item.toVersion);
    if (a !== undefined && b !== undefined && compareVersions(b, a) < 0) {
      refused.push(`item ${item.id}: chart ${item.fromVersion} → ${item.toVersion} is a downgrade`);
    }
  }
  return {
    site: record.site,
    from: {
      ...(releaseName(record) === undefined ? {} : { release: releaseName(record) }),
      deployPath: record.deployPath,
      installedAt: record.installedAt,
    },
    to: {
      ...(releaseName(target) === undefined ? {} : { release: releaseName(target) }),
      deployPath: target.deployPath,
    },
    items,
    providers,
    stackConfigChanged: record.stackConfigSha256 !== target.stackConfigSha256,
    refused,
  };
}

/** The contract of a version, from a metadata.yaml's releaseSeries. */
export function contractIn(metadata: unknown, version: string): string | undefined {
  const v = parseVersion(version);
  const series = (metadata as { releaseSeries?: Array<{ major?: number; minor?: number; contract?: string }> })
    ?.releaseSeries;
  if (v === undefined || !Array.isArray(series)) return undefined;
  return series.find((s) => s.major === v[0] && s.minor === v[1])?.contract;
}
