import { DNS_LABEL_MAX_LENGTH, DNS_LABEL_PATTERN } from "@nodekit/documents/names";
import type { Cluster, ClusterRelease, List, MachineImage, NodePool, NodePoolRelease } from "./schemas.ts";

// Fast structural checks of the controller's answers, without zod: a read's happy path
// never loads it (importing zod, building the schemas and its first parse cost a short-lived
// process ≈ 20 ms). Each check accepts a value only when the schema in schemas.ts accepts it
// AND returns it unchanged (no unknown field to strip, no default to fill), so the value can
// be used as it came; anything else goes to the full zod check. schemas.test.ts holds each
// check equal to its schema with property tests, so a schema change that a check does not
// follow fails there.

/** The check of one kind of object: true only when the schema would return `value` unchanged. */
export type Check<T> = (value: unknown) => value is T;

// zod's patterns for UUIDs and date-times are large: V8 compiling them on first use costs a
// short-lived process ≈ 0.15 and 0.4 ms. These checks use far smaller patterns (the shape only)
// and do the rest (ranges, calendar days) by arithmetic; a loop over the characters instead
// costs more than the small pattern for a page of objects. checks.test.ts holds both equal to
// zod's `z.uuid()` and `z.iso.datetime()` over random strings and near-misses.

const UUID_SHAPE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;

/** zod's `z.uuid()`: RFC 9562 versions 1–8 (variant 10xx), the nil UUID and the max UUID (lowercase). */
export function isUuidText(value: string): boolean {
  return (
    UUID_SHAPE.test(value) ||
    value === "00000000-0000-0000-0000-000000000000" ||
    value === "ffffffff-ffff-ffff-ffff-ffffffffffff"
  );
}

// `\d` without the `u` flag is ASCII 0-9 only, as in zod's pattern.
const DATETIME_SHAPE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/;
const DAYS_IN_MONTH = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** The number the two digits at `at` write (the shape has been checked: they are ASCII digits). */
const twoDigits = (value: string, at: number) => (value.charCodeAt(at) - 48) * 10 + value.charCodeAt(at + 1) - 48;

/** zod's `z.iso.datetime()`: `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, a real calendar day (Gregorian leap years), UTC only. */
export function isDatetimeText(value: string): boolean {
  if (!DATETIME_SHAPE.test(value)) return false;
  const month = twoDigits(value, 5);
  const day = twoDigits(value, 8);
  if (month < 1 || month > 12 || day < 1 || day > (DAYS_IN_MONTH[month] as number)) return false;
  if (twoDigits(value, 11) > 23 || twoDigits(value, 14) > 59 || twoDigits(value, 17) > 59) return false;
  if (month !== 2 || day !== 29) return true;
  const year = twoDigits(value, 0) * 100 + twoDigits(value, 2);
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

const DIGEST_PATTERN = /^sha256:[a-f0-9]{64}$/;

type Fields = Record<string, unknown>;

/** An object as JSON.parse makes it, whose keys are all in `known` (an unknown one would be stripped), none `__proto__`. */
function objectOf(value: unknown, known: ReadonlySet<string>): value is Fields {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key of Object.keys(value)) if (!known.has(key)) return false;
  return !Object.hasOwn(value, "__proto__");
}
const keys = (...names: string[]) => new Set(names);

const isString = (value: unknown): value is string => typeof value === "string";
const isNonEmpty = (value: unknown): value is string => typeof value === "string" && value.length >= 1;
const isInt = (value: unknown): value is number => Number.isSafeInteger(value);
const isBoolean = (value: unknown): value is boolean => typeof value === "boolean";
const isUuid = (value: unknown): boolean => typeof value === "string" && isUuidText(value);
const isDatetime = (value: unknown): boolean => typeof value === "string" && isDatetimeText(value);
const isName = (value: unknown): boolean =>
  typeof value === "string" &&
  value.length >= 1 &&
  value.length <= DNS_LABEL_MAX_LENGTH &&
  DNS_LABEL_PATTERN.test(value);
const optional = (value: unknown, check: (v: unknown) => boolean) => value === undefined || check(value);
const oneOf =
  (...values: string[]) =>
  (value: unknown) =>
    typeof value === "string" && values.includes(value);

function isRecordOf(value: unknown, check: (v: unknown) => boolean): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  if (Object.getPrototypeOf(value) !== Object.prototype || Object.hasOwn(value, "__proto__")) return false;
  for (const item of Object.values(value)) if (!check(item)) return false;
  return true;
}
const isLabels = (value: unknown) => isRecordOf(value, isString);
const isArrayOf = (value: unknown, check: (v: unknown) => boolean) => Array.isArray(value) && value.every(check);

