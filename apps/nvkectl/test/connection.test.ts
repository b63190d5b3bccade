import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { join } from "node:path";
import { loopbackServers } from "@nodekit/test-utils";
import { createCertificateAuthority, issueServingCertificate } from "@nodekit/testenv/pki";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHome, cliHome } from "./helpers.ts";

// How nvkectl talks to the controller: one deadline per request (--request-timeout),
// --timeout bounding a whole --wait, a limit on an answer's size, and an https controller
// behind a private CA (--certificate-authority). Fault servers on loopback; the token cache
// says "auth off", so no site cluster is needed.

let home: CliHome;
const { listen } = loopbackServers();
let kubeconfig: string;

beforeAll(async () => {
  home = await cliHome("nvkectl-connection-");
  kubeconfig = join(home.path, "site.kubeconfig");
  await writeFile(kubeconfig, "apiVersion: v1\nkind: Config\n");
});
afterAll(async () => {
  await home.cleanup();
});

/** A site named `name` at `url`, whose token cache says auth is off (as a first run would have found). */
async function site(name: string, url: string): Promise<void> {
  const set = await home.nvkectl(["config", "set-site", name, "--url", url, "--kubeconfig", kubeconfig]);
  expect(set.exitCode, set.stderr).toBe(0);
  const dir = join(home.tokenCacheDir, name);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const now = Date.now();
  const entry = {
    version: 1,
    site: name,
    source: `file:${kubeconfig}`,
    serviceAccount: { namespace: "nke-clients", name: "nke-client" },
    state: { auth: "off", checkedAt: new Date(now).toISOString(), expiresAt: new Date(now + 3_600_000).toISOString() },
  };
  await writeFile(join(dir, "nke-clients_nke-client.json"), JSON.stringify(entry), { mode: 0o600 });
}

const serve = (handler: (req: IncomingMessage, res: ServerResponse) => void) => listen(createServer(handler));
const json = (res: ServerResponse, body: unknown) =>
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));

describe("deadlines", () => {
  it("--request-timeout bounds one request, its body included: headers then silence is exit 6", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"items":[');
    });
    await site("stall", url);
    const result = await home.nvkectl(["get", "clusters", "--site", "stall", "--request-timeout", "1s"], {
      timeoutMs: 20_000,
    });
    expect(result.exitCode, result.stderr).toBe(6);
    expect(result.stderr).toContain(
      `error: the NVKE controller at ${url} did not answer GET /api/v1/clusters within 1 s`,
    );
    expect(result.stderr).toContain(
      "next: give each request more time with --request-timeout (now 1s), e.g. --request-timeout 2m",
    );
  });

  it("--timeout bounds a whole --wait, a request that never finishes included", async () => {
    const now = new Date().toISOString();
    const tenant = {
      id: "6f1c2a4e-8b3d-4c5e-9f7a-1b2c3d4e5f60",
      name: "tenant",
      provider: "capd",
      clusterReleaseID: "0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70",
      clusterReleaseName: "r1",
      kubernetesVersion: "v1.31.4",
      controlPlaneConfig: { replicas: 1, nodeNamePrefix: "tenant-cp" },
      network: { podCIDR: "10.244.0.0/16", serviceCIDR: "10.96.0.0/12", nodeCIDRMaskSize: 24 },
      infra: { machineTemplate: { apiVersion: "x/v1", kind: "DockerMachineTemplate", spec: {} } },
      labels: {},
      status: { phase: "Provisioning", controlPlaneReady: false },
      createdAt: now,
      updatedAt: now,
    };
    const url = await serve((req, res) => {
      // The lookup by name answers; the polls by ID send headers and then nothing.
      if (req.url?.includes("name=")) json(res, { items: [tenant] });
      else res.writeHead(200, { "content-type": "application/json" }).write("{");
    });
    await site("slow", url);
    const result = await home.nvkectl(
      ["get", "clusters", "tenant", "--wait", "--timeout", "2s", "--poll-interval", "100ms", "--site", "slow"],
      { timeoutMs: 25_000 },
    );
    expect(result.exitCode, result.stderr).toBe(6);
    expect(result.stderr).toContain("error: gave up after --timeout 2s: the NVKE controller did not answer in time");
  });
});

describe("limits", () => {
  it("an answer larger than the limit is refused, naming the limit and how to raise it", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(`{"items":[${'"x",'.repeat(600_000)}"x"]}`);
    });
    await site("big", url);
    const result = await home.nvkectl(["get", "clusters", "--site", "big"], {
      env: { NVKECTL_MAX_RESPONSE_MB: "1" },
    });
    expect(result.exitCode, result.stderr).toBe(6);
    expect(result.stderr).toContain(`error: the answer to GET ${url}/api/v1/clusters is larger than 1 MiB`);
    expect(result.stderr).toContain("next: raise the limit with NVKECTL_MAX_RESPONSE_MB=<MiB> (now 1)");
    const bad = await home.nvkectl(["get", "clusters", "--site", "big"], { env: { NVKECTL_MAX_RESPONSE_MB: "lots" } });
    expect(bad.exitCode).toBe(2);
  });
});

describe("an https:// controller behind a private certificate authority", () => {
  it("is trusted with --certificate-authority, and without it the error says to name the CA", async () => {
    const ca = await createCertificateAuthority();
    const serving = await issueServingCertificate(ca);
    const url = await listen(
      createHttpsServer({ cert: serving.certPem, key: serving.keyPem }, (_req, res) =>
        json(res, { items: [] }),
      ) as unknown as Server,
      "https",
    );
    await site("tls", url);
    const caFile = join(home.path, "ca.pem");
    await writeFile(caFile, ca.certPem);

    const trusted = await home.nvkectl([
      "--certificate-authority",
      caFile,
      "get",
      "clusters",
      "--site",
      "tls",
      "-o",
      "json",
    ]);
    expect(trusted.exitCode, trusted.stderr).toBe(0);
    expect(JSON.parse(trusted.stdout).items).toEqual([]);

    const untrusted = await home.nvkectl(["get", "clusters", "--site", "tls"]);
    expect(untrusted.exitCode).toBe(6);
    expect(untrusted.stderr).toContain(
      `error: the NVKE controller at ${url} presented a certificate that is not trusted`,
    );
    expect(untrusted.stderr).toContain("--certificate-authority FILE");

    const missing = await home.nvkectl(["get", "clusters", "--site", "tls", "--certificate-authority", "nope.pem"]);
    expect(missing.exitCode).toBe(4);
    await writeFile(join(home.path, "not.pem"), "hello");
    const notPem = await home.nvkectl(["get", "clusters", "--site", "tls", "--certificate-authority", "not.pem"]);
    expect(notPem.exitCode).toBe(3);
  });
});
