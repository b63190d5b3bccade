import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type * as z from "zod";
import {
  isCluster,
  isClusterList,
  isClusterRelease,
  isHealth,
  isMachineImage,
  isNodePool,
  isNodePoolList,
  isNodePoolRelease,
} from "./answers.generated.ts";
import {
  ClusterListSchema,
  ClusterReleaseSchema,
  ClusterSchema,
  HealthSchema,
  MachineImageSchema,
  NodePoolListSchema,
  NodePoolReleaseSchema,
  NodePoolSchema,
} from "./schemas.ts";

// Each check generated from a zod schema (answers.generated.ts, by tooling/docs/validators.ts)
// must say yes exactly when the schema accepts the value and gives it back unchanged: then the
// client may use the value as it came, and anything else goes to zod. These properties hold
// the generated code to the schemas it was generated from.

type Check<T> = (value: unknown) => value is T;

const name = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,12}[a-z0-9])?$/);
const uuid = fc.uuid();
const datetime = fc
  .date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2200-01-01T00:00:00Z"), noInvalidDate: true })
  .map((date) => date.toISOString());
const digest = fc.stringMatching(/^[a-f0-9]{64}$/).map((hex) => `sha256:${hex}`);
const labels = fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 });
const text = fc.string({ maxLength: 12 });
const nonEmpty = fc.string({ minLength: 1, maxLength: 12 });
const opt = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

/** A value as the client sees it: what JSON.parse makes of the JSON text. */
const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** An object without the keys whose value is undefined, as JSON has it. */
function record(shape: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(shape).map(asJson);
}

const nico = record({
  instanceType: nonEmpty,
  vpcID: opt(nonEmpty),
  subnetID: opt(nonEmpty),
  sshKeyGroupIDs: opt(fc.array(nonEmpty, { maxLength: 2 })),
  machineImageName: opt(name),
});
const infra = record({
  machineTemplate: record({
    apiVersion: nonEmpty,
    kind: nonEmpty,
    spec: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  }),
});

const cluster = record({
  id: uuid,
  name,
  description: opt(text),
  provider: fc.constantFrom("capd", "nico"),
  clusterReleaseID: uuid,
  clusterReleaseName: name,
  kubernetesVersion: text,
  controlPlaneConfig: record({ replicas: fc.integer({ min: 0, max: 9 }), nodeNamePrefix: text }),
  network: record({ podCIDR: text, serviceCIDR: text, nodeCIDRMaskSize: fc.integer({ min: 0, max: 128 }) }),
  nico: opt(nico),
  infra: opt(infra),
  labels,
  status: record({
    phase: fc.constantFrom("Provisioning", "Ready", "Deleting", "Failed"),
    message: opt(text),
    controlPlaneReady: fc.boolean(),
    controlPlaneEndpoint: opt(text),
    kubeconfigSecret: opt(record({ namespace: text, name: text })),
    conditions: opt(
      fc.array(
        record({
          type: text,
          status: fc.constantFrom("True", "False", "Unknown"),
          reason: opt(text),
          message: opt(text),
          lastTransitionTime: datetime,
        }),
        { maxLength: 3 },
      ),
    ),
  }),
  createdAt: datetime,
  updatedAt: datetime,
});

const nodePool = record({
  id: uuid,
  name,
  clusterID: uuid,
  clusterName: name,
  nodeNamePrefix: text,
  desiredNodeCount: fc.integer({ min: 0, max: 5000 }),
  role: fc.constantFrom("worker", "control-plane"),
  nodePoolReleaseName: opt(text),
  nico: opt(nico),
  infra: opt(infra),
  labels,
  taints: fc.array(
    record({
      key: text,
      value: opt(text),
      effect: fc.constantFrom("NoSchedule", "PreferNoSchedule", "NoExecute"),
    }),
    { maxLength: 2 },
  ),
  status: record({
    phase: fc.constantFrom("Provisioning", "Ready", "Scaling", "Deleting", "Failed"),
    message: opt(text),
    readyNodes: fc.nat(10),
    pendingNodes: fc.nat(10),
    nodes: fc.array(
      record({
        name: text,
        state: fc.constantFrom("Pending", "Provisioning", "Running", "Draining"),
        lastTransitionTime: opt(datetime),
      }),
      { maxLength: 3 },
    ),
  }),
  createdAt: datetime,
  updatedAt: datetime,
});

