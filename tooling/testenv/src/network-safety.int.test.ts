import { readFile, stat } from "node:fs/promises";
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { eventually } from "@nodekit/test-utils";
import { describe, expect, onTestFinished, test } from "vitest";
import { apiRequest } from "./client.ts";
import { isolationMarker, ownInterface } from "./loopback-only.ts";
import { type SocketWatch, watchSockets } from "./sockets.ts";
import { useControlPlane } from "./vitest.ts";

// The control plane has no controller-manager, so a Service never gets endpoints. Started with
// --enable-aggregator-routing=true, kube-apiserver reaches a Service-backed admission or
// conversion webhook through those endpoints and so fails at once ("no endpoints available");
// without it, it dials the Service's ClusterIP (10.0.0.0/24), which is off loopback: on the
// project machine something there even answered with TLS. Each test proves both halves: the
// refusal is the local one, and while the request ran no socket of kube-apiserver's had a peer
// off loopback, no socket anywhere reached the ClusterIP (/proc, Linux), and kube-apiserver
// logged no dial off loopback. (An APIService is refused for want of EndpointSlices before any
// dial in Kubernetes 1.34, flag or not; its test guards that.) The control plane is shared by the
// whole run: each test removes what it registers, whatever the outcome.

type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: string; message: string }>;

async function adminApi(): Promise<{ api: Api; pid: number; logFile: string }> {
  const plane = await useControlPlane();
  const pki = plane.info.pkiDir;
  const [ca, cert, key] = await Promise.all(
    ["ca.crt", "admin.crt", "admin.key"].map((name) => readFile(join(pki, name), "utf8")),
  );
  const tls = { ca: ca ?? "", cert: cert ?? "", key: key ?? "" };
  const api: Api = async (method, path, body) => {
    const response = await apiRequest(plane.server, tls, method, path, body, 60_000);
    let message = "";
    try {
      message = String((JSON.parse(response.body) as { message?: unknown }).message ?? "");
    } catch {
      message = response.body;
    }
    return { ...response, message };
  };
  return { api, pid: plane.info.pids.kubeApiserver, logFile: join(plane.info.logDir, "kube-apiserver.log") };
}

/**
 * Watches kube-apiserver around `during`: its sockets, any socket to `peers` (the Services'
 * ClusterIPs), and its log, for a dial to anything off loopback. The sockets are read from /proc
 * (Linux); the log also catches a dial that failed at once (no socket is left then), as it does
 * in a network namespace without routes.
 */
async function offLoopbackDuring<T>(
  logFile: string,
  pid: number,
  peers: string[],
  during: () => Promise<T>,
): Promise<{ result: T; seen: string[] }> {
  const logBefore = (await stat(logFile)).size;
  const watch: SocketWatch | undefined = process.platform === "linux" ? await watchSockets(pid, { peers }) : undefined;
  const result = await during().finally(() => watch?.stop());
  const sockets = (await watch?.stop()) ?? [];
  if (watch) expect(watch.samples).toBeGreaterThan(0);
  const logged = (await readFile(logFile)).subarray(logBefore).toString("utf8");
  const dials = [...logged.matchAll(/dial (?:tcp|udp) (\[[0-9a-f:.]+\]|[0-9.]+):\d+/gi)]
    .filter(([, host = ""]) => !/^(127\.|\[::1\])/.test(host))
    .map(([dial]) => `log: ${dial}`);
  return {
    result,
    seen: [
      ...sockets.map((s) => `socket: ${s.protocol} ${s.local} -> ${s.remote} (state ${s.state})`),
      ...new Set(dials),
    ],
  };
}

/** Creates a ClusterIP Service with no endpoints; returns its ClusterIP. */
async function serviceWithoutEndpoints(api: Api, namespace: string, name: string): Promise<string> {
  const created = await api("POST", `/api/v1/namespaces/${namespace}/services`, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name },
    spec: { ports: [{ port: 443, targetPort: 8443 }] },
  });
  expect(created.status).toBe(201);
  const clusterIP = String((JSON.parse(created.body) as { spec: { clusterIP: string } }).spec.clusterIP);
  expect(clusterIP).toMatch(/^10\.0\.0\./);
  return clusterIP;
}

