import { machineImageView } from "../../columns.ts";
import { getReleasesCommand } from "../../get-releases.ts";

export default getReleasesCommand({
  kind: "machineimage",
  label: "MachineImage",
  view: machineImageView,
  summary: "List the site's MachineImages, or show some.",
  about:
    "A MachineImage is a node image (a bootable disk or OCI artifact pinned by digest) for one Kubernetes version and architecture.",
});
