import { crdEstablishedWaitArgs, helmCall, type KubeTarget, kubectlCall } from "@nodekit/kube-calls";
import { createPlan, exec, type Plan, type PlanItem, type PlanStep } from "@nodekit/plan";
import type { ChartItem, DeployPath, DeployPathItem, ManifestObject, ManifestsItem } from "./load.ts";

/** The field manager of the server-side applies: the objects this path owns are listed under it. */
export const DEFAULT_FIELD_MANAGER = "nodekit-deploy";

export interface PlanDeployPathOptions {
  /** The cluster the path is applied to. */
  target: KubeTarget;
  /** helm's environment: a HOME and XDG directories of its own (see @nodekit/kube-calls' isolatedToolEnv). */
  helmEnv: Record<string, string>;
  fieldManager?: string;
  /** Values files layered last over an item's own, by item name (the installer's rendered values). */
  extraValues?: Readonly<Record<string, readonly string[]>>;
}

/** Workload kinds whose readiness `kubectl rollout status` waits for. */
const ROLLOUT_KINDS = new Set(["Deployment", "StatefulSet", "DaemonSet"]);

const lower = (kind: string) => kind.toLowerCase();

/** The chart argument and repository flags helm gets for a pin. */
function chartArgs(item: ChartItem): string[] {
  const { pin } = item;
  if (item.localChart !== undefined) return [item.localChart];
  const repository = pin.repository ?? "";
  if (repository.startsWith("oci://")) {
    const reference = `${repository.replace(/\/+$/, "")}/${pin.chart}`;
    return [pin.digest === undefined ? reference : `${reference}@${pin.digest}`, "--version", pin.version];
  }
  return [pin.chart, "--repo", repository, "--version", pin.version];
}

function chartSteps(item: ChartItem, options: PlanDeployPathOptions): PlanStep[] {
  const values = [...item.valuesFiles, ...(options.extraValues?.[item.name] ?? [])];
  const args = [
    "upgrade",
    "--install",
    item.release,
    ...chartArgs(item),
    "--namespace",
    item.namespace ?? "default",
    "--create-namespace",
    ...values.flatMap((file) => ["--values", file]),
    // --wait: the next item starts only once this one's workloads are ready (and its hooks ran).
    "--wait",
    "--timeout",
    item.timeout,
  ];
  const reads = [...(item.localChart === undefined ? [] : [item.localChart]), ...values];
  return [exec(helmCall(options.target, args, options.helmEnv), { mutates: true, reads })];
}

function waitSteps(
  item: ManifestsItem,
  objects: readonly ManifestObject[],
  options: PlanDeployPathOptions,
): PlanStep[] {
  // The CRDs first, all in one pair of waits (kubectl wait takes many objects; the item's
  // timeout bounds each call as a whole, kubectl's RunWait having one deadline for all): two
  // calls, as kubectl's condition wait alone fails at once on a CRD just created (see
  // crdEstablishedWaitArgs), whether the item has one CRD or forty.
  const crds = objects
    .filter((object) => object.kind === "CustomResourceDefinition")
    .map((object) => `customresourcedefinition/${object.name}`);
  const crdWaits =
    crds.length === 0
      ? []
      : crdEstablishedWaitArgs(crds, item.timeout).map((args) =>
          exec(kubectlCall(options.target, args), { mutates: false }),
        );
  const rollouts = objects.flatMap((object): PlanStep[] => {
    if (!ROLLOUT_KINDS.has(object.kind) || object.apiVersion !== "apps/v1") return [];
    const namespace = object.namespace ?? item.namespace ?? "default";
    const args = [
      "rollout",
      "status",
      `${lower(object.kind)}/${object.name}`,
      "--namespace",
      namespace,
      `--timeout=${item.timeout}`,
    ];
    return [exec(kubectlCall(options.target, args), { mutates: false })];
  });
  return [...crdWaits, ...rollouts];
}

function manifestSteps(item: ManifestsItem, options: PlanDeployPathOptions): PlanStep[] {
  const fieldManager = options.fieldManager ?? DEFAULT_FIELD_MANAGER;
  // CRDs first, on their own, so that custom resources in the same item find their type.
  const crdFiles = item.files.filter((file) =>
    item.objects.some((object) => object.file === file && object.kind === "CustomResourceDefinition"),
  );
  const apply = (files: readonly string[]) =>
    exec(
      kubectlCall(options.target, [
        "apply",
        "--server-side",
        `--field-manager=${fieldManager}`,
        "--force-conflicts",
        ...(item.namespace === undefined ? [] : ["--namespace", item.namespace]),
        ...files.flatMap((file) => ["--filename", file]),
      ]),
      { mutates: true, reads: files },
    );
  const crds = item.objects.filter((object) => object.kind === "CustomResourceDefinition");
  const rest = item.objects.filter((object) => object.kind !== "CustomResourceDefinition");
  const others = item.files.filter((file) => !crdFiles.includes(file));
  if (crdFiles.length === 0 || others.length === 0)
    return [apply(item.files), ...waitSteps(item, item.objects, options)];
  return [apply(crdFiles), ...waitSteps(item, crds, options), apply(others), ...waitSteps(item, rest, options)];
}

function describe(item: DeployPathItem): string {
  if (item.kind === "manifests") {
    return `${item.objects.length} manifest object${item.objects.length === 1 ? "" : "s"} from ${item.displayDir}`;
  }
  const where =
    item.localChart === undefined ? `${item.pin.chart} ${item.pin.version}` : `local chart ${item.pin.chart}`;
  return `chart ${where} as release ${item.release}`;
}

/**
 * The plan items of a deploy path, in its order: one `helm upgrade --install --wait` per
 * chart item, one server-side `kubectl apply` per manifests item followed by a wait for its
 * CRDs and workloads. Every call is exact: what a dry run prints is what a run executes.
 * Re-running changes nothing: helm upgrades in place and the applies are server-side with
 * one field manager.
 */
export function planDeployPathItems(path: DeployPath, options: PlanDeployPathOptions): PlanItem[] {
  return path.items.map((item) => ({
    id: item.name,
    title: describe(item),
    steps: item.kind === "chart" ? chartSteps(item, options) : manifestSteps(item, options),
  }));
}

/** The deploy path alone as a plan (for operators applying it without the installer). */
export function planDeployPath(path: DeployPath, options: PlanDeployPathOptions): Plan {
  return createPlan(`apply deploy path ${path.name}`, planDeployPathItems(path, options), {
    deployPath: path.name,
    items: path.items.length,
  });
}