/** The refusal says the Service was resolved locally; it names no dial and not the ClusterIP. */
function expectLocalRefusal(message: string, service: string, clusterIP: string): void {
  expect(message).toContain(`no endpoints available for service "${service}"`);
  expect(message).not.toContain(clusterIP);
  expect(message).not.toMatch(/dial tcp|i\/o timeout|network is unreachable|connection refused/);
}

describe("Service-backed webhooks and APIServices: kube-apiserver dials nothing off loopback", () => {
  test("a validating admission webhook that names a Service", async () => {
    // Given a Service without endpoints and a webhook for ConfigMaps in one namespace that calls it
    const plane = await useControlPlane();
    const { api, pid, logFile } = await adminApi();
    const namespace = await plane.createNamespace("netsafety-webhook");
    const clusterIP = await serviceWithoutEndpoints(api, namespace, "guard");
    const name = `nodekit-netsafety-${namespace}`;
    onTestFinished(async () => {
      const removed = await api(
        "DELETE",
        `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`,
      );
      expect([200, 404]).toContain(removed.status);
    });
    const registered = await api("POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name },
      webhooks: [
        {
          name: "guard.netsafety.nodekit.dev",
          clientConfig: { service: { namespace, name: "guard", port: 443, path: "/validate" } },
          rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] }],
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
          failurePolicy: "Fail",
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
          timeoutSeconds: 5,
        },
      ],
    });
    expect(registered.status).toBe(201);

    // When a ConfigMap is created there (until the webhook is in force: the apiserver picks it up from a watch)
    const { result: refusal, seen } = await offLoopbackDuring(logFile, pid, [clusterIP], () =>
      eventually(async () => {
        const attempt = await api("POST", `/api/v1/namespaces/${namespace}/configmaps`, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { generateName: "probe-" },
        });
        if (attempt.status === 201) throw new Error("the webhook is not in force yet");
        return attempt;
      }, 30_000),
    );

    // Then the webhook call fails inside kube-apiserver, and no socket of its had a peer off loopback
    expect(seen).toEqual([]);
    expect(refusal.message).toContain('failed calling webhook "guard.netsafety.nodekit.dev"');
    expectLocalRefusal(refusal.message, "guard", clusterIP);
  });

  test("a CRD whose conversion webhook names a Service", async () => {
    // Given a CRD with two versions, converted by a webhook behind a Service without endpoints
    const plane = await useControlPlane();
    const { api, pid, logFile } = await adminApi();
    const namespace = await plane.createNamespace("netsafety-conversion");
    const clusterIP = await serviceWithoutEndpoints(api, namespace, "convert");
    const group = `${namespace}.netsafety.nodekit.dev`;
    const crd = `gadgets.${group}`;
    const schema = { openAPIV3Schema: { type: "object", properties: { spec: { type: "object" } } } };
    onTestFinished(async () => {
      // The object first, at its storage version (no conversion), then the CRD.
      await api("DELETE", `/apis/${group}/v1/namespaces/${namespace}/gadgets/g1`);
      const removed = await api("DELETE", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`);
      expect([200, 404]).toContain(removed.status);
    });
    const registered = await api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: crd },
      spec: {
        group,
        scope: "Namespaced",
        names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
        versions: [
          { name: "v1", served: true, storage: true, schema },
          { name: "v2", served: true, storage: false, schema },
        ],
        conversion: {
          strategy: "Webhook",
          webhook: {
            clientConfig: { service: { namespace, name: "convert", port: 443, path: "/convert" } },
            conversionReviewVersions: ["v1"],
          },
        },
      },
    });
    expect(registered.status).toBe(201);
    await eventually(async () => {
      const created = await api("POST", `/apis/${group}/v1/namespaces/${namespace}/gadgets`, {
        apiVersion: `${group}/v1`,
        kind: "Gadget",
        metadata: { name: "g1" },
        spec: {},
      });
      if (created.status !== 201) throw new Error(`HTTP ${created.status}: ${created.message}`);
    });

    // When it is read at the other version, which takes a conversion
    const { result: refusal, seen } = await offLoopbackDuring(logFile, pid, [clusterIP], () =>
      api("GET", `/apis/${group}/v2/namespaces/${namespace}/gadgets/g1`),
    );

    // Then the conversion fails inside kube-apiserver, and nothing was dialled off loopback
    expect(refusal.status).toBeGreaterThanOrEqual(500);
    expect(seen).toEqual([]);
    expect(refusal.message).toContain("conversion webhook");
    expectLocalRefusal(refusal.message, "convert", clusterIP);
  });

  test("an APIService backed by a Service", async () => {
    // Given an APIService whose backend is a Service without endpoints
    const plane = await useControlPlane();
    const { api, pid, logFile } = await adminApi();
    const namespace = await plane.createNamespace("netsafety-apiservice");
    const clusterIP = await serviceWithoutEndpoints(api, namespace, "metrics");
    const group = `${namespace}.netsafety.nodekit.dev`;
    const name = `v1alpha1.${group}`;
    onTestFinished(async () => {
      const removed = await api("DELETE", `/apis/apiregistration.k8s.io/v1/apiservices/${name}`);
      expect([200, 404]).toContain(removed.status);
    });
    const registered = await api("POST", "/apis/apiregistration.k8s.io/v1/apiservices", {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name },
      spec: {
        group,
        version: "v1alpha1",
        service: { namespace, name: "metrics", port: 443 },
        insecureSkipTLSVerify: true,
        groupPriorityMinimum: 1000,
        versionPriority: 15,
      },
    });
    expect(registered.status).toBe(201);

    // When a request for its group arrives (and the availability check runs), watched from the start
    const { result, seen } = await offLoopbackDuring(logFile, pid, [clusterIP], async () => {
      const condition = await eventually(async () => {
        const read = await api("GET", `/apis/apiregistration.k8s.io/v1/apiservices/${name}`);
        const available = (
          JSON.parse(read.body) as { status?: { conditions?: { type: string; status: string; message?: string }[] } }
        ).status?.conditions?.find((c) => c.type === "Available");
        if (!available) throw new Error("the APIService has not been checked yet");
        return available;
      });
      const proxied = await eventually(async () => {
        const response = await api("GET", `/apis/${group}/v1alpha1`);
        if (response.status === 404) throw new Error("the APIService is not routed yet");
        return response;
      });
      return { condition, proxied };
    });

    // Then it is unavailable for want of endpoints, the request is answered 503 locally, and nothing was dialled
    expect(result.condition.status).toBe("False");
    expect(result.condition.message ?? "").toMatch(/endpoints/i);
    expect(result.proxied.status).toBe(503);
    expect(seen).toEqual([]);
  });

  test.runIf(process.env[isolationMarker.name] === isolationMarker.value)(
    "under the loopback-only wrapper, no address off this network namespace can be reached",
    async () => {
      // Given this run's namespace: lo, and at most its own address on a device nothing reads
      const addresses = Object.values(networkInterfaces())
        .flat()
        .filter((address) => address !== undefined && !address.internal)
        .map((address) => address?.address);
      expect(addresses.every((address) => address === ownInterface.address)).toBe(true);

      // When anything off it is dialled (a ClusterIP, a documentation address, that address's neighbour)
      const dial = (host: string) =>
        new Promise<string>((resolvePromise) => {
          const socket = connect({ host, port: 443, timeout: 5_000 });
          const settle = (outcome: string) => {
            socket.destroy();
            resolvePromise(outcome);
          };
          socket.once("connect", () => settle("connected"));
          socket.once("timeout", () => settle("timed out"));
          socket.once("error", (error: NodeJS.ErrnoException) => settle(error.code ?? error.message));
        });
      const outcomes = await Promise.all(["10.0.0.1", "203.0.113.1", "198.51.100.2"].map(dial));

      // Then each fails at once: there is no route
      expect(outcomes).toEqual(["ENETUNREACH", "ENETUNREACH", "ENETUNREACH"]);
    },
  );
});
