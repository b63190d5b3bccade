import { describe, expect, test } from "vitest";
import { namespaceName } from "./client.ts";

describe("namespaceName", () => {
  test("turns any prefix into a valid namespace name", () => {
    expect(namespaceName("RBAC tests", "a1b2c3")).toBe("rbac-tests-a1b2c3");
    expect(namespaceName("--x--", "a1b2c3")).toBe("x-a1b2c3");
    expect(namespaceName("!!!", "a1b2c3")).toBe("test-a1b2c3");
    const long = namespaceName("a".repeat(100), "a1b2c3");
    expect(long).toHaveLength(63);
    expect(long).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });
});
