import { describe, expect, it } from "vitest";
import { engineProblem } from "./bin.ts";

describe("the bin's launcher body", () => {
  it("refuses a Node.js older than 22.22.2 (what engines say) saying which one runs and what to install", () => {
    expect(engineProblem("20.11.1")).toBe(
      "error: this CLI needs Node.js 22.22.2 or newer; this is v20.11.1\nnext: install Node.js 22 LTS (22.22.2 or newer) and run it again\n",
    );
    expect(engineProblem("18.0.0")).toContain("this is v18.0.0");
    expect(engineProblem("22.12.0")).toContain("this is v22.12.0");
    expect(engineProblem("22.22.1")).toContain("this is v22.22.1");
    expect(engineProblem("22.22.2")).toBeUndefined();
    expect(engineProblem("22.23.0")).toBeUndefined();
    expect(engineProblem("24.1.0")).toBeUndefined();
    expect(engineProblem("23.0.0")).toBeUndefined();
  });
});
