import { type KubeTarget, kubectlCall } from "@nodekit/kube";
import { action, exec } from "@nodekit/plan";
import { dump } from "js-yaml";
import { FIELD_MANAGER } from "./context.ts";

/** The steps the install's items are made of, beside the deploy path's: rendered files written, then applied. */

/** Mount the SPIRE agent's Workload API socket (SPIFFE CSI driver) into a Cluster API controller. */
const SPIRE_SOCKET_DIR = "/run/spire/agent-sockets";
export function spirePatch(container: string): string {
  return JSON.stringify({
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: container,
              env: [{ name: "SPIFFE_ENDPOINT_SOCKET", value: `unix://${SPIRE_SOCKET_DIR}/spire-agent.sock` }],
              volumeMounts: [{ name: "spire-agent-socket", mountPath: SPIRE_SOCKET_DIR, readOnly: true }],
            },
          ],
          volumes: [{ name: "spire-agent-socket", csi: { driver: "csi.spiffe.io", readOnly: true } }],
        },
      },
    },
  });
}

export const manifest = (...objects: object[]) =>
  objects.map((object) => dump(object, { lineWidth: -1 })).join("---\n");

export const writeStep = (path: string, content: string, what: string) =>
  action("write-file", `write ${path} (${what})`, { mutates: true, params: { path, content } });

export function applyFile(target: KubeTarget, file: string) {
  return exec(
    kubectlCall(target, [
      "apply",
      "--server-side",
      `--field-manager=${FIELD_MANAGER}`,
      "--force-conflicts",
      "--filename",
      file,
    ]),
    { mutates: true, reads: [file] },
  );
}
