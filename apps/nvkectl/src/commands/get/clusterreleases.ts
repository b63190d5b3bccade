import { clusterReleaseView } from "../../columns.ts";
import { getReleasesCommand } from "../../get-releases.ts";

export default getReleasesCommand({
  kind: "clusterrelease",
  label: "ClusterRelease",
  view: clusterReleaseView,
  summary: "List the site's ClusterReleases, or show some.",
  about:
    "A ClusterRelease is what a cluster's control plane is built from: a Kubernetes version, a MachineImage and the components and charts installed on it.",
});
