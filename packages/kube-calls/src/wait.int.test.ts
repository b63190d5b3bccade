import { type CommandCall, createExecaRunner } from "@nodekit/process";
import { eventually } from "@nodekit/test-utils";
import type { ControlPlaneClient } from "@nodekit/testenv";
import { looseCrd } from "@nodekit/testenv/capi-repository";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { beforeAll, describe, expect, test } from "vitest";
import { crdEstablishedWaitArgs, kubectlCall } from "./index.ts";

// The machine's kubectl against the test tier's kube-apiserver. A CRD is created with
// `.status.conditions: null` and keeps it until the naming controller's first status update,
// a window too short to hit on purpose. A custom resource of a CRD without a status subresource
// takes its status from the create, so `conditions: null` holds still for as long as a test
// needs, and then changes when the test says.

const GROUP = "waits.nodekit.dev";
let plane: ControlPlaneClient;
let namespace: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function kubectl(args: readonly string[], input?: string) {
  const call: CommandCall = kubectlCall({ kubeconfig: plane.adminKubeconfigPath }, args);
  return createExecaRunner().run(input === undefined ? call : { ...call, input }, { allowFailure: true });
}

async function must(args: readonly string[], input?: string): Promise<string> {
  const result = await kubectl(args, input);
  if (result.exitCode !== 0) throw new Error(`kubectl ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

/** A CRD of GROUP without a status subresource: its objects' `status` is written by a create. */
const crd = (plural: string, kind: string) => looseCrd(plural, kind, GROUP, "v1", { statusSubresource: false });

/** A Gadget (no status subresource) created with `status.conditions: null`, as a new CRD's. */
async function gadgetWithNullConditions(name: string): Promise<string[]> {
  const object = {
    apiVersion: `${GROUP}/v1`,
    kind: "Gadget",
    metadata: { name, namespace },
    status: { conditions: null },
  };
  // The handler may lag Established by a moment.
  await eventually(() => must(["create", "--filename=-"], JSON.stringify(object)));
  expect(JSON.parse(await must(["get", `gadget/${name}`, "--namespace", namespace, "-o", "json"])).status).toEqual({
    conditions: null,
  });
  return [`gadget/${name}`, "--namespace", namespace];
}

const setConditions = (resource: string[], conditions: object[]) =>
  must(["patch", ...resource, "--type=merge", `--patch=${JSON.stringify({ status: { conditions } })}`]);

beforeAll(async () => {
  // A plane of this file's own: the CRDs outlive the tests.
  plane = await useControlPlane({ dedicated: true });
  namespace = await plane.createNamespace("crd-wait");
  await must(["create", "--filename=-"], JSON.stringify(crd("gadgets", "Gadget")));
  for (const args of crdEstablishedWaitArgs([`crd/gadgets.${GROUP}`], "60s")) await must(args);
});

describe("waiting for CRDs to be Established (kubernetes/kubernetes#66439)", () => {
  test("kubectl's own forms fail at once on null conditions instead of waiting", async () => {
    // Given an object whose conditions are null
    const gadget = await gadgetWithNullConditions("plain");
    for (const [form, error] of [
      ["--for=condition=Established", ".status.conditions accessor error: <nil> is of the type <nil>"],
      ['--for=jsonpath={.status.conditions[?(@.type=="Established")].status}=True', "cannot be filtered"],
    ] as const) {
      // When kubectl waits for it with a minute to spare
      const started = Date.now();
      const result = await kubectl(["wait", form, ...gadget, "--timeout=60s"]);
      // Then it fails, long before the minute is up
      expect(result.exitCode, form).toBe(1);
      expect(result.stderr, form).toContain(error);
      expect(Date.now() - started, form).toBeLessThan(30_000);
    }
  });

  test("the two waits keep waiting on null conditions and end once Established is True", async () => {
    // Given an object whose conditions are null
    const gadget = await gadgetWithNullConditions("waited");
    const started: string[] = [];
    const runner = createExecaRunner({ onCall: (line) => started.push(line) });
    // What the waits ended with: the first failure's output, or when they all succeeded.
    let outcome: { failed: string } | { succeededAt: number } | undefined;
    // When the waits run
    const waits = (async () => {
      for (const args of crdEstablishedWaitArgs(gadget, "60s")) {
        const call = kubectlCall({ kubeconfig: plane.adminKubeconfigPath }, args);
        const result = await runner.run(call, { allowFailure: true });
        if (result.exitCode !== 0) {
          outcome = { failed: result.stderr };
          return;
        }
      }
      outcome = { succeededAt: Date.now() };
    })();
    // Then they are still waiting a while later
    await sleep(3_000);
    expect(outcome).toBeUndefined();
    expect(started).toHaveLength(1);
    // and the first ends once there is a condition; the second waits on while it is False
    await setConditions(gadget, [
      { type: "NamesAccepted", status: "True" },
      { type: "Established", status: "False" },
    ]);
    await eventually(async () => expect(started).toHaveLength(2));
    expect(started[0]).toContain("'--for=jsonpath={.status.conditions[0].type}' gadget/waited");
    expect(started[1]).toContain("--for=condition=Established gadget/waited");
    await sleep(2_000);
    expect(outcome).toBeUndefined();
    // and both end, successfully, once it is True
    const madeTrue = Date.now();
    await setConditions(gadget, [
      { type: "NamesAccepted", status: "True" },
      { type: "Established", status: "True" },
    ]);
    await waits;
    expect(outcome).toEqual({ succeededAt: expect.any(Number) });
    expect(outcome && "succeededAt" in outcome && outcome.succeededAt).toBeGreaterThanOrEqual(madeTrue);
  });

  test("CRDs applied together are waited for until each is Established", async () => {
    // Given CRDs just applied
    const plurals = Array.from({ length: 8 }, (_, i) => `parts${i}`);
    const items = plurals.map((plural, i) => crd(plural, `Part${i}`));
    await must(["apply", "--server-side", "--filename=-"], JSON.stringify({ apiVersion: "v1", kind: "List", items }));
    // When the waits run at once
    const names = plurals.map((plural) => `crd/${plural}.${GROUP}`);
    for (const args of crdEstablishedWaitArgs(names, "60s")) await must(args);
    // Then every one is Established
    for (const name of names) {
      const status = JSON.parse(await must(["get", name, "-o", "json"])).status;
      expect(status.conditions).toContainEqual(expect.objectContaining({ type: "Established", status: "True" }));
    }
  });
});
