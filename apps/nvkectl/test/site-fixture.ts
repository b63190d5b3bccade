import { createServer } from "node:net";
import { join } from "node:path";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "@nodekit/nvke-emulator";
import { tempDir } from "@nodekit/test-utils";
import { type DedicatedControlPlane, useControlPlane } from "@nodekit/testenv/vitest";
import { expect } from "vitest";
import { recordConfigMap } from "../src/services/install-record.ts";
import { apply, type CliHome, cliHome } from "./helpers.ts";

// The set-up nvkectl's integration tests against a site share: a control plane of the test
// file's own (its fixed namespaces, auth ConfigMap and install record reach no other file),
// with auth on when asked (the emulators review every token against the real kube-apiserver),
// NVKE controller emulators on it, and a CLI home whose sites point at them.

/** The auth ConfigMap: the emulators accept the tokens minted for `audience`. */
export const authConfigMap = (audience: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { namespace: "nke-controller", name: "nvke-auth-config" },
  data: { audience },
});

/** The emulator's side of auth, the ServiceAccount nvkectl mints tokens for, and the auth ConfigMap. */
const authObjects = (audience: string): object[] => [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "nke-controller" } },
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "nke-clients" } },
  { apiVersion: "v1", kind: "ServiceAccount", metadata: { namespace: "nke-clients", name: "nke-client" } },
  authConfigMap(audience),
];

export interface SiteFixtureOptions {
  /** Auth on, for this audience (without it: no auth objects, and the emulators serve anyone). */
  audience?: string;
  /** More objects applied with the auth objects, in one `kubectl apply` after them. */
  objects?: object[];
}

export interface SiteFixture {
  /** The file's own control plane (`kubeconfigFor` a user of its own). */
  plane: DedicatedControlPlane;
  /** The admin kubeconfig of the file's own control plane (the sites' kubeconfig). */
  admin: string;
  /** A CLI home of the file's own: HOME and the XDG directories in a temporary directory. */
  home: CliHome;
  /** An NVKE controller emulator on the control plane, its state in a temporary directory; cleanup stops it. */
  emulator(options?: Omit<EmulatorOptions, "kubeconfigPath" | "stateFile">): Promise<RunningEmulator>;
  /** Stops every emulator (one stopped already is fine) and removes their state and the home. */
  cleanup(): Promise<void>;
}

/** The control plane, the auth objects and `objects` on it, and the home (named `prefix`…). */
export async function siteFixture(prefix: string, options: SiteFixtureOptions = {}): Promise<SiteFixture> {
  const plane = await useControlPlane({ dedicated: true });
  const admin = plane.adminKubeconfigPath;
  const objects = [
    ...(options.audience === undefined ? [] : authObjects(options.audience)),
    ...(options.objects ?? []),
  ];
  if (objects.length > 0) await apply(admin, ...objects);
  const started: Array<{ emulator: RunningEmulator; state: { cleanup(): Promise<void> } }> = [];
  const home = await cliHome(prefix);
  return {
    plane,
    admin,
    home,
    emulator: async (emulatorOptions = {}) => {
      const state = await tempDir(`${prefix}emulator-`);
      const emulator = await startEmulator({
        ...emulatorOptions,
        kubeconfigPath: admin,
        stateFile: join(state.path, "state.json"),
      });
      started.push({ emulator, state });
      return emulator;
    },
    cleanup: async () => {
      for (const { emulator, state } of started.splice(0)) {
        await emulator.stop().catch(() => {});
        await state.cleanup();
      }
      await home.cleanup();
    },
  };
}

/** `nvkectl config set-site NAME --url URL --kubeconfig FILE` in `home`; it must succeed. */
export async function setSite(home: CliHome, name: string, url: string, kubeconfig: string): Promise<void> {
  const set = await home.nvkectl(["config", "set-site", name, "--url", url, "--kubeconfig", kubeconfig]);
  expect(set.exitCode, set.stderr).toBe(0);
}

/** A loopback port nothing listens on (free a moment ago): an unreachable controller or API server. */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The install record an install of release nvke `release` (its controller chart `chart`) by
 * deploy path nico leaves on the site, as the ConfigMap to apply; the digests are made up.
 */
export function installRecord(versions: { release: string; chart: string }, namespaces: string[] = []) {
  return recordConfigMap({
    installedAt: "2026-12-03T10:00:00.000Z",
    site: "lab",
    deployPath: "nico",
    release: { name: "nvke", version: versions.release, digest: `sha256:${"a".repeat(64)}`, file: "release.json" },
    items: [{ id: "nvke-controller", kind: "chart", version: versions.chart, digest: `sha256:${"b".repeat(64)}` }],
    providers: [{ type: "CoreProvider", name: "cluster-api", version: "v1.11.7" }],
    certManager: "v1.19.1",
    namespaces,
    crds: [],
    stackConfigSha256: `sha256:${"c".repeat(64)}`,
    objects: [],
  });
}
