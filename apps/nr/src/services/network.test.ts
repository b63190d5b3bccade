import { userErrorOf } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { cidrsOverlap, networkPlan } from "./network.ts";

describe("the network plan", () => {
  it("defaults to k3s's own CIDRs and writes a CIDR as its network", () => {
    expect(networkPlan({})).toEqual({ podCidr: "10.42.0.0/16", serviceCidr: "10.43.0.0/16" });
    expect(networkPlan({ podCidr: "10.50.3.4/16", serviceCidr: "10.51.0.0/20" })).toEqual({
      podCidr: "10.50.0.0/16",
      serviceCidr: "10.51.0.0/20",
    });
  });

  it("refuses a CIDR that is not one, and pod and service ranges that overlap", async () => {
    const bad = await userErrorOf(Promise.resolve().then(() => networkPlan({ podCidr: "10.42.0.0" })));
    expect(bad.code).toBe("NETWORK_PLAN_INVALID");
    expect(bad.exitCode).toBe(2);
    const overlap = await userErrorOf(Promise.resolve().then(() => networkPlan({ podCidr: "10.0.0.0/8" })));
    expect(overlap.message).toBe("the pod CIDR 10.0.0.0/8 overlaps the service CIDR 10.43.0.0/16");
  });

  it("knows when two ranges share addresses", () => {
    expect(cidrsOverlap("10.42.0.0/16", "10.42.128.0/17")).toBe(true);
    expect(cidrsOverlap("10.42.0.0/16", "10.43.0.0/16")).toBe(false);
  });
});