const NICO = keys("instanceType", "vpcID", "subnetID", "sshKeyGroupIDs", "machineImageName");
function isNico(value: unknown): boolean {
  return (
    objectOf(value, NICO) &&
    isNonEmpty(value.instanceType) &&
    optional(value.vpcID, isNonEmpty) &&
    optional(value.subnetID, isNonEmpty) &&
    optional(value.sshKeyGroupIDs, (ids) => isArrayOf(ids, isNonEmpty)) &&
    optional(value.machineImageName, isName)
  );
}

const INFRA = keys("machineTemplate");
const MACHINE_TEMPLATE = keys("apiVersion", "kind", "spec");
function isInfra(value: unknown): boolean {
  if (!objectOf(value, INFRA)) return false;
  const template = value.machineTemplate;
  // spec has a default ({}): a template without one would come back changed, so it goes to zod.
  return (
    objectOf(template, MACHINE_TEMPLATE) &&
    isNonEmpty(template.apiVersion) &&
    isNonEmpty(template.kind) &&
    isRecordOf(template.spec, () => true)
  );
}

const CONTROL_PLANE = keys("replicas", "nodeNamePrefix");
const NETWORK = keys("podCIDR", "serviceCIDR", "nodeCIDRMaskSize");
const SECRET_REF = keys("namespace", "name");
const CLUSTER_STATUS = keys(
  "phase",
  "message",
  "controlPlaneReady",
  "controlPlaneEndpoint",
  "kubeconfigSecret",
  "conditions",
);
const CONDITION = keys("type", "status", "reason", "message", "lastTransitionTime");
const isCondition = (value: unknown) =>
  objectOf(value, CONDITION) &&
  isString(value.type) &&
  oneOf("True", "False", "Unknown")(value.status) &&
  optional(value.reason, isString) &&
  optional(value.message, isString) &&
  isDatetime(value.lastTransitionTime);
const CLUSTER = keys(
  "id",
  "name",
  "description",
  "provider",
  "clusterReleaseID",
  "clusterReleaseName",
  "kubernetesVersion",
  "controlPlaneConfig",
  "network",
  "nico",
  "infra",
  "labels",
  "status",
  "createdAt",
  "updatedAt",
);
const isClusterPhase = oneOf("Provisioning", "Ready", "Deleting", "Failed");

export const isCluster: Check<Cluster> = (value): value is Cluster => {
  if (!objectOf(value, CLUSTER)) return false;
  const { controlPlaneConfig: cp, network, status } = value;
  return (
    isUuid(value.id) &&
    isName(value.name) &&
    optional(value.description, isString) &&
    oneOf("capd", "nico")(value.provider) &&
    isUuid(value.clusterReleaseID) &&
    isName(value.clusterReleaseName) &&
    isString(value.kubernetesVersion) &&
    objectOf(cp, CONTROL_PLANE) &&
    isInt(cp.replicas) &&
    isString(cp.nodeNamePrefix) &&
    objectOf(network, NETWORK) &&
    isString(network.podCIDR) &&
    isString(network.serviceCIDR) &&
    isInt(network.nodeCIDRMaskSize) &&
    optional(value.nico, isNico) &&
    optional(value.infra, isInfra) &&
    isLabels(value.labels) &&
    objectOf(status, CLUSTER_STATUS) &&
    isClusterPhase(status.phase) &&
    optional(status.message, isString) &&
    isBoolean(status.controlPlaneReady) &&
    optional(status.controlPlaneEndpoint, isString) &&
    optional(
      status.kubeconfigSecret,
      (ref) => objectOf(ref, SECRET_REF) && isString(ref.namespace) && isString(ref.name),
    ) &&
    optional(status.conditions, (conditions) => isArrayOf(conditions, isCondition)) &&
    isDatetime(value.createdAt) &&
    isDatetime(value.updatedAt)
  );
};

const TAINT = keys("key", "value", "effect");
const NODE = keys("name", "state", "lastTransitionTime");
const POOL_STATUS = keys("phase", "message", "readyNodes", "pendingNodes", "nodes");
const NODE_POOL = keys(
  "id",
  "name",
  "clusterID",
  "clusterName",
  "nodeNamePrefix",
  "desiredNodeCount",
  "role",
  "nodePoolReleaseName",
  "nico",
  "infra",
  "labels",
  "taints",
  "status",
  "createdAt",
  "updatedAt",
);
const isTaint = (value: unknown) =>
  objectOf(value, TAINT) &&
  isString(value.key) &&
  optional(value.value, isString) &&
  oneOf("NoSchedule", "PreferNoSchedule", "NoExecute")(value.effect);
const isNode = (value: unknown) =>
  objectOf(value, NODE) &&
  isString(value.name) &&
  oneOf("Pending", "Provisioning", "Running", "Draining")(value.state) &&
  optional(value.lastTransitionTime, isDatetime);

