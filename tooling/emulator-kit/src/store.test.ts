import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { testdir } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import * as z from "zod";
import { StateFileError, type StateFileFormat, StateStore } from "./store.ts";

interface TestState {
  items: string[];
}
const format: StateFileFormat<TestState> = {
  schema: z.strictObject({ items: z.array(z.string()) }),
  what: "a test state file",
  empty: () => ({ items: [] }),
};

// Opens a store on argv[1] and writes a growing state without pause, until it is killed.
const writer = `
import * as z from "zod";
import { StateStore } from ${JSON.stringify(join(import.meta.dirname, "store.ts"))};
const store = await StateStore.open(process.argv[1], {
  schema: z.strictObject({ items: z.array(z.string()) }),
  what: "a test state file",
  empty: () => ({ items: [] }),
});
console.log("writing");
for (let n = 0; ; n++) {
  store.state.items[n % store.state.items.length] = String(n).repeat(10_000);
  await store.persist();
}
`;

describe("StateStore", () => {
  test("after a kill -9 in the middle of a write, the next open leaves only the state file, and reads it", async () => {
    // A state of 10 MB: each write takes a while, so that a kill often comes in the middle of one
    const dir = await testdir({
      "state.json": JSON.stringify({ items: Array.from({ length: 100 }, () => "x".repeat(100_000)) }),
    });
    const path = dir.path("state.json");
    let killedMidWrite = 0;
    for (let round = 0; round < 30 && killedMidWrite < 2; round++) {
      // Given a process writing its state without pause
      const child = spawn(process.execPath, ["--conditions=source", "--input-type=module", "-e", writer, path], {
        cwd: import.meta.dirname,
        stdio: ["ignore", "pipe", "inherit"],
      });
      const [started] = await Promise.race([once(child.stdout, "data"), once(child, "exit")]);
      expect(String(started)).toBe("writing\n");
      // When it is killed outright as soon as a write is under way (its temporary file is there:
      // waiting a fixed time instead left the kill to luck, and a loaded machine missed it)
      const deadline = Date.now() + 10_000;
      while ((await readdir(dir.root)).length < 2 && Date.now() < deadline);
      child.kill("SIGKILL");
      await once(child, "exit");
      if ((await readdir(dir.root)).length > 1) killedMidWrite++;

      // Then the next open removes what the killed write left, and reads the last whole state
      const store = await StateStore.open(path, format);
      expect(await readdir(dir.root)).toEqual(["state.json"]);
      expect(store.state.items).toHaveLength(100);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    }
    expect(killedMidWrite).toBeGreaterThanOrEqual(1);
  }, 120_000);

  test("a state file of the wrong shape is refused with each problem located, and is left as it was", async () => {
    const dir = await testdir({ "state.json": '{\n  "items": [1],\n  "extra": true\n}\n' });
    const error = await StateStore.open(dir.path("state.json"), format).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateFileError);
    expect((error as StateFileError).message.split("\n")).toEqual([
      `state file ${dir.path("state.json")} is not a test state file: 2 problems; move it aside to start empty`,
      expect.stringMatching(/state\.json:2: field items\[0\]: 1 must be a string/),
      expect.stringMatching(/state\.json:\d: .*extra/),
    ]);
    expect(await dir.read("state.json")).toBe('{\n  "items": [1],\n  "extra": true\n}\n');
  });

  test("a missing file is an empty state, written at once; concurrent persists share writes", async () => {
    const dir = await testdir();
    const store = await StateStore.open(join(dir.root, "sub", "state.json"), format);
    expect(await dir.read("sub/state.json")).toBe('{"items":[]}\n');
    store.state.items.push("a");
    await Promise.all([store.persist(), store.persist(), store.persist()]);
    expect(await dir.read("sub/state.json")).toBe('{"items":["a"]}\n');
    await writeFile(join(dir.root, "sub", "state.json"), "");
    await expect(StateStore.open(join(dir.root, "sub", "state.json"), format)).rejects.toThrow(/is empty/);
  });
});
