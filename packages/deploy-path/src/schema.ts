import {
  apiVersionField,
  checkedString,
  DNS_LABEL_RULE,
  dnsLabelFault,
  kindField,
  strictMapping,
  typeMessage,
} from "@nodekit/documents";
import valid from "semver/functions/valid.js";
import * as z from "zod";

/** The version of the `nvke-deploy.yaml` format this library reads; a change that breaks readers bumps it. */
export const DEPLOY_PATH_API_VERSION = "deploy.nodekit.dev/v1alpha1";
export const DEPLOY_PATH_KIND = "DeployPath";
/** The file at the root of a deploy path that lists its items in install order. */
export const DEPLOY_PATH_FILE = "nvke-deploy.yaml";
/** The file in an item directory that makes it a chart item. */
export const CHART_PIN_FILE = "chart-pin.yaml";
export const VALUES_FILE = "values.yaml";
export const OVERLAY_FILE = "overlay.yaml";

const dnsLabel = checkedString((value) => {
  const fault = dnsLabelFault(value);
  return fault === undefined ? undefined : `${fault}, so it is not ${DNS_LABEL_RULE}`;
});

/** A version pin: semantic version, with or without a leading v (`v1.11.7`, `0.26.1`). */
const versionString = checkedString((value) =>
  valid(value) === null ? "is not a semantic version such as 1.2.3 or v1.2.3" : undefined,
);

const duration = checkedString((value) =>
  /^(\d+h)?(\d+m)?(\d+s)?$/.test(value) && value !== "" ? undefined : "is not a duration such as 90s, 5m or 1h30m",
);

const relativePath = checkedString((value) => {
  if (value === "") return "is empty";
  if (value.startsWith("/")) return "must be relative to the deploy path";
  if (value.split("/").includes("..")) return "must stay inside the deploy path (no ..)";
  return undefined;
});

const controllerRef = checkedString((value) =>
  /^[a-z0-9-]+\/[a-z0-9.-]+$/.test(value) ? undefined : "must be namespace/name of a Deployment",
);

const ItemSchema = strictMapping({
  /** Stable id: what `--from-item` names, what progress and errors show; also the default Helm release name. */
  name: dnsLabel,
  /** The item's directory, relative to the deploy path; the name when left out. */
  path: relativePath.optional(),
  /** The namespace a chart is installed into, and that namespaced manifests without one go into. */
  namespace: dnsLabel.optional(),
  /** Items that must be installed before this one; each must come earlier in the list. */
  dependsOn: z.array(dnsLabel, { error: typeMessage("a list of item names") }).optional(),
  /** How long to wait for the item's workloads to be ready. */
  timeout: duration.default("5m"),
  /** The installer layers the values it renders from the stack config over this chart's values. */
  stackValues: z.boolean({ error: typeMessage("true or false") }).default(false),
});

const ProviderSchema = strictMapping({
  name: dnsLabel,
  version: versionString,
  /** The provider's controller Deployment, `namespace/name` (what the SPIRE patch and the wait act on). */
  controller: controllerRef,
});

/** What `clusterctl init` installs before the items: Cluster API at its pinned versions, and cert-manager. */
const ClusterApiSchema = strictMapping({
  /** Core, kubeadm bootstrap and kubeadm control-plane providers (clusterctl always installs these three). */
  version: versionString,
  /** cert-manager, which clusterctl installs first when it is missing. */
  certManager: versionString,
  infrastructure: z.array(ProviderSchema, { error: typeMessage("a list of providers") }).default([]),
});

const uniqueItems = (items: unknown, context: z.core.$RefinementCtx<unknown>) => {
  if (!Array.isArray(items)) return;
  const seen = new Map<string, number>();
  items.forEach((item: unknown, index) => {
    if (typeof item !== "object" || item === null) return;
    const { name, dependsOn } = item as { name?: unknown; dependsOn?: unknown };
    if (typeof name === "string") {
      const earlier = seen.get(name);
      if (earlier === undefined) seen.set(name, index);
      else {
        context.addIssue({
          code: "custom",
          path: [index, "name"],
          message: `is a duplicate item name: spec.items[${earlier}] already has it`,
        });
      }
    }
    if (!Array.isArray(dependsOn)) return;
    dependsOn.forEach((dependency: unknown, position) => {
      if (typeof dependency !== "string") return;
      const at = items.findIndex((other: unknown) => (other as { name?: unknown } | null)?.name === dependency);
      const message =
        at === -1
          ? "is not an item of this deploy path"
          : at === index
            ? "is this item itself"
            : at > index
              ? `comes later (spec.items[${at}]); an item can depend only on items before it`
              : undefined;
      if (message !== undefined) {
        context.addIssue({ code: "custom", path: [index, "dependsOn", position], message, input: dependency });
      }
    });
  });
};

/** `nvke-deploy.yaml`: the deploy path's items, in install order. Documented in docs/deploy-path.md. */
export const DeployPathFileSchema = strictMapping({
  apiVersion: apiVersionField(DEPLOY_PATH_API_VERSION),
  kind: kindField(DEPLOY_PATH_KIND),
  metadata: strictMapping({ name: dnsLabel }),
  spec: strictMapping({
    clusterAPI: ClusterApiSchema.optional(),
    items: z
      .array(ItemSchema, { error: typeMessage("a list of items") })
      .min(1, { error: "must list at least one item" })
      .superRefine(uniqueItems, { when: () => true }),
  }),
});

const digest = checkedString((value) =>
  /^sha256:[0-9a-f]{64}$/.test(value) ? undefined : "is not a digest of the form sha256:<64 hex digits>",
);

const repository = checkedString((value) =>
  /^(https?|oci):\/\/[^\s]+$/.test(value) ? undefined : "must be an https://, http:// or oci:// repository URL",
);

/**
 * `chart-pin.yaml`: which chart an item installs. With `repository`, `chart` is the chart's
 * name there; without it, `chart` is a directory in the deploy path holding the chart.
 */
export const ChartPinSchema = strictMapping({
  repository: repository.optional(),
  chart: z.string({ error: typeMessage("a string") }).min(1, { error: "is empty" }),
  version: versionString,
  /** The chart's OCI manifest digest; helm pulls `chart@digest` and refuses any other content. */
  digest: digest.optional(),
  /** The Helm release name; the item's name when left out. */
  release: dnsLabel.optional(),
}).superRefine((pin, context) => {
  if (pin.digest !== undefined && !pin.repository?.startsWith("oci://")) {
    context.addIssue({
      code: "custom",
      path: ["digest"],
      message: "needs an oci:// repository (helm checks digests of OCI charts only)",
    });
  }
});

/** A values file (values.yaml, overlay.yaml, a rendered one): any mapping. */
export const ValuesSchema = z.record(z.string(), z.unknown(), { error: "must be a mapping of Helm values" });

export type DeployPathFile = z.output<typeof DeployPathFileSchema>;
export type DeployPathItemSpec = DeployPathFile["spec"]["items"][number];
export type ClusterApiPins = z.output<typeof ClusterApiSchema>;
export type ChartPin = z.output<typeof ChartPinSchema>;
