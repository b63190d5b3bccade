import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { TestenvError } from "./errors.ts";
import { kubeconfigFileName, renderKubeconfig } from "./kubeconfig.ts";
import { type ClientIdentity, issueClientCertificate, loadCertificateAuthority } from "./pki.ts";

/**
 * Everything another process needs to use a running control plane: plain data, so vitest's
 * global setup can `provide` it to test workers and `testenv up` can keep it in a state file.
 */
export interface ControlPlaneInfo {
  /** `https://127.0.0.1:<port>` */
  server: string;
  /** The daemons' process IDs (a test may inspect kube-apiserver's sockets through /proc). */
  pids: { etcd: number; kubeApiserver: number };
  /** Holds kube-apiserver, etcd and (from k8s-testbin) helm and clusterctl. */
  binDir: string;
  /** Kubeconfig of `admin` in group `system:masters`. */
  adminKubeconfigPath: string;
  /** Where {@link ControlPlaneClient.kubeconfigFor} writes per-identity kubeconfigs. */
  kubeconfigDir: string;
  /** ca.crt, ca.key (to issue client certificates), admin.crt, admin.key. */
  pkiDir: string;
  /** etcd.log and kube-apiserver.log. */
  logDir: string;
}

export interface ControlPlaneClient {
  readonly info: ControlPlaneInfo;
  readonly server: string;
  readonly adminKubeconfigPath: string;
  readonly binDir: string;
  /** The cluster CA certificate (PEM): what a client must trust to reach `server`. */
  readonly caPem: string;
  /** A kubeconfig with a client certificate for this user and groups; returns its path. */
  kubeconfigFor(identity: ClientIdentity): Promise<string>;
  /** Creates a namespace `<prefix>-<random>` and returns its name. Nothing deletes it. */
  createNamespace(prefix?: string): Promise<string>;
}

export interface ApiResponse {
  status: number;
  body: string;
}

interface TlsMaterial {
  ca: string;
  cert: string;
  key: string;
}

/** One HTTPS request to kube-apiserver with a client certificate. */
export function apiRequest(
  server: string,
  tls: TlsMaterial,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 10_000,
): Promise<ApiResponse> {
  return new Promise((resolvePromise, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpsRequest(
      new URL(path, server),
      {
        method,
        ...tls,
        agent: false,
        timeout: timeoutMs,
        headers: {
          accept: "application/json",
          ...(payload === undefined ? {} : { "content-type": "application/json" }),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolvePromise({ status: res.statusCode ?? 0, body: text }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(payload);
  });
}

/** `<prefix>-<suffix>` trimmed to a valid namespace name (an RFC 1123 label). */
export function namespaceName(prefix: string, suffix: string): string {
  const base =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 63 - suffix.length - 1)
      .replace(/-+$/, "") || "test";
  return `${base}-${suffix}`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Opens a running control plane from its {@link ControlPlaneInfo} (in a test worker, or the CLI). */
export async function connectControlPlane(info: ControlPlaneInfo): Promise<ControlPlaneClient> {
  const [caPem, caKeyPem, adminCert, adminKey] = await Promise.all(
    ["ca.crt", "ca.key", "admin.crt", "admin.key"].map((name) => readFile(join(info.pkiDir, name), "utf8")),
  );
  if (caPem === undefined || caKeyPem === undefined || adminCert === undefined || adminKey === undefined) {
    throw new Error("unreachable: four files were read");
  }
  const ca = loadCertificateAuthority({ certPem: caPem, keyPem: caKeyPem });
  const adminTls: TlsMaterial = { ca: caPem, cert: adminCert, key: adminKey };

  return {
    info,
    server: info.server,
    adminKubeconfigPath: info.adminKubeconfigPath,
    binDir: info.binDir,
    caPem,

    async kubeconfigFor(identity) {
      const path = join(info.kubeconfigDir, kubeconfigFileName(identity));
      if (await exists(path)) return path;
      const { certPem, keyPem } = await issueClientCertificate(ca, identity);
      await mkdir(info.kubeconfigDir, { recursive: true });
      // Workers may ask for the same identity at once: write aside, then rename into place.
      const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
      await writeFile(tmp, renderKubeconfig({ server: info.server, caPem, name: identity.user, certPem, keyPem }), {
        mode: 0o600,
      });
      await rename(tmp, path);
      return path;
    },

    async createNamespace(prefix = "test") {
      for (let attempt = 0; ; attempt++) {
        const name = namespaceName(prefix, randomBytes(3).toString("hex"));
        const response = await apiRequest(info.server, adminTls, "POST", "/api/v1/namespaces", {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name, labels: { "nodekit.dev/testenv": "true" } },
        });
        if (response.status === 201) return name;
        if (response.status === 409 && attempt < 3) continue;
        throw new TestenvError(`could not create namespace ${name}: HTTP ${response.status}`, {
          why: response.body.slice(0, 500),
        });
      }
    },
  };
}
