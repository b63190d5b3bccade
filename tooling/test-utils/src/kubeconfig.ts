/**
 * A kubeconfig of one cluster `site` reached as user `op` with a bearer token. The cluster's
 * certificate is checked against `caPem` when given, not checked at all with `insecure`, and
 * else against the system's CAs.
 */
export function tokenKubeconfig(options: {
  server: string;
  token: string;
  caPem?: string;
  insecure?: boolean;
}): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "  - name: site",
    "    cluster:",
    `      server: ${options.server}`,
    ...(options.caPem === undefined
      ? []
      : [`      certificate-authority-data: ${Buffer.from(options.caPem).toString("base64")}`]),
    ...(options.insecure === true ? ["      insecure-skip-tls-verify: true"] : []),
    "users:",
    "  - name: op",
    "    user:",
    `      token: ${options.token}`,
    "contexts:",
    "  - name: site",
    "    context: { cluster: site, user: op }",
    "current-context: site",
    "",
  ].join("\n");
}
