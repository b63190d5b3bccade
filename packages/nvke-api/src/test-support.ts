import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import type { Cluster } from "./schemas.ts";

// The client and transport tests' controller stand-ins: where they listen, and what they answer with.

/**
 * Servers on 127.0.0.1 for one test file: `listen(server)` starts one on a free port and gives
 * its URL; after each test every one is closed, its open connections cut.
 */
export function loopbackServers(): { listen(server: Server, scheme?: "http" | "https"): Promise<string> } {
  const open: Server[] = [];
  afterEach(async () => {
    for (const server of open.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  return {
    async listen(server, scheme = "http") {
      open.push(server);
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
  };
}

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
