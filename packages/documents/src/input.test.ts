import { spawn, spawnSync } from "node:child_process";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { UserError } from "@nodekit/errors";
import { testdir } from "@nodekit/test-utils";
import { afterEach, describe, expect, test } from "vitest";
import { DEFAULT_MAX_INPUT_BYTES, readInputFile, readInputStream } from "./input.ts";

// Issue 22, item 8: an input is read whole, but never past its limit, whatever it is.

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

function expectTooLarge(error: unknown, source: string, maxBytes: number) {
  expect(error).toBeInstanceOf(UserError);
  expect(error).toMatchObject({ code: "INPUT_TOO_LARGE", exitCode: 3, facts: { file: source, maxBytes } });
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("readInputFile", () => {
  test("a file up to the limit is read whole; one byte more is INPUT_TOO_LARGE, naming it and the limit", async () => {
    const dir = await testdir({ "ten.txt": "0123456789", "eleven.txt": "0123456789a" });
    expect((await readInputFile(dir.path("ten.txt"), { maxBytes: 10 })).toString()).toBe("0123456789");

    const error = await rejection(readInputFile(dir.path("eleven.txt"), { maxBytes: 10, source: "eleven.txt" }));

    expectTooLarge(error, "eleven.txt", 10);
    expect((error as Error).message).toBe("eleven.txt is larger than 10 bytes");
  });

  test("a 64 GiB (sparse) file is refused before a byte is read", async () => {
    const dir = await testdir({});
    const handle = await open(dir.path("huge.csv"), "w");
    await handle.truncate(64 * 1024 ** 3);
    await handle.close();
    const started = performance.now();

    const error = await rejection(readInputFile(dir.path("huge.csv"), { what: "the hosts CSV" }));

    expect(performance.now() - started).toBeLessThan(1_000);
    expectTooLarge(error, dir.path("huge.csv"), DEFAULT_MAX_INPUT_BYTES);
    expect((error as Error).message).toBe(`the hosts CSV ${dir.path("huge.csv")} is larger than 8 MiB`);
  });

  test.each(["/dev/zero", "/dev/urandom"])("%s: reading stops one chunk past the limit", async (device) => {
    const error = await rejection(readInputFile(device));
    expectTooLarge(error, device, DEFAULT_MAX_INPUT_BYTES);
  });

  test("a FIFO whose writer never stops nor closes: reading stops at the limit", async () => {
    const dir = await testdir({});
    const fifo = join(dir.root, "hosts.csv");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    // `yes` writes for ever; it ends when the reader closes its end (SIGPIPE), or here.
    const writer = spawn("sh", ["-c", `exec yes name,ip > '${fifo}'`], { stdio: "ignore" });
    cleanups.push(() => writer.kill("SIGKILL"));

    const error = await rejection(readInputFile(fifo, { maxBytes: 1024 * 1024 }));

    expectTooLarge(error, fifo, 1024 * 1024);
  });

  test("the file system's own error is the caller's to word", async () => {
    const dir = await testdir({});
    await expect(readInputFile(join(dir.root, "missing.yaml"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(readInputFile(dir.root)).rejects.toMatchObject({ code: "EISDIR" });
  });
});

describe("readInputStream", () => {
  test("a stream up to the limit is read whole", async () => {
    expect((await readInputStream(Readable.from(["ab", Buffer.from("cd")]), { maxBytes: 4 })).toString()).toBe("abcd");
  });

  test("a stream that never ends is destroyed one chunk past the limit: INPUT_TOO_LARGE for stdin", async () => {
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 65_536;
        this.push(Buffer.alloc(65_536));
      },
    });

    const error = await rejection(readInputStream(endless, { maxBytes: 1024 * 1024 }));

    expectTooLarge(error, "stdin", 1024 * 1024);
    expect(endless.destroyed).toBe(true);
    expect(produced).toBeLessThan(4 * 1024 * 1024);
  });
});
