import { randomBytes } from "node:crypto";
import { dump } from "js-yaml";

export interface TenantKubeconfigInput {
  clusterName: string;
  clusterID: string;
  /** `https://<host>:6443` */
  server: string;
}

/**
 * A kubeconfig for a tenant cluster, as Cluster API writes it into `<cluster>-kubeconfig`:
 * the cluster's own CA (a fresh self-signed certificate per cluster) and an admin user
 * with a bearer token generated for it. The emulator runs no tenant API server, so the
 * token is a placeholder that nothing accepts; the file is otherwise what a client expects.
 */
export async function renderTenantKubeconfig(input: TenantKubeconfigInput): Promise<string> {
  const caPem = await selfSignedCa(`${input.clusterName}-ca`);
  const user = `${input.clusterName}-admin`;
  const context = `${user}@${input.clusterName}`;
  return dump(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: input.clusterName,
          cluster: { server: input.server, "certificate-authority-data": Buffer.from(caPem).toString("base64") },
        },
      ],
      users: [{ name: user, user: { token: `nvke-emulator.${randomBytes(24).toString("hex")}` } }],
      contexts: [{ name: context, context: { cluster: input.clusterName, user } }],
      "current-context": context,
      preferences: {},
    },
    { lineWidth: -1 },
  );
}

/** A fresh self-signed CA certificate (PEM), made the way the test control plane makes its own. */
async function selfSignedCa(commonName: string): Promise<string> {
  // Loaded on first use: most emulator runs write few kubeconfigs, and node-forge costs to import.
  const { createCertificateAuthority } = await import("@nodekit/testenv/pki");
  return (await createCertificateAuthority({ commonName })).certPem;
}
