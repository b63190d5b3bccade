import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { cidrsOverlap, podCidrCapacity } from "./cidr.ts";

describe("podCidrCapacity", () => {
  test("is 2^(node mask − prefix)", () => {
    expect(podCidrCapacity("10.244.0.0/16", 24)).toBe(256);
    expect(podCidrCapacity("10.244.0.0/16", 26)).toBe(1024);
    expect(podCidrCapacity("192.168.0.0/24", 24)).toBe(0);
    expect(podCidrCapacity("10.0.0.0/8", 24)).toBe(65_536);
    expect(podCidrCapacity("fd00:10:244::/56", 64)).toBe(256);
    expect(podCidrCapacity("fd00::/8", 120)).toBe(Number.MAX_SAFE_INTEGER);
  });

  test("doubles with every bit of node mask, for any IPv4 prefix", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 31 }), (prefix, mask) => {
        fc.pre(mask > prefix && mask < 32);
        expect(podCidrCapacity(`10.0.0.0/${prefix}`, mask + 1)).toBe(2 * podCidrCapacity(`10.0.0.0/${prefix}`, mask));
      }),
    );
  });
});

describe("cidrsOverlap", () => {
  // Containment either way and the same range overlap; side by side or disjoint do not.
  test.each([
    ["10.244.0.0/16", "10.96.0.0/12", false],
    ["10.96.0.0/16", "10.96.0.0/12", true],
    ["10.96.0.0/12", "10.100.0.0/16", true],
    ["10.0.0.0/8", "192.168.0.0/16", false],
    ["fd00::/64", "fd00::/48", true],
    ["fd00::/64", "10.0.0.0/8", false],
    ["10.42.0.0/16", "10.42.128.0/17", true],
    ["10.0.0.0/8", "10.70.0.0/16", true],
    ["10.42.0.0/16", "10.43.0.0/16", false],
    ["192.168.0.0/24", "192.168.1.0/24", false],
    ["0.0.0.0/0", "172.16.0.0/12", true],
  ])("%s and %s overlap: %s", (a, b, overlap) => {
    expect(cidrsOverlap(a, b)).toBe(overlap);
  });
});
