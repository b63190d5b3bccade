import type { DeployPath } from "@nodekit/deploy-path";
import { type KubeTarget, kubectlCall, runKube } from "@nodekit/kube";
import { action, exec, type PlanItem, type PlanStep } from "@nodekit/plan";
import type { ProcessRunner } from "@nodekit/process";
import { dump } from "js-yaml";
import {
  INSTALL_RECORD,
  type InstallRecord,
  type OwnedObject,
  parseInstallRecord,
  RECORD_GET_ARGS,
  recordConfigMap,
} from "./install-record.ts";

// Pruning what the install no longer renders (issue 26 §1 item 5): owner marks and a recorded
// inventory, the way kubectl's ApplySet (KEP-3659) and cli-utils' inventory do it, made
// explicit in the plan so that the dry run names every deletion the run makes.
//
// - The inventory: every object the install applies itself (its own items and the deploy
//   path's manifest items; helm prunes its charts' objects, clusterctl owns the providers'),
//   recorded after each complete run in the install record (install-record.ts), the
//   ConfigMap kube-system/nvkectl-install-record, under `objects`.
// - The owner mark: server-side apply's own record, metadata.managedFields: an object nvkectl
//   applied lists the field manager "nvkectl" with operation Apply.
// - A re-run deletes an object the inventory lists and the install no longer renders only if
//   it is still there and still nvkectl's (another manager's object, or one made again by
//   other means, is left in place, and the plan says so). Namespaces and CRDs are never
//   pruned (deleting them deletes everything in them): they are not recorded.

const NEVER_PRUNED = new Set(["Namespace", "CustomResourceDefinition"]);

/** A recorded object the install no longer renders, as found on the cluster. */
interface StaleObject extends OwnedObject {
  /** owned: there, applied by nvkectl (it is deleted); gone: not there; foreign: there, but not nvkectl's. */
  state: "owned" | "gone" | "foreign";
  /** For a foreign object: its field managers. */
  managers?: string[];
}

export interface PruneObservation {
  /** What the inventory listed (empty: no inventory yet). */
  recorded: OwnedObject[];
  stale: StaleObject[];
  /** The site's install record, when there is one. */
  record?: InstallRecord;
}

const groupOf = (apiVersion: string) => (apiVersion.includes("/") ? (apiVersion.split("/")[0] ?? "") : "");

/** The identity of an object across versions of its API: group, kind, namespace, name. */
const identity = (object: Omit<OwnedObject, "item">) =>
  `${groupOf(object.apiVersion)}/${object.kind}/${object.namespace ?? ""}/${object.name}`;

/** The type as kubectl takes it, unambiguous without discovery: `Kind.version.group` (`Secret.v1.`). */
function kubectlType(object: OwnedObject): string {
  const [group, version] = object.apiVersion.includes("/") ? object.apiVersion.split("/") : ["", object.apiVersion];
  return `${object.kind}.${version}.${group}`;
}

const namespaceArgs = (object: OwnedObject) =>
  object.namespace === undefined ? [] : ["--namespace", object.namespace];

/** `kind namespace/name`, as the plan and the docs name an object. */
export const describeObject = (object: OwnedObject) =>
  `${object.kind} ${object.namespace === undefined ? "" : `${object.namespace}/`}${object.name}`;

/** The objects of the deploy path's manifest items that may be pruned, each with its item. */
export function manifestObjects(deployPath: DeployPath): OwnedObject[] {
  return deployPath.items.flatMap((item) =>
    item.kind !== "manifests"
      ? []
      : item.objects.map((object) => {
          const namespace = object.namespace ?? item.namespace;
          return {
            apiVersion: object.apiVersion,
            kind: object.kind,
            name: object.name,
            item: item.name,
            ...(namespace === undefined ? {} : { namespace }),
          };
        }),
  );
}

/** Only what pruning may delete, sorted (the inventory's order, stable run to run). */
export function prunable(objects: readonly OwnedObject[]): OwnedObject[] {
  const unique = new Map(objects.filter((o) => !NEVER_PRUNED.has(o.kind)).map((o) => [identity(o), o]));
  return [...unique.values()].sort((a, b) => identity(a).localeCompare(identity(b)));
}

const where = (kubeconfig: string, doing: string) => ({ doing, kubeconfig, cluster: "the site cluster" });

/**
 * Reads the inventory, then each recorded object the install no longer renders: whether it is
 * there and nvkectl's (read-only; in the dry run too, so that it names each deletion).
 */
