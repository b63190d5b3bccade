import { createHash } from "node:crypto";
import type { ClientIdentity } from "./pki.ts";

export interface KubeconfigInput {
  server: string;
  caPem: string;
  /** Names the user and context entries; the identity itself is in the certificate. */
  name: string;
  certPem: string;
  keyPem: string;
}

const b64 = (pem: string): string => Buffer.from(pem, "utf8").toString("base64");
// A JSON string is a valid YAML double-quoted scalar, so any user name (`system:…`, spaces) is safe.
const q = (value: string): string => JSON.stringify(value);

/** A self-contained kubeconfig (certificates embedded) for one client-certificate identity. */
export function renderKubeconfig(input: KubeconfigInput): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: testenv",
    "  cluster:",
    `    server: ${q(input.server)}`,
    `    certificate-authority-data: ${b64(input.caPem)}`,
    "users:",
    `- name: ${q(input.name)}`,
    "  user:",
    `    client-certificate-data: ${b64(input.certPem)}`,
    `    client-key-data: ${b64(input.keyPem)}`,
    "contexts:",
    `- name: ${q(input.name)}`,
    "  context:",
    "    cluster: testenv",
    `    user: ${q(input.name)}`,
    `current-context: ${q(input.name)}`,
    "",
  ].join("\n");
}

/**
 * The kubeconfig file name for an identity: readable, filesystem-safe, and distinct for
 * distinct identities (group order does not matter).
 */
export function kubeconfigFileName(identity: ClientIdentity): string {
  const groups = [...new Set(identity.groups ?? [])].sort();
  const readable = identity.user.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 60);
  const digest = createHash("sha256")
    .update(JSON.stringify([identity.user, groups]))
    .digest("hex")
    .slice(0, 10);
  return `${readable}-${digest}.kubeconfig`;
}
