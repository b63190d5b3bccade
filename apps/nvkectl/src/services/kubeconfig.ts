import { isDnsLabel } from "@nodekit/documents";
import { UserError } from "@nodekit/errors";
import {
  assertKubeconfig,
  classifyApiError,
  connect,
  kubeconfigFiles,
  kubectlFor,
  kubeError,
  whereOf,
} from "@nodekit/kube";
import { errorCodes } from "../errors.ts";
import { writeOutputFile } from "./files.ts";
import type { SiteCluster } from "./kubectl.ts";

/** Where Cluster API leaves a tenant cluster's kubeconfig on the site cluster. */
const TENANT_KUBECONFIG_NAMESPACE = "nvke-clusters";
const TENANT_KUBECONFIG_KEY = "value";
const tenantKubeconfigSecret = (cluster: string) => `${cluster}-kubeconfig`;

export interface GetKubeconfigOptions {
  site: SiteCluster;
  cluster: string;
  /** Write the kubeconfig here (atomically, 0600) instead of returning it for stdout. */
  outputFile?: string | undefined;
  /** Replace an output file another user owns. */
  force?: boolean | undefined;
}

export interface GetKubeconfigResult {
  kubeconfig: string;
  writtenTo?: string;
}

/**
 * The tenant cluster's kubeconfig, read directly from the site cluster: data key `value`
 * of Secret `<cluster>-kubeconfig` in namespace nvke-clusters (NV-12). The controller API
 * is not asked, so no token is minted; the read goes through @kubernetes/client-node (loaded
 * only here), so no kubectl is needed.
 */
export async function getTenantKubeconfig(options: GetKubeconfigOptions): Promise<GetKubeconfigResult> {
  if (!isDnsLabel(options.cluster)) {
    throw new UserError(errorCodes.CLUSTER_NAME_INVALID, `${JSON.stringify(options.cluster)} is not a cluster name`, {
      why: "cluster names are lower case letters, digits and '-', at most 63 characters",
      next: "list the clusters with: nvkectl get clusters",
    });
  }
  const secret = tenantKubeconfigSecret(options.cluster);
  const doing = `reading the kubeconfig of cluster ${options.cluster}`;
  const files = kubeconfigFiles(options.site);
  for (const file of files) await assertKubeconfig(file, options.site.what ?? "the site's kubeconfig");
  const client = await connect(files, {
    requestTimeoutMs: options.site.requestTimeoutMs ?? 30_000,
    context: options.site.context,
  });
  let data: Record<string, string> | undefined;
  try {
    const found = await client.core.readNamespacedSecret(
      { name: secret, namespace: TENANT_KUBECONFIG_NAMESPACE },
      client.requestOptions,
    );
    data = found.data;
  } catch (error) {
    const failure = classifyApiError(error);
    if (failure.kind !== "not-found") throw kubeError(failure, whereOf(client, doing, "the site cluster"), error);
    throw new UserError(
      errorCodes.TENANT_KUBECONFIG_NOT_FOUND,
      `no kubeconfig for cluster ${JSON.stringify(options.cluster)}: Secret ${TENANT_KUBECONFIG_NAMESPACE}/${secret} does not exist on the site cluster`,
      {
        why: "the kubeconfig Secret is written when the cluster becomes Ready: the cluster is not Ready yet, or there is no cluster of that name",
        next: [
          `check its phase with: nvkectl get clusters ${options.cluster}`,
          `wait for it with: nvkectl get clusters ${options.cluster} --wait`,
        ],
      },
    );
  }
  const encoded = (data?.[TENANT_KUBECONFIG_KEY] ?? "").trim();
  const kubeconfig = Buffer.from(encoded, "base64").toString("utf8");
  if (encoded === "" || kubeconfig.trim() === "") {
    throw new UserError(
      errorCodes.TENANT_KUBECONFIG_EMPTY,
      `Secret ${TENANT_KUBECONFIG_NAMESPACE}/${secret} has no ${JSON.stringify(TENANT_KUBECONFIG_KEY)} data`,
      {
        why: "Cluster API writes the tenant kubeconfig under data key value; this Secret has none",
        next: `inspect it with: ${kubectlFor(options.site.kubeconfig)}${options.site.context === undefined ? "" : ` --context ${options.site.context}`} -n ${TENANT_KUBECONFIG_NAMESPACE} describe secret ${secret}`,
      },
    );
  }
  const text = kubeconfig.endsWith("\n") ? kubeconfig : `${kubeconfig}\n`;
  if (options.outputFile === undefined) return { kubeconfig: text };
  await writeOutputFile(options.outputFile, text, { mode: 0o600, force: options.force, what: "the kubeconfig" });
  return { kubeconfig: text, writtenTo: options.outputFile };
}
