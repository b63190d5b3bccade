import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTransport } from "@nodekit/http";
import { loopbackServers, userErrorOf } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import {
  buildOpenApiDocument,
  CreateAgentRequestSchema,
  createNodeRingsClient,
  downloadArtifact,
  renderPeeringKubeconfig,
  StartOutboundPeeringRequestSchema,
} from "./index.ts";

const servers = loopbackServers();

describe("the contract", () => {
  test("the OpenAPI document names every route and every schema", () => {
    const document = buildOpenApiDocument({ serverUrl: "http://127.0.0.1:1" }) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { type?: string }> };
    };
    expect(Object.keys(document.paths)).toEqual([
      "/healthz",
      "/api/docs",
      "/api/v1/agents",
      "/api/v1/agents/{id}",
      "/api/v1/pins",
      "/api/v1/agents/{id}/peering/parameters",
      "/api/v1/agents/{id}/peering/outbound",
      "/api/v1/agents/{id}/peering/inbound",
      "/api/v1/agents/{id}/peering/inbound/complete",
      "/api/v1/agents/{id}/peering/teardown",
      "/api/v1/agents/{id}/peering/teardown/complete",
      "/api/v1/agents/{id}/peering",
      "/api/v1/agents/{id}/offloading",
      "/api/v1/agents/{id}/health-reports",
    ]);
    for (const schema of Object.values(document.components.schemas)) expect(schema.type).toBe("object");
    expect(Object.keys(document.components.schemas)).toContain("PinSet");
    // The reverse peering: a one-time consumer credential for NodeRings' cluster, then the agent's report
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(["InboundPeering", "CompleteInboundPeeringRequest"]),
    );
  });

  test("requests are strict; an agent name is a DNS label", () => {
    expect(CreateAgentRequestSchema.safeParse({ name: "vm-1" }).success).toBe(true);
    expect(CreateAgentRequestSchema.safeParse({ name: "vm-1", token: "x" }).success).toBe(false);
    expect(CreateAgentRequestSchema.safeParse({ name: "VM_1" }).success).toBe(false);
    expect(CreateAgentRequestSchema.safeParse({ name: "a".repeat(64) }).success).toBe(false);
    expect(
      StartOutboundPeeringRequestSchema.safeParse({
        clusterId: "c",
        liqoVersion: "v1.0.1",
        podCIDR: "10.42.0.0/16",
        serviceCIDR: "not",
      }).success,
    ).toBe(false);
  });

  test("the peering kubeconfig is a kubeconfig for liqoctl with the one-time token", () => {
    const text = renderPeeringKubeconfig({
      server: "https://peering.example.invalid:6443",
      certificateAuthorityData: "Q0E=",
      user: "liqo-peer-vm-1",
      token: "one-time",
      expiresAt: "2025-01-01T00:00:00Z",
    });
    expect(JSON.parse(text)).toEqual({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "noderings",
          cluster: { server: "https://peering.example.invalid:6443", "certificate-authority-data": "Q0E=" },
        },
      ],
      users: [{ name: "liqo-peer-vm-1", user: { token: "one-time" } }],
      contexts: [{ name: "noderings", context: { cluster: "noderings", user: "liqo-peer-vm-1" } }],
      "current-context": "noderings",
    });
  });
});

describe("the client's transport seam", () => {
  test("a transport passed in is the one used, and the token goes only in the Authorization header", async () => {
    const seen: Array<[string, string | undefined]> = [];
    const server = createServer((req, res) => {
      seen.push([`http://${req.headers.host}${req.url}`, req.headers.authorization]);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ status: "ok" }));
    });
    const { port } = new URL(await servers.listen(server));
    // The transport's lookup sends the API's host name to this loopback server: nothing leaves the machine.
    const transport = createTransport({
      lookup: (_host, options, callback) => {
        const answer = (callback as (e: null, address: unknown, family?: number) => void).bind(null, null);
        if (options.all) answer([{ address: "127.0.0.1", family: 4 }]);
        else answer("127.0.0.1", 4);
      },
    });
    const baseUrl = `http://api.example.invalid:${port}/base`;
    const client = createNodeRingsClient({ baseUrl, token: () => " tok ", transport });
    expect(await client.healthz()).toEqual({ status: "ok" });
    expect(seen).toEqual([[`http://api.example.invalid:${port}/base/healthz`, "Bearer tok"]]);
  });
});

describe("downloadArtifact", () => {
  test("a body that stalls is abandoned after the stall timeout and leaves nothing", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("half");
    });
    const base = await servers.listen(server);
    const dir = await mkdtemp(join(tmpdir(), "download-"));
    try {
      const url = `${base}/tool.tar.gz`;
      const error = await userErrorOf(
        downloadArtifact({ url, sha256: "0".repeat(64) }, join(dir, "tool.tar.gz"), { stallTimeoutMs: 200 }),
      );
      expect(error.code).toBe("DOWNLOAD_FAILED");
      expect(error.message).toBe(`the download of tool.tar.gz from ${url} stalled after 4 bytes (nothing for 200 ms)`);
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