const machineImage = record({
  id: uuid,
  name,
  version: text,
  description: opt(text),
  kubernetesVersion: text,
  os: record({ distribution: text, version: text }),
  architecture: fc.constantFrom("amd64", "arm64"),
  image: text,
  digest,
  format: text,
  labels,
  createdAt: datetime,
});

const component = record({
  name: nonEmpty,
  version: nonEmpty,
  image: fc.tuple(name, digest).map(([n, d]) => `r.example/${n}@${d}`),
});
const chart = record({
  name: nonEmpty,
  version: nonEmpty,
  repository: fc.tuple(fc.constantFrom("oci", "https"), name).map(([scheme, n]) => `${scheme}://charts.example/${n}`),
  digest,
});
const releaseFields = {
  id: uuid,
  name,
  version: text,
  description: opt(text),
  kubernetesVersion: text,
  machineImageName: text,
  machineImageID: uuid,
  components: fc.array(component, { maxLength: 2 }),
  labels,
  createdAt: datetime,
};
const clusterRelease = record({ ...releaseFields, charts: fc.array(chart, { maxLength: 2 }) });
const nodePoolRelease = record({ ...releaseFields, clusterReleaseName: opt(text) });

type JsonPath = Array<string | number>;

/** Every path into a JSON value (objects and arrays). */
function pathsOf(value: unknown, prefix: JsonPath = []): JsonPath[] {
  const paths: JsonPath[] = [prefix];
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) paths.push(...pathsOf(item, [...prefix, i]));
  } else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) paths.push(...pathsOf(item, [...prefix, key]));
  }
  return paths;
}

type Mutation = { kind: "replace"; value: unknown } | { kind: "delete" } | { kind: "add"; key: string; value: unknown };

function mutate(value: unknown, path: JsonPath, mutation: Mutation): unknown {
  const copy = asJson(value);
  // defineProperty: an own `__proto__` key, as JSON.parse makes one (an assignment would set the prototype).
  const add = (target: object, key: string, value: unknown) =>
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  if (path.length === 0) {
    if (mutation.kind === "replace") return mutation.value;
    if (mutation.kind === "add" && typeof copy === "object" && copy !== null && !Array.isArray(copy)) {
      add(copy, mutation.key, mutation.value);
    }
    return copy;
  }
  let parent = copy as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  const last = path.at(-1) as string | number;
  if (mutation.kind === "replace") parent[last] = mutation.value;
  else if (mutation.kind === "delete") {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else {
    const target = parent[last];
    if (typeof target === "object" && target !== null && !Array.isArray(target))
      add(target, mutation.key, mutation.value);
  }
  return copy;
}

const odd = fc.oneof(
  fc.jsonValue({ maxDepth: 1 }),
  fc.constantFrom(
    "",
    "x",
    "Bad_Name",
    "2026-13-01T00:00:00Z",
    "2026-12-01T00:00:00+01:00",
    "00000000-0000-0000-0000-000000000000",
    "sha256:abc",
    -1,
    1.5,
    2 ** 60,
    null,
    [],
    {},
  ),
  uuid,
  datetime,
);
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  odd.map((value) => ({ kind: "replace" as const, value })),
  fc.constant({ kind: "delete" as const }),
  fc
    .tuple(fc.constantFrom("surprise", "name", "status", "spec", "__proto__"), odd)
    .map(([key, value]) => ({ kind: "add" as const, key, value })),
);

