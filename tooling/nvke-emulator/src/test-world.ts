// The controller's world for unit tests (controller.test.ts, state.fuzz.test.ts): a state with
// one machine image and one cluster release, a fake clock, and the requests tests send.
import { type ControllerContext, createClusterRelease, createMachineImage } from "./controller.ts";
import { advance, emptyState, type Timing } from "./state.ts";

export const timing: Timing = { provisionMs: 1000, deleteMs: 500, nodeMs: 100 };
export const digest = `sha256:${"a".repeat(64)}`;

export function world(options: { controlPlaneController?: boolean } = {}) {
  const state = emptyState();
  let now = 1_700_000_000_000;
  let ids = 0;
  const ctx = (): ControllerContext => ({
    now,
    timing,
    controlPlaneController: options.controlPlaneController ?? true,
    clustersNamespace: "nvke-clusters",
    newId: () => `00000000-0000-4000-8000-${String(++ids).padStart(12, "0")}`,
  });
  createMachineImage(
    state,
    {
      name: "img",
      version: "1.0.0",
      kubernetesVersion: "v1.31.4",
      os: { distribution: "ubuntu", version: "24.04" },
      architecture: "amd64",
      image: `registry.example/img@${digest}`,
    },
    ctx(),
  );
  createClusterRelease(
    state,
    {
      name: "r1",
      version: "1.0.0",
      kubernetesVersion: "v1.31.4",
      machineImageName: "img",
      components: [{ name: "kube-apiserver", version: "v1.31.4", image: `registry.example/kas@${digest}` }],
    },
    ctx(),
  );
  return {
    state,
    ctx,
    /** Moves the clock and settles everything due, writing kubeconfig Secrets at once. */
    tick(ms: number) {
      now += ms;
      advance(state, now, timing);
      for (const record of Object.values(state.clusters)) {
        if (record.kubeconfigSecret === "pending") record.kubeconfigSecret = "written";
      }
      advance(state, now, timing);
    },
  };
}

export function clusterRequest(name: string, overrides: Record<string, unknown> = {}) {
  return {
    name,
    provider: "nico",
    clusterReleaseName: "r1",
    controlPlaneConfig: { replicas: 3 },
    network: { podCIDR: "10.244.0.0/16", serviceCIDR: "10.96.0.0/12" },
    nico: { instanceType: "mock.small" },
    ...overrides,
  };
}

export function poolRequest(
  clusterID: string,
  name: string,
  desiredNodeCount: number,
  overrides: Record<string, unknown> = {},
) {
  return {
    name,
    nodeNamePrefix: name,
    desiredNodeCount,
    clusterID,
    nico: { instanceType: "mock.small" },
    ...overrides,
  };
}
