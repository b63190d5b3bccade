import { Args, listFlags, outputFlag, type View } from "@nodekit/cli-kit";
import { contextFlag, NvkectlCommand } from "../../base.ts";
import { allSitesFlag } from "../../flags.ts";
import { siteView } from "../../services/all-sites.ts";
import { getProviders, type ProviderStatus, providersNamed } from "../../services/providers.ts";
import { age } from "../../services/time.ts";

export default class GetProviders extends NvkectlCommand<typeof GetProviders> {
  static override aliases = ["get:provider"];
  static override summary =
    "Show whether each infrastructure provider (or the ones named) is installed and has working credentials.";
  static override description =
    `Lists each infrastructure provider nvkectl knows, read directly from the site cluster through the Kubernetes client library with the site's kubeconfig (no kubectl is needed); with no site configured, with the kubeconfig kubectl would use (KUBECONFIG, or ~/.kube/config), and --context as kubectl's. Each read is bounded by --request-timeout; an API server that answers 429 (or 5xx) with Retry-After, as it does right after a CRD is Established, is asked again after that wait, as kubectl does. It only reads: whoever applied the provider (Helm, Argo CD, a person), the answer is the same.

STATE is CONFIGURED when the provider's CRDs are all Established, its controller Deployment is Available and its credentials Secret exists. Otherwise it names the first thing missing, in this order: NOT-INSTALLED (none of its CRDs exist), CRDS-MISSING, CRDS-NOT-ESTABLISHED, NO-CONTROLLER, CONTROLLER-UNAVAILABLE, NO-CREDENTIALS. CONFIGURED does not prove the credentials work.

CREDENTIALS is the provider's own last credential check, read from the identity object that names its credentials Secret (for nico, a NicoIdentity): HEALTHY, or a failure state such as INVALID, EXPIRED, FORBIDDEN or UNREACHABLE; UNKNOWN when the identity has not checked yet; NO-IDENTITY when no identity names the Secret; UNSUPPORTED when the provider has no credential check (capd). LAST CHECK is how long ago that check ran. Look for CONFIGURED with HEALTHY.

-o wide adds what is missing, the controller, the credentials Secret and the identity; -o json and -o yaml print all of it, with lastCheckTime as a timestamp. docs/providers.md describes each provider and value.

--all-sites (-A) reads the cluster of every configured site at once (each with its site's kubeconfig; --context does not apply), with a SITE column first (site in -o json); a site whose cluster does not answer is named on stderr with its error while the others print, and the command exits 6 (SOME_SITES_FAILED).`;

  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    {
      description: "See what is missing and where the credentials state comes from:",
      command: "<%= config.bin %> <%= command.id %> -o wide",
    },
    "<%= config.bin %> <%= command.id %> -o json --site lab",
    { description: "One provider:", command: "<%= config.bin %> <%= command.id %> nico" },
    { description: "nico on every configured site:", command: "<%= config.bin %> <%= command.id %> nico --all-sites" },
  ];

  static override args = {
    name: Args.string({
      description: "A provider's name (nico, capd); several show several. Without one, every provider is shown.",
      multiple: true,
    }),
  };

  static override flags = {
    output: outputFlag(),
    context: contextFlag,
    "no-headers": listFlags["no-headers"],
    "sort-by": listFlags["sort-by"],
    "all-sites": allSitesFlag(["context"]),
  };

  override async run(): Promise<void> {
    // An unknown name is refused before the site cluster is read.
    const definitions = providersNamed(this.args.name ?? []);
    const now = new Date();
    if (this.flags["all-sites"]) {
      await this.printAcrossSites(this.flags.output, siteView(providerView(now)), async (site) =>
        getProviders({ cluster: await this.siteClusterOf(site), providers: definitions }),
      );
      return;
    }
    const providers = await getProviders({ cluster: await this.siteCluster(), providers: definitions });
    await this.print(this.flags.output, { ...providerView(now), rows: providers, data: providers });
  }
}

function providerView(now: Date): View<ProviderStatus> {
  return {
    kind: "provider",
    name: (p) => p.name,
    columns: [
      { header: "name", value: (p) => p.name },
      { header: "state", value: (p) => p.state },
      { header: "credentials", value: (p) => p.credentials },
      { header: "last check", value: (p) => age(p.lastCheckTime, now) },
      { header: "reason", value: (p) => p.reason, wide: true },
      { header: "controller", value: (p) => p.controller, wide: true },
      { header: "credentials secret", value: (p) => p.credentialsSecret, wide: true },
      { header: "identity", value: (p) => p.identity, wide: true },
    ],
  };
}