/** A valid value, or one with a few random changes anywhere in it. */
function nearly(valid: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<unknown> {
  return fc.oneof(
    valid,
    fc
      .tuple(valid, fc.array(fc.tuple(fc.nat(), mutation), { minLength: 1, maxLength: 3 }))
      .map(([value, changes]) =>
        changes.reduce<unknown>((current, [at, change]) => {
          const paths = pathsOf(current);
          return mutate(current, paths[at % paths.length] ?? [], change);
        }, value),
      )
      .map(asJson),
  );
}

/** The check says yes exactly when zod accepts the value and returns it unchanged. */
function agrees<T>(check: Check<T>, schema: z.ZodType, value: unknown): boolean {
  const parsed = schema.safeParse(value);
  const unchanged = parsed.success && isDeepStrictEqual(parsed.data, value);
  return check(value) === unchanged;
}

const cases: Array<[string, Check<unknown>, z.ZodType, fc.Arbitrary<Record<string, unknown>>]> = [
  ["Cluster", isCluster, ClusterSchema, cluster],
  ["NodePool", isNodePool, NodePoolSchema, nodePool],
  ["MachineImage", isMachineImage, MachineImageSchema, machineImage],
  ["ClusterRelease", isClusterRelease, ClusterReleaseSchema, clusterRelease],
  ["NodePoolRelease", isNodePoolRelease, NodePoolReleaseSchema, nodePoolRelease],
];

describe("the generated checks are held equal to the zod schemas", () => {
  test.each(cases)("%s: the check accepts every valid object as the controller sends it", (_name, check, _s, valid) => {
    fc.assert(
      fc.property(valid, (value) => check(value)),
      { numRuns: 300 },
    );
  });

  test.each(cases)(
    "%s: yes exactly when zod accepts it unchanged, for valid and broken values",
    (_n, check, schema, valid) => {
      fc.assert(
        fc.property(nearly(valid), (value) => agrees(check, schema, value)),
        { numRuns: 1500 },
      );
    },
  );

  test("list pages and health", () => {
    const page = (item: fc.Arbitrary<Record<string, unknown>>) =>
      record({ items: fc.array(item, { maxLength: 3 }), continue: opt(text) });
    fc.assert(
      fc.property(nearly(page(cluster)), (value) => agrees(isClusterList, ClusterListSchema, value)),
      {
        numRuns: 500,
      },
    );
    fc.assert(
      fc.property(nearly(page(nodePool)), (value) => agrees(isNodePoolList, NodePoolListSchema, value)),
      {
        numRuns: 500,
      },
    );
    for (const value of [{ status: "ok" }, { status: "bad" }, { status: "ok", more: 1 }, null, []]) {
      expect(agrees(isHealth, HealthSchema, value)).toBe(true);
    }
  });

  test("a field zod would strip or fill in sends the value to zod (the check says no)", () => {
    const value = fc.sample(cluster, { numRuns: 1, seed: 1 })[0] as Record<string, unknown>;
    expect(isCluster(value)).toBe(true);
    expect(isCluster({ ...value, newerField: 1 })).toBe(false);
    expect(ClusterSchema.safeParse({ ...value, newerField: 1 }).success).toBe(true);
    const withInfra = {
      ...value,
      infra: { machineTemplate: { apiVersion: "x/v1", kind: "DockerMachineTemplate" } },
    };
    expect(isCluster(withInfra)).toBe(false);
    expect(ClusterSchema.parse(withInfra).infra?.machineTemplate.spec).toEqual({});
    // zod leaves a `__proto__` key out of what it returns: the check says no.
    const proto = JSON.parse(
      JSON.stringify({ ...value, labels: {} }).replace('"labels":{}', '"labels":{"__proto__":"x"}'),
    );
    expect(Object.keys(proto.labels)).toContain("__proto__");
    expect(isCluster(proto)).toBe(false);
    expect(Object.keys(ClusterSchema.parse(proto).labels)).not.toContain("__proto__");
  });
});
