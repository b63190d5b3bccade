import { nodePoolReleaseView } from "../../columns.ts";
import { getReleasesCommand } from "../../get-releases.ts";

export default getReleasesCommand({
  kind: "nodepoolrelease",
  label: "NodePoolRelease",
  view: nodePoolReleaseView,
  summary: "List the site's NodePoolReleases, or show some.",
  about:
    "A NodePoolRelease is what a node pool's workers are built from: a Kubernetes version, a MachineImage and the components on it.",
});
