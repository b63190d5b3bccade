import { KubeConfig } from "@kubernetes/client-node";
import { describe, expect, test } from "vitest";
import { kubeconfigFileName, renderKubeconfig } from "./kubeconfig.ts";

const pem = (label: string) => `-----BEGIN ${label}-----\nAAAA\n-----END ${label}-----\n`;

describe("renderKubeconfig", () => {
  test("renders a self-contained kubeconfig that client-node reads back", () => {
    // Given an identity whose name needs quoting in YAML
    const text = renderKubeconfig({
      server: "https://127.0.0.1:6443",
      caPem: pem("CERTIFICATE"),
      name: "system:serviceaccount:ns: odd # name",
      certPem: pem("CERTIFICATE"),
      keyPem: pem("PRIVATE KEY"),
    });

    // When it is loaded
    const kc = new KubeConfig();
    kc.loadFromString(text);

    // Then cluster, user and context line up, with the PEMs embedded as base64
    expect(kc.getCurrentContext()).toBe("system:serviceaccount:ns: odd # name");
    expect(kc.getCurrentCluster()).toMatchObject({ name: "testenv", server: "https://127.0.0.1:6443" });
    expect(Buffer.from(kc.getCurrentCluster()?.caData ?? "", "base64").toString()).toBe(pem("CERTIFICATE"));
    expect(Buffer.from(kc.getCurrentUser()?.keyData ?? "", "base64").toString()).toBe(pem("PRIVATE KEY"));
  });
});

describe("kubeconfigFileName", () => {
  test("is stable, readable, and ignores group order and duplicates", () => {
    const a = kubeconfigFileName({ user: "alice@example.com", groups: ["b", "a"] });
    expect(a).toMatch(/^alice_example\.com-[0-9a-f]{10}\.kubeconfig$/);
    expect(kubeconfigFileName({ user: "alice@example.com", groups: ["a", "b", "a"] })).toBe(a);
  });

  test("differs for different identities, even when the readable part is the same", () => {
    const names = new Set([
      kubeconfigFileName({ user: "alice" }),
      kubeconfigFileName({ user: "alice", groups: ["devs"] }),
      kubeconfigFileName({ user: "alice", groups: ["ops"] }),
      kubeconfigFileName({ user: "alice!" }),
      kubeconfigFileName({ user: "alice?" }),
    ]);
    expect(names.size).toBe(5);
  });
});
