// The recording stand-ins for the programs nr runs that cannot run on these machines, and
// what nr is pointed at instead of downloads it cannot make here: for apps/nr's tests and the
// sandbox's demo shell (`./run sandbox env`), never a user's normal PATH.
//
// - k3s-install.ts: the k3s installer and the k3s it starts (a NotReady node until a CNI runs,
//   k3s-uninstall.sh, re-runs with other flags); liqoctl.ts: liqoctl v1.0.1 and Liqo (one-way
//   peerings with both kubeconfigs, reflection, unpeer, uninstall --purge, info -o json);
//   their headers cite the upstream behaviour each models. They run as node scripts behind
//   the shims `standIns()` writes.
// - calico-operator.ts: Calico's tigera operator and calico-node on a cluster without pods.
// - host-root.ts: a provider VM's files as nr's prechecks read them (`--host-root`).
// - fixtures/calico: the tigera operator's manifests, trimmed (`--calico-manifests`);
//   fixtures/proxmox-operator: a chart with the operator chart's contract (`--operator-chart`).
// - agent-vm.ts: a pretend VM's programs on its agent cluster, the phases a registration runs,
//   and the helm pin, as every registering test sets them up.
export { type AgentVm, type AgentVmOptions, agentVm, pinTestbinHelm, REGISTER_PHASES } from "./agent-vm.ts";
export { type CalicoOperatorOptions, calicoOperator } from "./calico-operator.ts";
export { hostRoot } from "./host-root.ts";
export type { K3sConfig } from "./k3s-install.ts";
export {
  CALICO_MANIFESTS,
  NR_FIXTURES,
  OPERATOR_CHART,
  type StandIns,
  type StandInsOptions,
  standIns,
} from "./shims.ts";
export type { KubeconfigSeen, Recorded } from "./world.ts";
