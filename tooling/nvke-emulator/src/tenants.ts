import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { EmulatorState } from "./state.ts";

/** A tenant cluster's own Kubernetes API server, as the emulator backs a Ready cluster with. */
export interface TenantApiServer {
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  /** The tenant cluster's CA certificate (PEM): what its kubeconfig trusts. */
  readonly caPem: string;
  /** An admin client certificate and key (PEM) for the tenant's kubeconfig. */
  readonly certPem: string;
  readonly keyPem: string;
  /** The processes that serve it (etcd, kube-apiserver), for status and clean-up checks. */
  readonly pids: readonly number[];
  /** Settles when the server stops for any reason (stop() included). */
  readonly exited: Promise<unknown>;
  /** Stops it and removes its data. Safe to call twice. */
  stop(): Promise<void>;
}

/** Starts tenant API servers: the effect behind a cluster becoming Ready (off unless given). */
export interface TenantApiServers {
  start(cluster: { id: string; name: string }): Promise<TenantApiServer>;
}

export interface TestenvTenantApiServersOptions {
  /** Directory holding kube-apiserver and etcd; default: testenv's `binaries("kubernetes")`. */
  binDir?: string;
  /** Each tenant's data goes in `<dataRoot>/<cluster name>-<id prefix>`; default: a temp dir per tenant. */
  dataRoot?: string;
  log?: (line: string) => void;
}

/**
 * Tenant API servers from the test tier: each a real kube-apiserver + etcd on loopback
 * (`@nodekit/testenv`), with its own CA and an admin in `system:masters`. Its processes
 * stop with stop(), on this process's exit and signals, and — if this process is killed
 * outright — by testenv's watchdog within a second or so.
 */
export function testenvTenantApiServers(options: TestenvTenantApiServersOptions = {}): TenantApiServers {
  return {
    async start(cluster) {
      // Loaded on first use: an emulator without tenants never pays for testenv and its spawner.
      const { startControlPlane } = await import("@nodekit/testenv");
      const plane = await startControlPlane({
        ...(options.binDir === undefined ? {} : { binDir: options.binDir }),
        ...(options.dataRoot === undefined ? {} : { dataDir: join(options.dataRoot, tenantDirName(cluster)) }),
        ...(options.log === undefined ? {} : { log: (line) => options.log?.(`tenant ${cluster.name}: ${line}`) }),
      });
      try {
        const [certPem, keyPem] = await Promise.all(
          ["admin.crt", "admin.key"].map((name) => readFile(join(plane.info.pkiDir, name), "utf8")),
        );
        return {
          server: plane.server,
          caPem: plane.caPem,
          certPem: certPem ?? "",
          keyPem: keyPem ?? "",
          pids: [plane.pids.etcd, plane.pids.kubeApiserver],
          exited: plane.exited,
          stop: () => plane.stop(),
        };
      } catch (error) {
        await plane.stop();
        throw error;
      }
    },
  };
}

export function tenantDirName(cluster: { id: string; name: string }): string {
  return `${cluster.name}-${cluster.id.slice(0, 8)}`;
}

/** What the reconciler has to do about tenant API servers, from the state and what runs. */
export interface TenantPlan {
  /** Clusters due a server: their kubeconfig Secret is being written, or was written by an earlier run. */
  start: string[];
  /** Servers whose cluster is gone. */
  stop: string[];
}

/**
 * Pure: a cluster has a tenant API server from the moment its kubeconfig Secret is due
 * (just before it reads Ready) until it is gone — deletion included, as a real cluster's
 * API answers while Cluster API tears it down. A cluster already being deleted is not
 * given a new one (after a restart, say).
 */
export function planTenantApiServers(state: EmulatorState, running: ReadonlySet<string>): TenantPlan {
  const start: string[] = [];
  for (const [id, record] of Object.entries(state.clusters)) {
    const due = record.kubeconfigSecret === "pending" || record.kubeconfigSecret === "written";
    if (due && record.cluster.status.phase !== "Deleting" && !running.has(id)) start.push(id);
  }
  const stop = [...running].filter((id) => state.clusters[id] === undefined);
  return { start, stop };
}
