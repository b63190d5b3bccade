import { Writable } from "node:stream";
import { createPlan, exec, runPlan } from "@nodekit/plan";
import { createRecordingRunner } from "@nodekit/process";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";
import { renderPlan } from "./output.ts";
import { createProgressRenderer, planProgress } from "./progress.ts";

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk, _encoding, callback) {
        chunks.push(String(chunk));
        callback();
      },
    }),
    { isTTY, columns: 100, rows: 40 },
  );
  return { stream, text: () => chunks.join("") };
}

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
      onEvent: planProgress(renderer),
      now: () => 0,
    });
    renderer.close();
    expect(err.text()).toBe("[one] skipped: before --from-item two\n[two] second item\n[two] done (0.0s)\n");
  });

  it("is NDJSON records with --json-logs", async () => {
    const err = sink(false);
    const logger = createLogger({ stream: err.stream, json: true, now: () => new Date(0) });
    const renderer = await createProgressRenderer({ stream: err.stream, logger, json: true });
    await runPlan(plan, { runner: createRecordingRunner(), onEvent: planProgress(renderer), now: () => 0 });
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
    await runPlan(plan, { runner: createRecordingRunner(), onEvent: planProgress(renderer), now: () => 0 });
    renderer.close();
    const text = err.text();
    expect(text).toContain("\u001b["); // cursor movement: the list is redrawn, not appended
    expect(text).toContain("✓ one  first item");
    expect(text).toContain("✓ two  second item");
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
