import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { defineErrorCodes, ExitCode, UserError } from "@nodekit/errors";
import { createExecaRunner, createRecordingRunner, type ProcessRunner, Redactor } from "@nodekit/process";
import { tempDir, userErrorOf } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import {
  action,
  createPlan,
  exec,
  formatPlan,
  type PlanEvent,
  planCallLines,
  planDocument,
  planFrom,
  runPlan,
} from "./index.ts";

const node = process.execPath;
const ok = (text: string) =>
  exec({ command: node, args: ["-e", `process.stdout.write(${JSON.stringify(text)})`] }, { mutates: true });

describe("a plan as data", () => {
  test("prints one copy-pasteable, redacted line per call, under a comment per item", () => {
    const redactor = new Redactor();
    redactor.add("s3cret-token");
    const plan = createPlan("install the stack", [
      {
        id: "cert-manager",
        title: "cert-manager v1.19.1",
        steps: [
          exec(
            {
              command: "helm",
              args: ["upgrade", "--install", "cert-manager", "./charts/cert manager"],
              env: { HOME: "/t" },
            },
            { mutates: true, reads: ["./charts/cert manager"] },
          ),
          exec(
            { command: "kubectl", args: ["wait", "--for=condition=Available", "deployment/cert-manager"] },
            { mutates: false },
          ),
        ],
      },
      {
        id: "secret",
        title: "the credentials Secret",
        steps: [
          exec(
            {
              command: "kubectl",
              args: ["apply", "-f", "-"],
              input: "token: s3cret-token",
              env: { T: "s3cret-token" },
              secretEnv: ["T"],
            },
            { mutates: true },
          ),
          action("notify", "tell the API that s3cret-token was used", {
            mutates: true,
            params: { token: "s3cret-token" },
          }),
        ],
      },
    ]);
    expect(formatPlan(plan, { redactor })).toBe(
      [
        "# install the stack",
        "# [1/2] cert-manager: cert-manager v1.19.1",
        "HOME=/t helm upgrade --install cert-manager './charts/cert manager'",
        "kubectl wait --for=condition=Available deployment/cert-manager",
        "# [2/2] secret: the credentials Secret",
        "T=[REDACTED] kubectl apply -f - <<<(stdin: 19 bytes)",
        "# tell the API that [REDACTED] was used",
        "",
      ].join("\n"),
    );
    const document = planDocument(plan, { redactor });
    expect(JSON.stringify(document)).not.toContain("s3cret-token");
    expect(document).toMatchObject({
      apiVersion: "plan.nodekit.dev/v1",
      kind: "Plan",
      items: [
        {
          id: "cert-manager",
          steps: [{ kind: "exec", mutates: true, reads: ["./charts/cert manager"] }, { mutates: false }],
        },
        {
          id: "secret",
          steps: [
            { stdinBytes: 19, env: { T: "[REDACTED]" } },
            { kind: "action", params: { token: "[REDACTED]" } },
          ],
        },
      ],
    });
  });

  test("a duplicate or malformed item id is a bug in the planner", () => {
    expect(() =>
      createPlan("p", [
        { id: "a", title: "a", steps: [] },
        { id: "a", title: "b", steps: [] },
      ]),
    ).toThrow(/used twice/);
    expect(() => createPlan("p", [{ id: "Not OK", title: "a", steps: [] }])).toThrow(/lower-case/);
  });
});

