import type { PeeringUser } from "./schemas.ts";

/**
 * The peering user as a kubeconfig for `liqoctl peer --remote-kubeconfig`, as JSON (which
 * kubectl, client-go and liqoctl read as they read YAML). It holds the one-time token:
 * write it with mode 0600, pass its path, and delete it when liqoctl is done.
 */
export function renderPeeringKubeconfig(user: PeeringUser, options: { clusterName?: string } = {}): string {
  const cluster = options.clusterName ?? "noderings";
  return `${JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: cluster,
          cluster: { server: user.server, "certificate-authority-data": user.certificateAuthorityData },
        },
      ],
      users: [{ name: user.user, user: { token: user.token } }],
      contexts: [{ name: cluster, context: { cluster, user: user.user } }],
      "current-context": cluster,
    },
    null,
    2,
  )}\n`;
}
