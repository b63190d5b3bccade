import { describe, expect, test } from "vitest";
import { classifyApiError, classifyToolStderr } from "./classify.ts";
import { kubeError } from "./error.ts";

describe("classifyToolStderr (what kubectl, helm and clusterctl say)", () => {
  test.each([
    ['Error from server (NotFound): secrets "x-kubeconfig" not found', "not-found", "NotFound"],
    [
      "Error from server (NotFound): the server could not find the requested resource",
      "resource-type-unknown",
      "NotFound",
    ],
    [
      'Error from server (Forbidden): secrets "x" is forbidden: User "carol" cannot get resource "secrets" in API group "" in the namespace "nvke-clusters"',
      "forbidden",
      "Forbidden",
    ],
    ['Error from server (AlreadyExists): namespaces "a" already exists', "rejected", "AlreadyExists"],
    [
      "Error from server (ServiceUnavailable): the server is currently unable to handle the request",
      "unavailable",
      "ServiceUnavailable",
    ],
    [
      "Error from server (InternalError): Internal error occurred: etcdserver: request timed out",
      "unavailable",
      "InternalError",
    ],
  ])("%s → %s", (stderr, kind, reason) => {
    expect(classifyToolStderr(stderr)).toMatchObject({ kind, reason });
  });

  test("a missing resource type is not a missing object", () => {
    expect(classifyToolStderr('error: the server doesn\'t have a resource type "nicoidentities"').kind).toBe(
      "resource-type-unknown",
    );
  });

  test.each([
    'error: context "elsewhere" does not exist',
    'error: no context exists with the name: "elsewhere"',
    'error: error loading config file "/tmp/k": yaml: line 3: mapping values are not allowed in this context',
    "The connection to the server localhost:8080 was refused - did you specify the right host or port?",
    'error: cluster "gone" does not exist',
    "error: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable",
  ])("a kubeconfig that cannot be used is config-invalid, never 'not found': %s", (stderr) => {
    expect(classifyToolStderr(stderr).kind).toBe("config-invalid");
  });

  test("names a missing exec credential plugin", () => {
    const stderr = [
      'E1201 10:00:00.000000   12345 memcache.go:265] "Unhandled Error" err="couldn\'t get current server API group list: Get \\"https://127.0.0.1:6443/api?timeout=32s\\": getting credentials: exec: executable kubelogin not found"',
      "",
      "It looks like you are trying to use a client-go credential plugin that is not installed.",
      "",
      "To learn more about this feature, consult the documentation available at:",
      "      https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins",
      "Unable to connect to the server: getting credentials: exec: executable kubelogin not found",
    ].join("\n");
    expect(classifyToolStderr(stderr)).toMatchObject({ kind: "credential-plugin-missing", plugin: "kubelogin" });
  });

  test.each([
    ["error: You must be logged in to the server (Unauthorized)", "unauthorized"],
    ["Unable to connect to the server: dial tcp 127.0.0.1:1: connect: connection refused", "unreachable"],
    ["Unable to connect to the server: dial tcp: lookup nowhere.invalid: no such host", "unreachable"],
    [
      "Unable to connect to the server: net/http: request canceled (Client.Timeout exceeded while awaiting headers)",
      "unreachable",
    ],
    [
      "Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority",
      "unreachable",
    ],
    ["Error: INSTALLATION FAILED: template: x/templates/a.yaml:3:4: executing ...", "failed"],
  ])("%s → %s", (stderr, kind) => {
    expect(classifyToolStderr(stderr).kind).toBe(kind);
  });

  test("TLS failures say so", () => {
    expect(
      classifyToolStderr("Unable to connect to the server: x509: certificate signed by unknown authority").tls,
    ).toBe(true);
  });

  test.each([
    // helm 3's OCI pulls go through oras-go: its credential store has nothing for the registry…
    'Error: failed to perform "FetchReference" on source: GET "http://127.0.0.1:40123/v2/nvke/charts/nico/manifests/sha256:0f3c": basic credential not found',
    // …or the registry (or its token endpoint) answered 401/403 to the credentials given.
    'Error: failed to perform "FetchReference" on source: GET "https://127.0.0.1:40123/v2/nvke/charts/nico/manifests/1.2.0": response status code 401: unauthorized: authentication required: [map[Action:pull Class: Name:nvke/charts/nico Type:repository]]',
    'Error: failed to perform "FetchReference" on source: GET "https://127.0.0.1:40123/v2/x/manifests/1": response status code 403: denied: requested access to the resource is denied',
    "Error: failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized",
  ])("an OCI registry's refusal in helm's words is registry-unauthorized: %s", (stderr) => {
    expect(classifyToolStderr(stderr)).toMatchObject({ kind: "registry-unauthorized", message: stderr });
  });

  test("a registry's refusal is KUBE_REGISTRY_UNAUTHORIZED (exit 7), naming the call and helm's words", () => {
    const said =
      'Error: failed to perform "FetchReference" on source: GET "http://127.0.0.1:40123/v2/c/manifests/1": basic credential not found';
    const error = kubeError(classifyToolStderr(said), { doing: "helm upgrade --install nico", kubeconfig: "/k" });
    expect(error.code).toBe("KUBE_REGISTRY_UNAUTHORIZED");
    expect(error.exitCode).toBe(7);
    expect(error.message).toBe(`helm upgrade --install nico failed: the registry refused it: ${said}`);
    expect(error.next.join("\n")).toContain("registry config");
  });

  test("the API server's own 401 through helm stays unauthorized, not the registry's", () => {
    expect(classifyToolStderr("Error: Kubernetes cluster unreachable: Unauthorized").kind).toBe("unauthorized");
    expect(
      classifyToolStderr("Error from server (Unauthorized): the server has asked for the client to provide credentials")
        .kind,
    ).toBe("unauthorized");
  });

  test("klog lines are not the message; the last line for people is", () => {
    const stderr =
      'E1130 23:04:10.055016   4242 memcache.go:265] "Unhandled Error"\nerror: You must be logged in to the server (Unauthorized)\n';
    expect(classifyToolStderr(stderr).message).toBe("error: You must be logged in to the server (Unauthorized)");
  });
});

