import { expect, test } from "vitest";
import { cidrsOverlap } from "./cidr.ts";

test("CIDRs overlap when one contains the other or they are the same, not when they are side by side", () => {
  expect(cidrsOverlap("10.42.0.0/16", "10.42.128.0/17")).toBe(true);
  expect(cidrsOverlap("10.0.0.0/8", "10.70.0.0/16")).toBe(true);
  expect(cidrsOverlap("10.42.0.0/16", "10.43.0.0/16")).toBe(false);
  expect(cidrsOverlap("192.168.0.0/24", "192.168.1.0/24")).toBe(false);
  expect(cidrsOverlap("0.0.0.0/0", "172.16.0.0/12")).toBe(true);
});
