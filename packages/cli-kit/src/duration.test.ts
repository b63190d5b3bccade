import { describe, expect, it } from "vitest";
import { parseDuration } from "./duration.ts";

const s = 1000;
const m = 60 * s;

describe("parseDuration", () => {
  it.each([
    ["90s", 90 * s],
    ["10m", 10 * m],
    ["1h30m", 90 * m],
    ["500ms", 500],
    ["45", 45 * s],
    ["1.5s", 1500],
  ])("%s → %d ms", (text, ms) => {
    expect(parseDuration(text, "--timeout")).toBe(ms);
  });

  it.each(["", "soon", "10 m", "5d", "m10"])("refuses %j as a usage error", (text) => {
    expect(() => parseDuration(text, "--timeout")).toThrow(
      expect.objectContaining({ code: "INVALID_DURATION", exitCode: 2 }),
    );
  });
});
