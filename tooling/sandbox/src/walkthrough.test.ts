import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "@nodekit/test-utils";
import { afterEach, describe, expect, test } from "vitest";
import { runWalkthrough, type Step, step, summary, withoutAges } from "./walkthrough.ts";

// The walkthrough runner with small real bash steps and a fake clock for the timings.

const dirs: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of dirs.splice(0)) await cleanup();
});

async function walk(steps: Step[], color = false) {
  const dir = await tempDir("walkthrough-test-");
  dirs.push(dir.cleanup);
  let out = "";
  let clock = 0;
  const results = await runWalkthrough(steps, {
    cwd: dir.path,
    env: { PATH: process.env.PATH ?? "" },
    stateFile: join(dir.path, "exported.sh"),
    io: {
      out: (text) => {
        out += text;
      },
      color,
      now: () => (clock += 100),
    },
  });
  return { out, results, dir: dir.path };
}

describe("runWalkthrough", () => {
  test("announces each step with its command, shows stdout and stderr, and hands exported variables on", async () => {
    const { out, results } = await walk([
      step("Say hello", "echo hello; echo to-stderr >&2", { note: "a note" }),
      step("Remember", "export GREETING=hi"),
      step("Recall", 'echo "$GREETING there"'),
    ]);
    expect(out).toBe(
      [
        "",
        "── 1/3 Say hello",
        "a note",
        "$ echo hello; echo to-stderr >&2",
        "hello",
        "to-stderr",
        "",
        "── 2/3 Remember",
        "$ export GREETING=hi",
        "",
        "── 3/3 Recall",
        '$ echo "$GREETING there"',
        "hi there",
        "",
      ].join("\n"),
    );
    expect(results.map((r) => [r.title, r.ok, r.exitCode])).toEqual([
      ["Say hello", true, 0],
      ["Remember", true, 0],
      ["Recall", true, 0],
    ]);
  });

  test("stops at the first failing step, naming it, its command and what to look at", async () => {
    const { out, results } = await walk([
      step("Fine", "true"),
      step("Breaks", "echo partial; exit 3", { lookAt: "the log" }),
      step("Never runs", "echo never"),
    ]);
    expect(results.map((r) => [r.title, r.ok, r.exitCode, r.failure])).toEqual([
      ["Fine", true, 0, undefined],
      ["Breaks", false, 3, "it exited with code 3"],
    ]);
    expect(out).toContain(
      '✗ step 2/3 "Breaks" failed: it exited with code 3\n  command: echo partial; exit 3\n  look at: the log\n',
    );
    expect(out).not.toContain("never");
    // A pipeline fails when any part fails, and an unset variable is an error, as in a careful script
    const strict = await walk([step("Pipe", "false | cat"), step("Unset", "echo $NOPE")]);
    expect(strict.results.map((r) => r.ok)).toEqual([false]);
    expect((await walk([step("Unset", "echo $NOPE")])).results[0]?.ok).toBe(false);
  });

  test("a check can fail a step that exited 0", async () => {
    const { out, results } = await walk([
      step("Mode", "echo '-rw-r--r-- f'", {
        check: ({ stdout }) => (stdout.startsWith("-rw-------") ? undefined : "the file is not mode 0600"),
      }),
    ]);
    expect(results[0]).toMatchObject({ ok: false, failure: "the file is not mode 0600" });
    expect(out).toContain("failed: the file is not mode 0600");
  });

  test("until: repeats the command, shows each change once, and ends on the exit code or output asked for", async () => {
    const { dir } = await walk([]);
    const counter = join(dir, "n");
    await writeFile(counter, "0");
    // Prints "phase A 1s", "phase A 2s", "phase B 3s", then exits 4 (gone)
    const command = `n=$(($(cat ${counter}) + 1)); echo $n > ${counter}; [ $n -ge 4 ] && exit 4; [ $n -ge 3 ] && p=B || p=A; echo "phase $p \${n}s"`;
    const gone = await walk([
      step("Watch it go", command, { until: { exitCode: 4, everyMs: 1, describe: "it is gone" } }),
    ]);
    expect(gone.results[0]).toMatchObject({ ok: true, exitCode: 4 });
    expect(gone.out).toContain(
      "(again every 0.001 s, shown when it changes, until it is gone)\nphase A 1s\nphase B 3s\n→ exit code 4: it is gone\n",
    );

    await writeFile(counter, "0");
    const ready = await walk([step("Watch", command, { until: { output: /phase B/, everyMs: 1, describe: "B" } })]);
    expect(ready.results[0]).toMatchObject({ ok: true, exitCode: 0 });
    expect(ready.out).toMatch(/phase A 1s\nphase B 3s\n$/);

    // Another exit code than the one waited for fails the step
    const broken = await walk([step("Watch", "exit 7", { until: { exitCode: 4, everyMs: 1, describe: "gone" } })]);
    expect(broken.results[0]).toMatchObject({ ok: false, failure: "it exited with code 7" });
  });

  test("colour only when asked for; the summary lists each step and its time", async () => {
    const plain = await walk([step("One", "true")]);
    expect(plain.out).not.toContain("\u001b[");
    const coloured = await walk([step("One", "true")], true);
    expect(coloured.out).toContain("\u001b[1;36m── 1/1 One\u001b[0m");
    expect(summary(plain.results, 2, false)).toBe("\nWalkthrough done: 1 of 2 steps in 0.1 s.\n  ✓  1  One    0.1 s\n");
    expect(withoutAges("x   Ready   5s\ny   Ready   3m20s\n")).toBe("x   Ready   \ny   Ready   \n");
  });
});
