import { describe, expect, it } from "vitest";
import { engineProblem } from "./bin.ts";

describe("the bin's launcher body", () => {
  it("refuses a Node.js older than 22 saying which one runs and what to install", () => {
    expect(engineProblem("20.11.1")).toBe(
      "error: this CLI needs Node.js 22 or newer; this is v20.11.1\nnext: install Node.js 22 LTS or newer and run it again\n",
    );
    expect(engineProblem("18.0.0")).toContain("this is v18.0.0");
    expect(engineProblem("22.12.0")).toBeUndefined();
    expect(engineProblem("24.1.0")).toBeUndefined();
  });
});
