import { readFileSync } from "node:fs";
import { appendFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { onFreePorts, PORT_ATTEMPTS, portTakenLine } from "./ports.ts";

describe("portTakenLine", () => {
  test("finds the line that says a port was taken, among what was written from the offset on", async () => {
    const dir = await tempDir("ports-");
    try {
      const log = join(dir.path, "daemon.log");
      await writeFile(log, "starting\nlisten tcp 127.0.0.1:4000: bind: address already in use\n");
      const retry = readFileSync(log).length; // where a retry's output starts
      await appendFile(log, "starting\nserving on 127.0.0.1:4001\n");

      expect(portTakenLine(log)).toBe("listen tcp 127.0.0.1:4000: bind: address already in use");
      expect(portTakenLine(log, retry)).toBeUndefined();
      expect(portTakenLine(join(dir.path, "missing.log"))).toBeUndefined();
    } finally {
      await dir.cleanup();
    }
  });
});

describe("onFreePorts", () => {
  test("tries again after a taken port, cleaning up first, and returns the try that succeeded", async () => {
    const events: string[] = [];
    let tries = 0;
    const result = await onFreePorts(
      async () => {
        tries++;
        events.push(`try ${tries}`);
        if (tries < PORT_ATTEMPTS) throw new Error("exited");
        return "ready";
      },
      () => "bind: address already in use",
      async (line) => {
        events.push(`retry: ${line}`);
      },
    );
    expect(result).toBe("ready");
    expect(events).toEqual([
      "try 1",
      "retry: bind: address already in use",
      "try 2",
      "retry: bind: address already in use",
      "try 3",
    ]);
  });

  test("throws the last failure after PORT_ATTEMPTS tries, and any other failure at once", async () => {
    let tries = 0;
    const failing = () => {
      tries++;
      return Promise.reject(new Error(`try ${tries} failed`));
    };
    await expect(
      onFreePorts(
        failing,
        () => "address already in use",
        async () => {},
      ),
    ).rejects.toThrow(`try ${PORT_ATTEMPTS} failed`);
    expect(tries).toBe(PORT_ATTEMPTS);

    tries = 0;
    const retried: string[] = [];
    await expect(
      onFreePorts(
        failing,
        () => undefined,
        async (line) => void retried.push(line),
      ),
    ).rejects.toThrow("try 1 failed");
    expect([tries, retried]).toEqual([1, []]);
  });
});
