import { describe, expect, it } from "vitest";
import { humanDuration } from "./time.ts";

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

describe("humanDuration (kubectl's AGE)", () => {
  it.each([
    [-5 * s, "<invalid>"],
    [-1 * s, "0s"],
    [0, "0s"],
    [59 * s, "59s"],
    [119 * s, "119s"],
    [2 * m, "2m"],
    [3 * m + 20 * s, "3m20s"],
    [10 * m + 59 * s, "10m"],
    [179 * m, "179m"],
    [3 * h, "3h"],
    [4 * h + 12 * m, "4h12m"],
    [47 * h, "47h"],
    [2 * d + 3 * h, "2d3h"],
    [8 * d, "8d"],
    [400 * d, "400d"],
    [3 * 365 * d + 10 * d, "3y10d"],
    [9 * 365 * d, "9y"],
  ])("%d ms → %s", (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});