export async function observePrune(
  runner: ProcessRunner,
  target: KubeTarget,
  rendered: readonly OwnedObject[],
  fieldManager: string,
): Promise<PruneObservation> {
  const answer = await runKube(
    runner,
    kubectlCall(target, RECORD_GET_ARGS),
    where(target.kubeconfig, "reading the install record"),
  );
  const record =
    answer.found && answer.stdout.trim() !== ""
      ? parseInstallRecord((JSON.parse(answer.stdout) as { data?: Record<string, string> }).data)
      : undefined;
  const recorded = record?.objects ?? [];
  const renderedKeys = new Set(rendered.map(identity));
  const stale: StaleObject[] = [];
  for (const object of recorded.filter((o) => !renderedKeys.has(identity(o)))) {
    const found = await runKube(
      runner,
      kubectlCall(target, [
        "get",
        kubectlType(object),
        object.name,
        ...namespaceArgs(object),
        "--ignore-not-found",
        // kubectl leaves out the owner record otherwise.
        "--show-managed-fields",
        "--output=json",
      ]),
      where(target.kubeconfig, `reading ${describeObject(object)}, which the install no longer renders`),
    );
    if (!found.found || found.stdout.trim() === "") {
      stale.push({ ...object, state: "gone" });
      continue;
    }
    const managedFields =
      (JSON.parse(found.stdout) as { metadata?: { managedFields?: Array<{ manager?: string; operation?: string }> } })
        .metadata?.managedFields ?? [];
    const owned = managedFields.some((entry) => entry.manager === fieldManager && entry.operation === "Apply");
    stale.push(
      owned
        ? { ...object, state: "owned" }
        : { ...object, state: "foreign", managers: [...new Set(managedFields.map((entry) => entry.manager ?? "?"))] },
    );
  }
  return { recorded, stale, ...(record === undefined ? {} : { record }) };
}

/**
 * The plan's last item: delete each recorded object that is no longer rendered and still
 * nvkectl's, then write the install record with what this run applies (a server-side apply
 * that changes nothing when nothing changed: the record keeps its time then).
 */
export function pruneItem(options: {
  target: KubeTarget;
  fieldManager: string;
  inventoryFile: string;
  rendered: readonly OwnedObject[];
  /** The record this run writes; its objects are `rendered`. */
  record: InstallRecord;
  observed: PruneObservation | undefined;
  writeStep: (path: string, content: string, what: string) => PlanStep;
}): PlanItem {
  const { target, rendered, observed } = options;
  const stale = observed?.stale ?? [];
  const deleted = stale.filter((object) => object.state === "owned");
  const steps: PlanStep[] = [];
  for (const object of stale) {
    if (object.state === "owned") {
      steps.push(
        exec(
          kubectlCall(target, [
            "delete",
            kubectlType(object),
            object.name,
            ...namespaceArgs(object),
            "--ignore-not-found",
          ]),
          { mutates: true },
        ),
      );
    } else {
      steps.push(
        action(
          "observed",
          object.state === "gone"
            ? `${describeObject(object)} (${object.item}) is no longer rendered and is gone already`
            : `${describeObject(object)} (${object.item}) is no longer rendered, but left in place: nvkectl did not apply it (its field managers: ${(object.managers ?? []).join(", ")})`,
          { mutates: false, params: { object: describeObject(object), state: object.state } },
        ),
      );
    }
  }
  const record = recordConfigMap({ ...options.record, objects: [...rendered] });
  steps.push(
    options.writeStep(
      options.inventoryFile,
      dump(record, { lineWidth: -1 }),
      `the install record: the release, the items, the providers, the stack config's hash and the ${rendered.length} objects the install applies itself`,
    ),
    exec(
      kubectlCall(target, [
        "apply",
        "--server-side",
        `--field-manager=${options.fieldManager}`,
        "--force-conflicts",
        "--filename",
        options.inventoryFile,
      ]),
      { mutates: true, reads: [options.inventoryFile] },
    ),
  );
  return {
    id: "prune",
    title:
      deleted.length === 0
        ? `nothing to prune; the ${rendered.length} objects applied recorded in ConfigMap ${INSTALL_RECORD.namespace}/${INSTALL_RECORD.name}`
        : `prune ${deleted.length} object${deleted.length === 1 ? "" : "s"} no longer rendered: ${deleted.map(describeObject).join(", ")}`,
    steps,
  };
}
