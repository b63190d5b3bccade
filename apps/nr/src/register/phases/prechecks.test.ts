import type { Gateway } from "@nodekit/noderings-api";
import { describe, expect, it } from "vitest";
import { gatewayPorts, isPrecheckId } from "./prechecks.ts";

const gateway = (serverLocation: Gateway["serverLocation"], serviceType: Gateway["serviceType"], port = 51840) => ({
  serverLocation,
  serviceType,
  port,
  mtu: 1340,
});

describe("the Liqo gateway's port on this machine (issue 23, item 8)", () => {
  it("none while NodeRings runs the gateway server of both peerings: the agent only dials out", () => {
    expect(
      gatewayPorts({
        gateway: gateway("Provider", "LoadBalancer"),
        inbound: { gateway: gateway("Consumer", "LoadBalancer") },
      }),
    ).toEqual([]);
  });

  it("the server's port when it runs here behind a LoadBalancer (k3s's ServiceLB takes it on the node), once per port", () => {
    // Outbound: the agent is the consumer; inbound: the agent is the provider.
    expect(
      gatewayPorts({
        gateway: gateway("Consumer", "LoadBalancer"),
        inbound: { gateway: gateway("Provider", "LoadBalancer") },
      }),
    ).toEqual([
      {
        port: 51840,
        protocol: "udp",
        for: "Liqo's WireGuard gateway server (the outbound and inbound peering's, a LoadBalancer on this node)",
      },
    ]);
    expect(
      gatewayPorts({
        gateway: gateway("Consumer", "LoadBalancer", 51841),
        inbound: { gateway: gateway("Consumer", "LoadBalancer") },
      }).map((p) => p.port),
    ).toEqual([51841]);
  });

  it("none for a NodePort server: Kubernetes picks its node port, nothing to check before", () => {
    expect(
      gatewayPorts({ gateway: gateway("Consumer", "NodePort"), inbound: { gateway: gateway("Provider", "NodePort") } }),
    ).toEqual([]);
  });
});

describe("--ignore-precheck's names", () => {
  it("are the checks' own ids, any port's included", () => {
    for (const id of [
      "os",
      "kernel",
      "arch",
      "user",
      "init",
      "kubectl",
      "memory",
      "disk",
      "pod-cidr",
      "port-179-tcp",
      "port-51840-udp",
    ]) {
      expect(isPrecheckId(id), id).toBe(true);
    }
    for (const id of ["all", "systemd", "port-179", "port-179-sctp", ""]) expect(isPrecheckId(id), id).toBe(false);
  });
});
