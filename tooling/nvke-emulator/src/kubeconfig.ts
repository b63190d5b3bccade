import { generateKeyPair, randomBytes } from "node:crypto";
import { promisify } from "node:util";
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

const generateKeyPairAsync = promisify(generateKeyPair);

/** A self-signed CA certificate (PEM): the key from node:crypto, assembled and signed by node-forge. */
async function selfSignedCa(commonName: string): Promise<string> {
  // Loaded on first use: most emulator runs write few kubeconfigs, and it costs to import.
  const { default: forge } = await import("node-forge");
  const keys = await generateKeyPairAsync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKey);
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f; // positive, as RFC 5280 requires
  cert.serialNumber = serial.toString("hex");
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 3_600_000);
  cert.validity.notAfter = new Date(now + 10 * 365 * 86_400_000);
  const name = [{ shortName: "CN", value: commonName }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(
    forge.pki.privateKeyFromPem(keys.privateKey) as import("node-forge").pki.rsa.PrivateKey,
    forge.md.sha256.create(),
  );
  return forge.pki.certificateToPem(cert);
}
