import { describe, expect, it, test } from "vitest";
import { PROVIDERS, type ProviderDefinition } from "./provider-catalogue.ts";
import { assessProvider, type ProviderObservation } from "./providers.ts";

const nico = PROVIDERS.find((p) => p.name === "nico") as ProviderDefinition;
const capd = PROVIDERS.find((p) => p.name === "capd") as ProviderDefinition;

function installed(definition: ProviderDefinition, change: Partial<ProviderObservation> = {}): ProviderObservation {
  return {
    crds: Object.fromEntries(definition.crds.map((crd) => [crd, "established" as const])),
    controller: { found: true, available: true, readyReplicas: 1, replicas: 1 },
    ...(definition.credentials ? { secretFound: true } : {}),
    identities: [],
    ...change,
  };
}

describe("assessProvider", () => {
  it("reads NOT-INSTALLED only when none of the CRDs exist, so uninstalled differs from misconfigured", () => {
    const none = installed(nico, { crds: {}, controller: { found: false }, secretFound: false });
    expect(assessProvider(nico, none)).toMatchObject({ state: "NOT-INSTALLED", credentials: "NO-IDENTITY" });
    const some = installed(nico, { crds: { [nico.crds[0] as string]: "established" } });
    expect(assessProvider(nico, some).state).toBe("CRDS-MISSING");
  });

  it("names the first thing missing, in order", () => {
    const notEstablished = { ...installed(nico).crds, [nico.crds[1] as string]: "not-established" as const };
    expect(assessProvider(nico, installed(nico, { crds: notEstablished })).state).toBe("CRDS-NOT-ESTABLISHED");
    // A missing controller is reported before a missing Secret
    expect(assessProvider(nico, installed(nico, { controller: { found: false }, secretFound: false })).state).toBe(
      "NO-CONTROLLER",
    );
    expect(
      assessProvider(
        nico,
        installed(nico, { controller: { found: true, available: false, readyReplicas: 0, replicas: 2 } }),
      ),
    ).toMatchObject({
      state: "CONTROLLER-UNAVAILABLE",
      reason: "Deployment nico-system/nico-controller-manager not Available (0/2 ready)",
    });
    expect(assessProvider(nico, installed(nico, { secretFound: false })).state).toBe("NO-CREDENTIALS");
    expect(assessProvider(nico, installed(nico))).toMatchObject({ state: "CONFIGURED", reason: "" });
  });

  it("takes CREDENTIALS from the identity that checked last; UNKNOWN before any check", () => {
    const identities = [
      { namespace: "a", name: "old", state: "INVALID", lastCheckTime: "2026-01-01T00:00:00Z" },
      { namespace: "b", name: "new", state: "healthy", lastCheckTime: "2026-01-02T00:00:00Z", message: "ok" },
    ];
    expect(assessProvider(nico, installed(nico, { identities }))).toMatchObject({
      credentials: "HEALTHY",
      identity: "b/new",
      lastCheckTime: "2026-01-02T00:00:00Z",
      credentialsMessage: "ok",
    });
    expect(assessProvider(nico, installed(nico, { identities: [{ namespace: "a", name: "fresh" }] })).credentials).toBe(
      "UNKNOWN",
    );
  });

  it("reads UNSUPPORTED for a provider without credentials, whatever else is true", () => {
    expect(assessProvider(capd, installed(capd))).toMatchObject({ state: "CONFIGURED", credentials: "UNSUPPORTED" });
    expect(assessProvider(capd, installed(capd, { crds: {} }))).toMatchObject({
      state: "NOT-INSTALLED",
      credentials: "UNSUPPORTED",
    });
  });
});

test("the nico provider components the tests and the sandbox install carry every CRD the catalogue checks", async () => {
  const { NICO_INFRASTRUCTURE } = await import("@nodekit/testenv/capi-repository");
  expect(Object.values(NICO_INFRASTRUCTURE.crds).map((plural) => `${plural}.infrastructure.cluster.x-k8s.io`)).toEqual(
    nico.crds,
  );
  expect(`${NICO_INFRASTRUCTURE.namespace}/${NICO_INFRASTRUCTURE.deployment}`).toBe(
    `${nico.controller.namespace}/${nico.controller.name}`,
  );
  expect(Object.keys(NICO_INFRASTRUCTURE.crds)).toContain(nico.credentials?.identity.kind);
});