describe("classifyApiError (what @kubernetes/client-node throws)", () => {
  test("reads the API server's Status from an ApiException", () => {
    const body = JSON.stringify({
      kind: "Status",
      status: "Failure",
      reason: "Forbidden",
      code: 403,
      message: 'configmaps "nvke-auth-config" is forbidden: User "carol" cannot get resource "configmaps"',
    });
    expect(classifyApiError({ code: 403, body, headers: {} })).toEqual({
      kind: "forbidden",
      status: 403,
      reason: "Forbidden",
      message: 'configmaps "nvke-auth-config" is forbidden: User "carol" cannot get resource "configmaps"',
    });
  });

  test.each([
    [401, "unauthorized"],
    [404, "not-found"],
    [409, "rejected"],
    [422, "rejected"],
    [429, "unavailable"],
    [503, "unavailable"],
  ])("HTTP %d → %s", (code, kind) => {
    expect(classifyApiError({ code, body: "" }).kind).toBe(kind);
  });

  test("a 404 of a list or discovery call is an unknown resource type", () => {
    expect(classifyApiError({ code: 404, body: "" }, { object: false }).kind).toBe("resource-type-unknown");
  });

  test("a body that is not a Status is quoted as the message, bounded", () => {
    expect(classifyApiError({ code: 502, body: `<html>${"x".repeat(1000)}</html>` }).message).toHaveLength(500);
    expect(classifyApiError({ code: 500, body: "" }).message).toBe("HTTP 500");
  });

  test("finds the socket error under undici's 'fetch failed'", () => {
    const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    expect(classifyApiError(new TypeError("fetch failed", { cause }))).toMatchObject({
      kind: "unreachable",
      message: "connect ECONNREFUSED 127.0.0.1:1 (ECONNREFUSED)",
      tls: false,
    });
  });

  test("a TLS code is unreachable with tls set", () => {
    const cause = Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
    expect(classifyApiError(new TypeError("fetch failed", { cause }))).toMatchObject({
      kind: "unreachable",
      tls: true,
    });
  });

  test("a timeout is unreachable: no answer in time", () => {
    const error = Object.assign(new Error("The operation was aborted due to timeout"), { name: "TimeoutError" });
    expect(classifyApiError(error)).toEqual({ kind: "unreachable", message: "no answer in time" });
  });
});

describe("KUBE_TOOLS", () => {
  test("asks clusterctl its version with the version check off (it would ask GitHub first)", async () => {
    const { createRecordingRunner } = await import("@nodekit/process");
    const { KUBE_TOOLS, probeTool } = await import("./index.ts");
    const runner = createRecordingRunner({ respond: () => ({ exitCode: 0, stdout: "v1.11.7\n", stderr: "" }) });
    expect(await probeTool(runner, KUBE_TOOLS.clusterctl)).toEqual({
      command: "clusterctl",
      found: true,
      version: "v1.11.7",
    });
    expect(runner.calls[0]?.call.env).toEqual({ CLUSTERCTL_DISABLE_VERSIONCHECK: "true" });
  });
});
