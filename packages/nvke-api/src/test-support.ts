import { randomUUID } from "node:crypto";
import type { Cluster } from "./schemas.ts";

// What a controller stand-in answers with, for this package's tests: a cluster as the
// controller returns it, and its error body.
// Where a stand-in listens is @nodekit/test-utils' loopbackServers.

/** A Ready capd cluster as the controller returns it: fresh IDs, created and updated now. */
export function cluster(name: string): Cluster {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    name,
    provider: "capd",
    clusterReleaseID: randomUUID(),
    clusterReleaseName: "r1",
    kubernetesVersion: "v1.31.4",
    controlPlaneConfig: { replicas: 1, nodeNamePrefix: `${name}-cp` },
    network: { podCIDR: "10.244.0.0/16", serviceCIDR: "10.96.0.0/12", nodeCIDRMaskSize: 24 },
    infra: { machineTemplate: { apiVersion: "x/v1", kind: "DockerMachineTemplate", spec: {} } },
    labels: {},
    status: { phase: "Ready", controlPlaneReady: true },
    createdAt: now,
    updatedAt: now,
  };
}

/** The controller's error body (the Error schema), with field details when given. */
export function errorBody(
  code: number,
  reason: string,
  message: string,
  details?: { field: string; message: string }[],
) {
  return { error: { code, reason, message, ...(details === undefined ? {} : { details }) } };
}
