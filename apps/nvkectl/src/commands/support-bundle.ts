import { Flags } from "@nodekit/cli-kit";
import { contextFlag, NvkectlCommand } from "../base.ts";

export default class SupportBundle extends NvkectlCommand<typeof SupportBundle> {
  static override summary = "Write one archive with what support needs to see a site: never a secret.";

  static override description =
    `Writes nvkectl-support-<site>-<time>.tar.gz (mode 0600) in the current directory, or --output FILE, with:

  version.json          nvkectl version -o json: nvkectl's, the controller API's, the site cluster's Kubernetes, the installed release
  install-record.json   the install record (ConfigMap kube-system/nvkectl-install-record)
  controller.json       the controller's state as its API reports it: every cluster and its node pools
  providers.json        the infrastructure providers, as get providers -o json
  site-objects.json     the stack's namespaces: Deployments, ReplicaSets, Pods, Services, NetworkPolicies, ServiceAccounts
  events.json           the events of the stack's namespaces
  cluster-api.json      Cluster API's objects: clusterctl's providers, Clusters, MachineDeployments, MachineSets, Machines
  secrets.json          the Secrets of the stack's namespaces by name, type and keys: never a value
  config.json           nvkectl's config (sites, URLs, kubeconfig paths): never the token cache or a kubeconfig
  index.json            what each file is, and why a part is missing

The stack's namespaces are those the install record names, nke-controller, nke-clients, capi-system and each provider's. Before anything is read, every secret nvkectl can know of is learnt: the value of every Secret in those namespaces (the NICo API key among them), the site kubeconfig's credentials, the controller token as it is minted, and environment variables named like a token, password or key; every file goes through the redactor that learnt them, then through a pass that blanks any credential-looking field.

The archive is written whole or not at all, never over an existing file (exit 5). A part that cannot be read (a site cluster or controller that does not answer, a kubeconfig without the rights) is recorded in index.json with its error and named on stderr, and the archive is still written: the command exits 0 whenever it wrote the archive. It only reads; run it with a site admin's kubeconfig (--site, or the site's) to read the install record and the Secrets' names.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    { description: "Somewhere else:", command: "<%= config.bin %> <%= command.id %> --output /tmp/lab-support.tar.gz" },
    { description: "Look inside:", command: "tar -tzf /tmp/lab-support.tar.gz" },
  ];

  static override flags = {
    output: Flags.string({ description: "Write the archive here (never over an existing file)." }),
    context: contextFlag,
  };

  override async run(): Promise<void> {
    const [{ supportBundle }, { loadConfig }] = await Promise.all([
      import("../services/support-bundle.ts"),
      import("@nodekit/site-config"),
    ]);
    const site = await this.site().catch(() => undefined);
    const bundle = await supportBundle({
      output: this.flags.output,
      version: this.config.version,
      siteName: site?.name,
      cluster: () => this.siteCluster(),
      controller: () => this.controller(),
      config: async () => {
        const { path, config } = await loadConfig();
        return { path, config };
      },
      redactor: this.redactor,
      env: process.env,
    });
    for (const entry of bundle.entries) {
      if (entry.error !== undefined) this.logger.warn(`${entry.file}: not read: ${entry.error}`);
    }
    await this.out(`wrote ${bundle.path} (${bundle.entries.length + 1} files)`);
  }
}
