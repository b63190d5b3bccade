import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import * as z from "zod";
import {
  type Check,
  isCluster,
  isClusterRelease,
  isDatetimeText,
  isHealth,
  isMachineImage,
  isNodePool,
  isNodePoolRelease,
  isUuidText,
  listOf,
} from "./checks.ts";
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

// Each fast check must say yes exactly when its zod schema accepts the value and gives it
// back unchanged: then the client may use the value as it came, and anything else goes to
// zod. These properties hold the checks equal to the schemas; a schema change a check does
// not follow fails here.

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
  if (path.length === 0) {
    if (mutation.kind === "replace") return mutation.value;
    if (mutation.kind === "add" && typeof copy === "object" && copy !== null && !Array.isArray(copy)) {
      (copy as Record<string, unknown>)[mutation.key] = mutation.value;
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
    if (typeof target === "object" && target !== null && !Array.isArray(target)) {
      (target as Record<string, unknown>)[mutation.key] = mutation.value;
    }
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
    .tuple(fc.constantFrom("surprise", "name", "status", "spec"), odd)
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

describe("fast checks are held equal to the zod schemas", () => {
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
      fc.property(nearly(page(cluster)), (value) => agrees(listOf(isCluster), ClusterListSchema, value)),
      {
        numRuns: 500,
      },
    );
    fc.assert(
      fc.property(nearly(page(nodePool)), (value) => agrees(listOf(isNodePool), NodePoolListSchema, value)),
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
  });
});

// The UUID and date-time checks use small patterns and arithmetic; zod is the judge. Random strings
// rarely come near a date or a UUID, so the inputs are valid texts, each with one position
// replaced (by a digit, a separator, a letter, a non-ASCII digit or anything), cut, or
// extended, plus the corners: leap years, 24:00, fractions, offsets.

const zodUuid = z.uuid();
const zodDatetime = z.iso.datetime();
const UUID_REGEX = z.regexes.uuid();
const DATETIME_REGEX = z.regexes.datetime({});

/** A character that might be mistaken for part of a date or a UUID. */
const nearChar = fc.oneof(
  fc.constantFrom(..."0123456789-:.TZtz+ abcdefABCDEFgG8912\u0660\u0661\u06f5\uff10\uff19\u0966\u00b2\u00bd\n"),
  fc.string({ minLength: 1, maxLength: 1, unit: "binary" }),
);

/** `valid` texts, and each of them with one position replaced, removed, or a character added. */
function nearMisses(valid: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    valid,
    fc.tuple(valid, fc.nat(), nearChar).map(([text, at, char]) => {
      const i = at % text.length;
      return text.slice(0, i) + char + text.slice(i + 1);
    }),
    fc.tuple(valid, fc.nat()).map(([text, at]) => {
      const i = at % text.length;
      return text.slice(0, i) + text.slice(i + 1);
    }),
    fc.tuple(valid, fc.nat(), nearChar).map(([text, at, char]) => {
      const i = at % (text.length + 1);
      return text.slice(0, i) + char + text.slice(i);
    }),
  );
}

const twoDigit = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, "0"));
/** Date-times from their parts, the impossible ones included (day 31 of every month, 29 February, hour 24, second 60). */
const datetimeText = fc
  .record({
    year: fc.oneof(
      fc.integer({ min: 0, max: 9999 }),
      fc.constantFrom(0, 1600, 1700, 1800, 1900, 2000, 2024, 2100, 2400, 9996),
    ),
    month: twoDigit(13),
    day: fc.oneof(twoDigit(32), fc.constantFrom("28", "29", "30", "31")),
    hour: fc.oneof(twoDigit(24), fc.constantFrom("23", "24")),
    minute: twoDigit(60),
    second: twoDigit(60),
    fraction: fc.oneof(fc.constant(""), fc.stringMatching(/^\.[0-9]{0,12}$/)),
    zone: fc.constantFrom("Z", "Z", "Z", "z", "", "+00:00", "-05:30", "+24:00"),
  })
  .map(
    (p) =>
      `${String(p.year).padStart(4, "0")}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${p.fraction}${p.zone}`,
  );
const isoDatetime = fc
  .date({ min: new Date("0000-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true })
  .map((date) => date.toISOString());
const uuidText = fc.oneof(
  fc.uuid(),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.stringMatching(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/),
  fc.constantFrom(
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
  ),
);

describe("the UUID and date-time checks say what zod says", () => {
  test("date-times: valid ones, impossible ones, near-misses at every position, random strings", () => {
    fc.assert(
      fc.property(
        fc.oneof(nearMisses(fc.oneof(datetimeText, isoDatetime)), fc.string(), fc.string({ unit: "binary" })),
        (text) => {
          const zod = zodDatetime.safeParse(text).success;
          expect(isDatetimeText(text)).toBe(zod);
          expect(DATETIME_REGEX.test(text)).toBe(zod);
        },
      ),
      { numRuns: 20000 },
    );
  });

  test("UUIDs: every version and variant, cases, nil and max, near-misses at every position, random strings", () => {
    fc.assert(
      fc.property(fc.oneof(nearMisses(uuidText), fc.string()), (text) => {
        const zod = zodUuid.safeParse(text).success;
        expect(isUuidText(text)).toBe(zod);
        expect(UUID_REGEX.test(text)).toBe(zod);
      }),
      { numRuns: 20000 },
    );
  });

  test("the corners", () => {
    const yes = [
      "2024-02-29T00:00:00Z",
      "2000-02-29T23:59:59.5Z",
      "0000-02-29T00:00:00Z",
      "1999-12-31T23:59:59.000000001Z",
      "2026-04-30T12:00:00Z",
    ];
    const no = [
      "2100-02-29T00:00:00Z",
      "1900-02-29T00:00:00Z",
      "2023-02-29T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-12-01T24:00:00Z",
      "2026-12-01T00:00:60Z",
      "2026-12-01T00:00:00.Z",
      "2026-12-01T00:00:00+01:00",
      "2026-12-01T00:00:00",
      "2026-12-01T00:00:00Z\n",
      "2026-12-01 00:00:00Z",
      "\u0662026-12-01T00:00:00Z",
      "2026-12-01T00:00:00z",
    ];
    for (const text of yes) expect([text, isDatetimeText(text)]).toEqual([text, true]);
    for (const text of no) expect([text, isDatetimeText(text)]).toEqual([text, false]);
    for (const text of [...yes, ...no]) expect(zodDatetime.safeParse(text).success).toBe(isDatetimeText(text));
  });
});
