import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dnsLabelFault, isDnsLabel } from "./names.ts";

describe("the DNS-1123 label rule", () => {
  it.each([
    ["lab", undefined],
    ["a", undefined],
    ["tenant-a1", undefined],
    ["", "is empty"],
    ["Lab", "contains uppercase letters"],
    ["a_b", 'contains "_"'],
    ["-a", 'starts with "-"'],
    ["a-", 'ends with "-"'],
    ["a".repeat(64), "is 64 characters long"],
  ])("%j → %s", (value, fault) => {
    expect(dnsLabelFault(value)).toBe(fault);
  });

  it("says a value is a label exactly when it finds no fault", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", "z", "0", "-", "A", "_", "."), maxLength: 70 }), (value) => {
        expect(isDnsLabel(value)).toBe(dnsLabelFault(value) === undefined);
      }),
    );
  });
});