describe("runPlan", () => {
  test("runs every call in order and reports typed events", async () => {
    const plan = createPlan("p", [
      { id: "one", title: "first", steps: [ok("1"), ok("2")] },
      { id: "two", title: "second", steps: [ok("3")] },
    ]);
    const events: PlanEvent[] = [];
    const recorder = createRecordingRunner({ inner: createExecaRunner() });
    const result = await runPlan(plan, { runner: recorder, onEvent: (e) => events.push(e), now: () => 0 });
    expect(result).toEqual({ ran: ["one", "two"], skipped: [] });
    expect(recorder.calls.map((c) => c.line)).toEqual(planCallLines(plan));
    expect(events.map((e) => e.type)).toEqual([
      "plan-started",
      "item-started",
      "step-started",
      "step-finished",
      "step-started",
      "step-finished",
      "item-finished",
      "item-started",
      "step-started",
      "step-finished",
      "item-finished",
      "plan-finished",
    ]);
  });

  test("stops at the first failure naming the item and the call; --from-item finishes", async () => {
    const { path: dir, cleanup } = await tempDir("plan-");
    try {
      const flag = join(dir, "fixed");
      const failing = exec(
        {
          command: node,
          args: ["-e", `require("fs").existsSync(${JSON.stringify(flag)}) || (console.error("boom"), process.exit(3))`],
        },
        { mutates: true },
      );
      const plan = createPlan("p", [
        { id: "one", title: "first", steps: [ok("1")] },
        { id: "two", title: "second", steps: [failing] },
        { id: "three", title: "third", steps: [ok("3")] },
      ]);
      const recorder = createRecordingRunner({ inner: createExecaRunner() });
      const error = await userErrorOf(runPlan(plan, { runner: recorder }));
      expect(error).toMatchObject({ code: "PLAN_STEP_FAILED", exitCode: ExitCode.CheckFailed });
      expect(error.message).toBe("two (second) failed");
      expect(error.why).toContain("exited with code 3: boom");
      expect(error.facts.planItem).toBe("two");
      expect(recorder.calls).toHaveLength(2);

      await writeFile(flag, "");
      const events: PlanEvent[] = [];
      const resumed = await runPlan(plan, { runner: recorder, fromItem: "two", onEvent: (e) => events.push(e) });
      expect(resumed).toEqual({ ran: ["two", "three"], skipped: ["one"] });
      expect(
        events.filter((e) => e.type === "item-skipped").map((e) => e.type === "item-skipped" && e.item.id),
      ).toEqual(["one"]);
    } finally {
      await cleanup();
    }
  });

  test("an unknown --from-item is refused before anything runs, naming the items", async () => {
    const recorder = createRecordingRunner();
    const plan = createPlan("p", [
      { id: "one", title: "first", steps: [ok("1")] },
      { id: "two", title: "t", steps: [] },
    ]);
    const error = await userErrorOf(runPlan(plan, { runner: recorder, fromItem: "nope" }));
    expect(error).toMatchObject({ code: "PLAN_ITEM_UNKNOWN", exitCode: ExitCode.Usage });
    expect(error.why).toBe("its items are, in order: one, two");
    expect(recorder.calls).toHaveLength(0);
  });

  test("planFrom is what a run from that item runs: earlier items keep their number, without steps", async () => {
    const plan = createPlan("p", [
      { id: "one", title: "first", steps: [ok("1")] },
      { id: "two", title: "second", steps: [ok("2")] },
      { id: "three", title: "third", steps: [ok("3")] },
    ]);
    const from = planFrom(plan, "two");
    expect(
      formatPlan(from)
        .split("\n")
        .filter((line) => line.startsWith("# [")),
    ).toEqual(["# [1/3] one: first (skipped: before --from-item two)", "# [2/3] two: second", "# [3/3] three: third"]);
    const recorder = createRecordingRunner();
    await runPlan(plan, { runner: recorder, fromItem: "two" });
    expect(recorder.calls.map((call) => call.line)).toEqual(planCallLines(from));
    expect(planFrom(plan, undefined)).toBe(plan);
    expect(() => planFrom(plan, "nope")).toThrow('the plan has no item "nope"');
  });

  test("a classified failure keeps its own code and exit code, with the item named", async () => {
    const codes = defineErrorCodes("t", { T_UNREACHABLE: { exitCode: ExitCode.Unreachable, meaning: "t." } });
    const fail = exec({ command: node, args: ["-e", "process.exit(1)"] }, { mutates: true });
    const plan = createPlan("p", [{ id: "one", title: "first", steps: [fail] }]);
    const error = await userErrorOf(
      runPlan(plan, {
        runner: createExecaRunner(),
        describeFailure: () => new UserError(codes.T_UNREACHABLE, "cannot reach the cluster"),
      }),
    );
    expect([error.code, error.exitCode, error.message]).toEqual(["T_UNREACHABLE", 6, "one: cannot reach the cluster"]);
  });

  test("actions run through their handlers; a missing handler is a bug", async () => {
    const seen: string[] = [];
    const plan = createPlan("p", [
      {
        id: "one",
        title: "first",
        steps: [action("download", "download helm", { mutates: true, params: { tool: "helm" } })],
      },
    ]);
    await runPlan(plan, {
      runner: createRecordingRunner(),
      actions: { download: async (step) => void seen.push(String(step.params?.tool)) },
    });
    expect(seen).toEqual(["helm"]);
    await expect(runPlan(plan, { runner: createRecordingRunner() })).rejects.toThrow(/no handler for plan action/);
  });
});

/**
 * The pattern every planner follows, shown on a small one: read-only observations run in
 * both modes; the plan is built purely from what they found; a dry run prints the plan; a
 * real run executes that same plan. The witness proves the two agree, also when the
 * observation changes what the plan holds.
 */
describe("observe, plan, then print or run: the dry run is what the real run does", () => {
  async function observeArch(runner: ProcessRunner): Promise<string> {
    // A child gets an allow-listed environment: the observation names what it reads.
    const answer = await runner.run({
      command: node,
      args: ["-p", "process.env.FAKE_ARCH ?? process.arch"],
      inheritEnv: ["FAKE_ARCH"],
    });
    return answer.stdout.trim();
  }
  function planFor(arch: string) {
    const image = arch === "arm64" ? "controller:v1-arm64" : "controller:v1-amd64";
    return createPlan(
      "install",
      [
        {
          id: "controller",
          title: `the controller for ${arch}`,
          steps: [exec({ command: node, args: ["-e", "", "--", "install", image] }, { mutates: true })],
        },
      ],
      { arch },
    );
  }

  test.each(["x64", "arm64"])("with architecture %s", async (arch) => {
    const observer = createExecaRunner();
    process.env.FAKE_ARCH = arch;
    try {
      const dryRun = formatPlan(planFor(await observeArch(observer)));
      const witness = createRecordingRunner({ inner: createExecaRunner() });
      const plan = planFor(await observeArch(observer));
      await runPlan(plan, { runner: witness });
      const printed = dryRun.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
      expect(witness.calls.map((call) => call.line)).toEqual(printed);
      expect(printed[0]).toContain(arch === "arm64" ? "arm64" : "amd64");
    } finally {
      delete process.env.FAKE_ARCH;
    }
  });
});
