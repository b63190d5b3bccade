import { Redactor } from "@nodekit/process";
import { sink } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";

describe("createLogger", () => {
  it("hides debug unless verbose, prefixes warnings and errors, prints details under them", () => {
    const out = sink();
    const logger = createLogger({ stream: out.stream });
    logger.debug("hidden");
    logger.info("hello");
    logger.warn("careful");
    logger.error("broke", { code: "X" }, ["  detail", "next: fix it"]);
    expect(out.text()).toBe("hello\nwarning: careful\nerror: broke\n  detail\nnext: fix it\n");
  });

  it("shows debug lines with fields under -v", () => {
    const out = sink();
    createLogger({ stream: out.stream, verbose: true }).debug("running", { cmd: "kubectl", n: 2 });
    expect(out.text()).toBe("debug: running cmd=kubectl n=2\n");
  });

  it("writes NDJSON with --json-logs, one parseable object a line, without the human details", () => {
    const out = sink();
    const logger = createLogger({ stream: out.stream, json: true, now: () => new Date(0) });
    logger.warn("careful", { site: "a" });
    logger.error("broke", { code: "X" }, ["human only"]);
    const lines = out
      .text()
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      { time: "1970-01-01T00:00:00.000Z", level: "warn", msg: "careful", site: "a" },
      { time: "1970-01-01T00:00:00.000Z", level: "error", msg: "broke", code: "X" },
    ]);
  });

  it("redacts registered secrets in text, fields and details", () => {
    const redactor = new Redactor();
    redactor.add("s3cr3t-token");
    const text = sink();
    createLogger({ stream: text.stream, redactor, verbose: true }).error("token s3cr3t-token", {}, ["s3cr3t-token"]);
    const json = sink();
    createLogger({ stream: json.stream, redactor, json: true }).info("x", { token: "s3cr3t-token" });
    expect(text.text() + json.text()).not.toContain("s3cr3t-token");
    expect(text.text()).toContain("[REDACTED]");
  });

  it("colours only on a TTY without NO_COLOR", () => {
    const tty = sink(true);
    createLogger({ stream: tty.stream, env: {} }).warn("w");
    const noColor = sink(true);
    createLogger({ stream: noColor.stream, env: { NO_COLOR: "1" } }).warn("w");
    const pipe = sink(false);
    createLogger({ stream: pipe.stream, env: {} }).warn("w");
    expect(tty.text()).toContain("\u001b[");
    expect(noColor.text()).toBe("warning: w\n");
    expect(pipe.text()).toBe("warning: w\n");
  });
});

it("log lines escape control characters in messages and details, in text and JSON", async () => {
  const { PassThrough } = await import("node:stream");
  for (const json of [false, true]) {
    const stream = new PassThrough();
    let written = "";
    stream.on("data", (chunk: Buffer) => {
      written += chunk.toString();
    });
    const logger = createLogger({ stream, json, now: () => new Date(0) });
    logger.error("controller said \u001b]52;c;eA==\u0007", { why: "\u202e" }, ["  \u001b[2J detail"]);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
    expect(written).not.toMatch(/[\u001b\u0007\u202e]/);
    if (json) expect(JSON.parse(written).msg).toBe("controller said \u001b]52;c;eA==\u0007");
    else expect(written).toBe("error: controller said \\x1b]52;c;eA==\\x07\n  \\x1b[2J detail\n");
  }
});
