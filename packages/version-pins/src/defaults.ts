import type { PinSet } from "./schema.ts";

/**
 * The offline defaults: what `--offline` uses when the local config names nothing else.
 * They are recent upstream releases that work together, but the platform has not
 * validated them as a set, which is why every use of them carries a warning.
 *
 * Digests are only those upstream publishes for the release (helm v3.18.6: the release
 * notes and the `.sha256sum` files; liqoctl v1.0.1: Liqo's own krew plugin manifest,
 * kubernetes-sigs/krew-index plugins/liqo.yaml at its v1.0.1 entry, commit 96e715e1). The
 * k3s installer has none here (its install.sh is not a per-release artifact): an offline
 * run uses the operator's `k3s-install.sh` on PATH, or the local config names one.
 */
export const DEFAULT_PINS: PinSet = {
  schemaVersion: 1,
  name: "offline-defaults",
  tools: {
    k3s: { version: "v1.33.5+k3s1" },
    calico: { version: "v3.30.3" },
    liqo: { version: "v1.0.1" },
    helm: {
      version: "v3.18.6",
      artifacts: {
        amd64: {
          url: "https://get.helm.sh/helm-v3.18.6-linux-amd64.tar.gz",
          sha256: "3f43c0aa57243852dd542493a0f54f1396c0bc8ec7296bbb2c01e802010819ce",
          format: "tar.gz",
          member: "linux-amd64/helm",
        },
        arm64: {
          url: "https://get.helm.sh/helm-v3.18.6-linux-arm64.tar.gz",
          sha256: "5b8e00b6709caab466cbbb0bc29ee09059b8dc9417991dd04b497530e49b1737",
          format: "tar.gz",
          member: "linux-arm64/helm",
        },
        arm: {
          url: "https://get.helm.sh/helm-v3.18.6-linux-arm.tar.gz",
          sha256: "13156fbe87a9db201b7d8fd0b42dee2a2e76a77388ea3bd59e3074cfa49d3619",
          format: "tar.gz",
          member: "linux-arm/helm",
        },
      },
    },
    liqoctl: {
      version: "v1.0.1",
      artifacts: {
        amd64: {
          url: "https://github.com/liqotech/liqo/releases/download/v1.0.1/liqoctl-linux-amd64.tar.gz",
          sha256: "871e7637f69a7d67fcdac9db909d2ab2bffb161693165e581abd09d2e1ae32b2",
          format: "tar.gz",
          member: "liqoctl",
        },
        arm64: {
          url: "https://github.com/liqotech/liqo/releases/download/v1.0.1/liqoctl-linux-arm64.tar.gz",
          sha256: "d66f3a6751ff6411ef1f172875a6068459cc0c7b63a461ea47fe10f63506f81f",
          format: "tar.gz",
          member: "liqoctl",
        },
      },
    },
    "proxmox-operator": {
      version: "0.4.0",
      chart: { repository: "oci://registry.noderings.io/charts", name: "proxmox-operator" },
    },
  },
};
