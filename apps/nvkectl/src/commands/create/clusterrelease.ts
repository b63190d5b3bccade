import { clusterReleaseView } from "../../columns.ts";
import { createReleaseCommand } from "../../create-releases.ts";

export default createReleaseCommand({
  kind: "clusterrelease",
  label: "ClusterRelease",
  view: clusterReleaseView,
  about:
    "A ClusterRelease is what a cluster's control plane is built from: a Kubernetes version, a MachineImage and the components and charts installed on it.",
});
