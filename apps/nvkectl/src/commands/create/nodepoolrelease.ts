import { nodePoolReleaseView } from "../../columns.ts";
import { createReleaseCommand } from "../../create-releases.ts";

export default createReleaseCommand({
  kind: "nodepoolrelease",
  label: "NodePoolRelease",
  view: nodePoolReleaseView,
  about:
    "A NodePoolRelease is what a node pool's workers are built from: a Kubernetes version, a MachineImage and the components on it.",
});