export const isNodePool: Check<NodePool> = (value): value is NodePool => {
  if (!objectOf(value, NODE_POOL)) return false;
  const { status } = value;
  return (
    isUuid(value.id) &&
    isName(value.name) &&
    isUuid(value.clusterID) &&
    isName(value.clusterName) &&
    isString(value.nodeNamePrefix) &&
    isInt(value.desiredNodeCount) &&
    oneOf("worker", "control-plane")(value.role) &&
    optional(value.nodePoolReleaseName, isString) &&
    optional(value.nico, isNico) &&
    optional(value.infra, isInfra) &&
    isLabels(value.labels) &&
    isArrayOf(value.taints, isTaint) &&
    objectOf(status, POOL_STATUS) &&
    oneOf("Provisioning", "Ready", "Scaling", "Deleting", "Failed")(status.phase) &&
    optional(status.message, isString) &&
    isInt(status.readyNodes) &&
    isInt(status.pendingNodes) &&
    isArrayOf(status.nodes, isNode) &&
    isDatetime(value.createdAt) &&
    isDatetime(value.updatedAt)
  );
};

const OS = keys("distribution", "version");
const MACHINE_IMAGE = keys(
  "id",
  "name",
  "version",
  "description",
  "kubernetesVersion",
  "os",
  "architecture",
  "image",
  "digest",
  "format",
  "labels",
  "createdAt",
);
export const isMachineImage: Check<MachineImage> = (value): value is MachineImage =>
  objectOf(value, MACHINE_IMAGE) &&
  isUuid(value.id) &&
  isName(value.name) &&
  isString(value.version) &&
  optional(value.description, isString) &&
  isString(value.kubernetesVersion) &&
  objectOf(value.os, OS) &&
  isString(value.os.distribution) &&
  isString(value.os.version) &&
  oneOf("amd64", "arm64")(value.architecture) &&
  isString(value.image) &&
  typeof value.digest === "string" &&
  DIGEST_PATTERN.test(value.digest) &&
  isString(value.format) &&
  isLabels(value.labels) &&
  isDatetime(value.createdAt);

// The release objects' components and charts are re-declared with z.object over the
// request's strict shapes: the same field rules, unknown fields stripped.
const COMPONENT = keys("name", "version", "image");
const IMAGE_REFERENCE = /^[^\s@]+@sha256:[a-f0-9]{64}$/;
const isComponent = (value: unknown) =>
  objectOf(value, COMPONENT) &&
  isNonEmpty(value.name) &&
  isNonEmpty(value.version) &&
  typeof value.image === "string" &&
  IMAGE_REFERENCE.test(value.image);
const CHART = keys("name", "version", "repository", "digest");
const CHART_REPOSITORY = /^(oci|https):\/\/\S+$/;
const isChart = (value: unknown) =>
  objectOf(value, CHART) &&
  isNonEmpty(value.name) &&
  isNonEmpty(value.version) &&
  typeof value.repository === "string" &&
  CHART_REPOSITORY.test(value.repository) &&
  typeof value.digest === "string" &&
  DIGEST_PATTERN.test(value.digest);

const RELEASE = [
  "id",
  "name",
  "version",
  "description",
  "kubernetesVersion",
  "machineImageName",
  "machineImageID",
  "components",
  "labels",
  "createdAt",
];
function isReleaseFields(value: Fields): boolean {
  return (
    isUuid(value.id) &&
    isName(value.name) &&
    isString(value.version) &&
    optional(value.description, isString) &&
    isString(value.kubernetesVersion) &&
    isString(value.machineImageName) &&
    isUuid(value.machineImageID) &&
    isArrayOf(value.components, isComponent) &&
    isLabels(value.labels) &&
    isDatetime(value.createdAt)
  );
}
const CLUSTER_RELEASE = keys(...RELEASE, "charts");
export const isClusterRelease: Check<ClusterRelease> = (value): value is ClusterRelease =>
  objectOf(value, CLUSTER_RELEASE) && isReleaseFields(value) && isArrayOf(value.charts, isChart);
const NODE_POOL_RELEASE = keys(...RELEASE, "clusterReleaseName");
export const isNodePoolRelease: Check<NodePoolRelease> = (value): value is NodePoolRelease =>
  objectOf(value, NODE_POOL_RELEASE) && isReleaseFields(value) && optional(value.clusterReleaseName, isString);

const LIST = keys("items", "continue");
/** The check of a list page of `item`s. */
export function listOf<T>(item: Check<T>): Check<List<T>> {
  return (value): value is List<T> =>
    objectOf(value, LIST) && isArrayOf(value.items, item) && optional(value.continue, isString);
}

const HEALTH = keys("status");
export const isHealth: Check<{ status: "ok" }> = (value): value is { status: "ok" } =>
  objectOf(value, HEALTH) && value.status === "ok";
