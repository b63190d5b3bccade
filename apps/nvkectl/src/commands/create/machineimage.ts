import { machineImageView } from "../../columns.ts";
import { createReleaseCommand } from "../../create-releases.ts";

export default createReleaseCommand({
  kind: "machineimage",
  label: "MachineImage",
  view: machineImageView,
  about:
    "A MachineImage is a node image (a bootable disk or OCI artifact pinned by digest) for one Kubernetes version and architecture.",
});
