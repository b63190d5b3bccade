/**
 * `nvkectl install`, as a folder of small files (./install/): the documents read and checked
 * (documents.ts), the cluster observed (observe.ts), the plan made (plan.ts: Cluster API from
 * @nodekit/deploy-path in cluster-api.ts, the install's own objects in objects.ts, the stack's
 * values in values.ts), and the same plan run (run.ts). This module is their entry.
 */
export { emitArgoCd as emitArgoCdTree } from "./install/argocd.ts";
export type { InstallContext, InstallInputs } from "./install/context.ts";
export { emitFlux as emitFluxTree } from "./install/flux.ts";
export { planInstall } from "./install/plan.ts";
export { prepareInstall } from "./install/prepare.ts";
export { install, preflightInstall, type RunInstallOptions, runInstall } from "./install/run.ts";
export { upgradeTarget } from "./install/upgrade-target.ts";
