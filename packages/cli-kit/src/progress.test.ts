import { createPlan, exec, runPlan } from "@nodekit/plan";
import { createRecordingRunner } from "@nodekit/process";
import { sink } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";
import { renderPlan } from "./output.ts";
import { createProgressRenderer, runProgress } from "./progress.ts";

const plan = createPlan("install", [
  { id: "one", title: "first item", steps: [exec({ command: "true", args: [] }, { mutates: true })] },
  { id: "two", title: "second item", steps: [exec({ command: "true", args: ["again"] }, { mutates: true })] },
]);

describe("progress of a plan run", () => {
  it("is one plain [item] line per change off a TTY", async () => {
    const err = sink(false);
    const logger = createLogger({ stream: err.stream, env: {} });
    const renderer = await createProgressRenderer({ stream: err.stream, logger, env: {} });
    await runPlan(plan, {
      runner: createRecordingRunner(),
      fromItem: "two",
      onEvent: runProgress(renderer),
      now: () => 0,
    });
    renderer.close();
    expect(err.text()).toBe("[one] skipped: before --from-item two\n[two] second item\n[two] done (0.0s)\n");
  });

  it("is NDJSON records with --json-logs", async () => {
    const err = sink(false);
    const logger = createLogger({ stream: err.stream, json: true, now: () => new Date(0) });
    const renderer = await createProgressRenderer({ stream: err.stream, logger, json: true });
    await runPlan(plan, { runner: createRecordingRunner(), onEvent: runProgress(renderer), now: () => 0 });
    const records = err
      .text()
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(records.filter((r) => r.state === "done").map((r) => r.key)).toEqual(["one", "two"]);
    expect(records[0]).toMatchObject({ level: "info", event: "progress", key: "one", state: "running" });
  });

  it("is a live list redrawn in place on a TTY", async () => {
    const err = sink(true);
    const logger = createLogger({ stream: err.stream, env: {} });
    const renderer = await createProgressRenderer({ stream: err.stream, logger, env: { NO_COLOR: "1" } });
    await runPlan(plan, { runner: createRecordingRunner(), onEvent: runProgress(renderer), now: () => 0 });
    renderer.close();
    const text = err.text();
    expect(text).toContain("\u001b["); // cursor movement: the list is redrawn, not appended
    expect(text).toContain("✓ one  first item");
    expect(text).toContain("✓ two  second item");
  });
});

describe("progress of a phase run", () => {
  it("is the same entries and lines, with why a phase runs again or is kept", async () => {
    const err = sink(false);
    const logger = createLogger({ stream: err.stream, env: {} });
    const renderer = await createProgressRenderer({ stream: err.stream, logger, env: {} });
    const feed = runProgress(renderer);
    const ref = (id: string, index: number) => ({ id, title: `Phase ${id}`, index, total: 4 });
    feed({ type: "run-started", name: "t", runId: "r", resume: true, phases: 4 });
    feed({ type: "phase-kept", phase: ref("a", 1), finishedAt: "2025-10-01T12:00:00.000Z", basis: "unchanged" });
    feed({ type: "phase-skipped", phase: ref("b", 2), reason: "--skip-b" });
    feed({ type: "phase-started", phase: ref("c", 3), reason: "probe-failed", detail: "its node is gone" });
    feed({ type: "step-started", phase: ref("c", 3), step: 1, line: "true" });
    feed({ type: "phase-finished", phase: ref("c", 3), ms: 0 });
    feed({ type: "phase-kept", phase: ref("d", 4), finishedAt: undefined, basis: "guard", reason: "--skip-d" });
    renderer.close();
    expect(err.text()).toBe(
      [
        "[a] skipped: done at 2025-10-01T12:00:00.000Z, still in place: kept",
        "[b] skipped: --skip-b",
        "[c] Phase c (again: its work is no longer in place: its node is gone)",
        "[c] done (0.0s)",
        "[d] skipped: done, kept: --skip-d",
        "",
      ].join("\n"),
    );
  });
});

describe("renderPlan", () => {
  it("prints the shell lines by default and the versioned document with -o json", async () => {
    expect(await renderPlan(plan, "table")).toBe(
      "# install\n# [1/2] one: first item\ntrue\n# [2/2] two: second item\ntrue again\n",
    );
    expect(JSON.parse(await renderPlan(plan, "json"))).toMatchObject({
      apiVersion: "plan.nodekit.dev/v1",
      kind: "Plan",
    });
  });
});
