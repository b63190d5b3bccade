import { randomBytes } from "node:crypto";
import { dump } from "js-yaml";

export interface TenantKubeconfigInput {
  clusterName: string;
  clusterID: string;
  /** `https://<host>:6443` */
  server: string;
  /** The tenant API server's CA and an admin client certificate, when one runs (see TenantApiServers). */
  credentials?: { caPem: string; certPem: string; keyPem: string };
}

/**
 * A kubeconfig for a tenant cluster, as Cluster API writes it into `<cluster>-kubeconfig`:
 * the cluster's own CA and an admin user. With `credentials` (a tenant API server runs),
 * they are that server's CA and a client certificate it accepts. Without, the CA is a fresh
 * self-signed certificate and the user a bearer token nothing accepts: no tenant API server
 * answers, but the file is otherwise what a client expects.
 */
export async function renderTenantKubeconfig(input: TenantKubeconfigInput): Promise<string> {
  const caPem = input.credentials?.caPem ?? (await selfSignedCa(`${input.clusterName}-ca`));
  const user = `${input.clusterName}-admin`;
  const context = `${user}@${input.clusterName}`;
  const b64 = (pem: string) => Buffer.from(pem).toString("base64");
  const credentials =
    input.credentials === undefined
      ? { token: `nvke-emulator.${randomBytes(24).toString("hex")}` }
      : {
          "client-certificate-data": b64(input.credentials.certPem),
          "client-key-data": b64(input.credentials.keyPem),
        };
  return dump(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        { name: input.clusterName, cluster: { server: input.server, "certificate-authority-data": b64(caPem) } },
      ],
      users: [{ name: user, user: credentials }],
      contexts: [{ name: context, context: { cluster: input.clusterName, user } }],
      "current-context": context,
      preferences: {},
    },
    { lineWidth: -1 },
  );
}

/** A fresh self-signed CA certificate (PEM), made the way the test control plane makes its own. */
async function selfSignedCa(commonName: string): Promise<string> {
  // Loaded on first use: most emulator runs write few kubeconfigs, and the X.509 library (pkijs) costs to import.
  const { createCertificateAuthority } = await import("@nodekit/testenv/pki");
  return (await createCertificateAuthority({ commonName })).certPem;
}
