import { existsSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { describe, expect, test } from "vitest";
import { type TestDir, testdir } from "./testdir.ts";

describe("testdir", () => {
  test("writes the tree into a fresh temp dir: nested files, modes, bytes and empty directories", async () => {
    // Given a tree with a nested file, an executable, raw bytes and an empty directory
    const dir = await testdir(
      {
        "a/b.yaml": "name: lab\n",
        "bin/x": { content: "#!/bin/sh\necho hi\n", mode: 0o755 },
        secret: { content: "token", mode: 0o600 },
        "blob.bin": new Uint8Array([0, 1, 2]),
        "empty/": "",
      },
      { prefix: "testdir-test-" },
    );

    // Then every entry is there, as given
    expect(dir.root.startsWith(join(tmpdir(), "testdir-test-"))).toBe(true);
    expect(await dir.read("a/b.yaml")).toBe("name: lab\n");
    expect(await readFile(dir.path("a/b.yaml"), "utf8")).toBe("name: lab\n");
    expect((await stat(dir.path("bin/x"))).mode & 0o777).toBe(0o755);
    expect((await stat(dir.path("secret"))).mode & 0o777).toBe(0o600);
    expect([...(await readFile(dir.path("blob.bin")))]).toEqual([0, 1, 2]);
    expect((await stat(dir.path("empty"))).isDirectory()).toBe(true);
    expect(dir.path()).toBe(dir.root);
    expect(dir.path("a/b.yaml")).toBe(`${dir.root}${sep}a${sep}b.yaml`);
  });

  test("write adds to the tree and overwrites a file of the same path", async () => {
    const dir = await testdir({ "a.txt": "one" });
    await dir.write({ "a.txt": "two", "b/c.txt": "three" });
    expect(await dir.read("a.txt")).toBe("two");
    expect(await dir.read("b/c.txt")).toBe("three");
  });

  test("refuses a path that leaves the directory, and leaves no directory behind then", async () => {
    const prefix = `testdir-escape-${process.pid}-`;
    const leftovers = async () => (await readdir(tmpdir())).filter((name) => name.startsWith(prefix));
    await expect(testdir({ "../escape.txt": "x" }, { prefix })).rejects.toThrow(
      /"..\/escape.txt" is not a path inside/,
    );
    await expect(testdir({ "/etc/passwd": "x" }, { prefix })).rejects.toThrow(/is not a path inside/);
    expect(await leftovers()).toEqual([]);

    const dir = await testdir({}, { prefix });
    expect(() => dir.path("../x")).toThrow(/is not a path inside/);
    await expect(dir.read("a/../../x")).rejects.toThrow(/is not a path inside/);
    await expect(dir.write({ "a/../../x": "" })).rejects.toThrow(/is not a path inside/);
  });

  test("remove() removes it at once, and twice is fine", async () => {
    const dir = await testdir({ "a.txt": "x" });
    await dir.remove();
    expect(existsSync(dir.root)).toBe(false);
    await dir.remove();
  });

  // The next test checks that the one before it left no directory behind.
  let fromEarlierTest: TestDir | undefined;
  test("(a directory made here)", async () => {
    fromEarlierTest = await testdir({ "a.txt": "x" });
    expect(existsSync(fromEarlierTest.root)).toBe(true);
  });
  test("is removed when the test that made it finishes", () => {
    expect(fromEarlierTest).toBeDefined();
    expect(existsSync(fromEarlierTest?.root ?? "")).toBe(false);
  });
});
