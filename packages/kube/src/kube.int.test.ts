import { chmod, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { ExitCode } from "@nodekit/errors";
import { createExecaRunner } from "@nodekit/process";
import { tempDir, tokenKubeconfig, userErrorOf } from "@nodekit/test-utils";
import type { ControlPlaneClient } from "@nodekit/testenv";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { classifyApiError, connect, kubectlCall, runKube, whereOf } from "./index.ts";

// Each class of failure, produced for real: the machine's kubectl against the test tier's
// kube-apiserver, and @kubernetes/client-node for the library path.

let plane: ControlPlaneClient;
let dir: string;
let cleanup: () => Promise<void>;
const runner = createExecaRunner();
const where = (kubeconfig: string) => ({ doing: "reading a Secret", kubeconfig, cluster: "the site cluster" });
const getSecret = (kubeconfig: string) =>
  kubectlCall({ kubeconfig }, ["get", "secrets", "absent", "--namespace=default"]);

beforeAll(async () => {
  plane = await useControlPlane();
  ({ path: dir, cleanup } = await tempDir("kube-int-"));
});
afterAll(() => cleanup());

/** The admin kubeconfig with its text changed by `edit`, written to a new file. */
async function variant(name: string, edit: (text: string) => string): Promise<string> {
  const path = join(dir, `${name}.kubeconfig`);
  await writeFile(path, edit(await readFile(plane.adminKubeconfigPath, "utf8")), { mode: 0o600 });
  return path;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  return typeof address === "object" && address ? address.port : 0;
}

describe("kubectl's answers, classified", () => {
  test("a missing object is an answer, not an error", async () => {
    const answer = await runKube(runner, getSecret(plane.adminKubeconfigPath), where(plane.adminKubeconfigPath));
    expect(answer).toMatchObject({ found: false, failure: { kind: "not-found", reason: "NotFound" } });
  });

  test("a resource type the server does not have is its own answer", async () => {
    const call = kubectlCall({ kubeconfig: plane.adminKubeconfigPath }, ["get", "nicoidentities", "--all-namespaces"]);
    const answer = await runKube(runner, call, where(plane.adminKubeconfigPath));
    expect(answer).toMatchObject({ found: false, failure: { kind: "resource-type-unknown" } });
  });

  test("a current context the kubeconfig lacks is KUBECONFIG_INVALID (exit 3), not 'not found'", async () => {
    const path = await variant("wrong-context", (text) =>
      text.replace(/current-context: .*/, "current-context: elsewhere"),
    );
    const error = await userErrorOf(runKube(runner, getSecret(path), where(path)));
    expect(error).toMatchObject({ code: "KUBECONFIG_INVALID", exitCode: ExitCode.InvalidInput });
    expect(error.message).toContain(path);
  });

  test("a kubeconfig that does not parse is KUBECONFIG_INVALID", async () => {
    const path = await variant("broken", (text) => `${text}\n  : [unclosed\n`);
    const error = await userErrorOf(runKube(runner, getSecret(path), where(path)));
    expect(error).toMatchObject({ code: "KUBECONFIG_INVALID", exitCode: ExitCode.InvalidInput });
  });

  test("a missing exec credential plugin is named, not 'cannot reach'", async () => {
    const path = join(dir, "exec.kubeconfig");
    await writeFile(path, execKubeconfig(plane, "nodekit-no-such-plugin"));
    const error = await userErrorOf(runKube(runner, getSecret(path), where(path)));
    expect(error).toMatchObject({ code: "KUBE_CREDENTIAL_PLUGIN_MISSING", exitCode: ExitCode.Precondition });
    expect(error.message).toContain("nodekit-no-such-plugin");
  });

  test("an identity without the grant is KUBE_FORBIDDEN", async () => {
    const path = await plane.kubeconfigFor({ user: "kube-int-nobody", groups: [] });
    const error = await userErrorOf(runKube(runner, getSecret(path), where(path)));
    expect(error).toMatchObject({ code: "KUBE_FORBIDDEN", exitCode: ExitCode.Unauthorized });
    expect(error.message).toContain('User "kube-int-nobody"');
  });

  test("credentials the server does not accept are KUBE_UNAUTHORIZED", async () => {
    const path = join(dir, "bad-token.kubeconfig");
    await writeFile(path, tokenKubeconfig({ server: plane.server, caPem: plane.caPem, token: "not-a-valid-token" }));
    const error = await userErrorOf(runKube(runner, getSecret(path), where(path)));
    expect(error).toMatchObject({ code: "KUBE_UNAUTHORIZED", exitCode: ExitCode.Unauthorized });
    expect(error.message).toBe(`the site cluster did not accept the credentials in kubeconfig ${path}`);
  });

  test("a server nobody listens on is KUBE_UNREACHABLE", async () => {
    const path = join(dir, "closed.kubeconfig");
    await writeFile(
      path,
      tokenKubeconfig({ server: `https://127.0.0.1:${await closedPort()}`, caPem: plane.caPem, token: "x" }),
    );
    const error = await userErrorOf(runKube(runner, getSecret(path), where(path)));
    expect(error).toMatchObject({ code: "KUBE_UNREACHABLE", exitCode: ExitCode.Unreachable });
  });

  test("kubectl missing from PATH is KUBE_TOOL_MISSING", async () => {
    const call = { ...getSecret(plane.adminKubeconfigPath), command: "kubectl-nodekit-absent" };
    const error = await userErrorOf(runKube(runner, call, where(plane.adminKubeconfigPath)));
    expect(error).toMatchObject({ code: "KUBE_TOOL_MISSING", exitCode: ExitCode.Precondition });
  });
});

describe("the client library's answers, classified the same way", () => {
  test("a missing exec credential plugin", async () => {
    const path = join(dir, "exec-client.kubeconfig");
    await writeFile(path, execKubeconfig(plane, "nodekit-no-such-plugin"));
    const client = await connect(path, { requestTimeoutMs: 10_000 });
    const failure = await client.core
      .readNamespacedSecret({ name: "absent", namespace: "default" }, client.requestOptions)
      .then(
        () => undefined,
        (error: unknown) => classifyApiError(error),
      );
    expect(failure).toMatchObject({ kind: "credential-plugin-missing" });
    expect(whereOf(client, "x").kubeconfig).toBe(path);
  });

  test("a missing object is not-found and a denial is forbidden", async () => {
    const admin = await connect(plane.adminKubeconfigPath, { requestTimeoutMs: 10_000 });
    const missing = await admin.core
      .readNamespacedSecret({ name: "absent", namespace: "default" }, admin.requestOptions)
      .then(
        () => undefined,
        (error: unknown) => classifyApiError(error),
      );
    expect(missing).toMatchObject({ kind: "not-found", status: 404, reason: "NotFound" });
    const nobody = await connect(await plane.kubeconfigFor({ user: "kube-int-nobody", groups: [] }), {
      requestTimeoutMs: 10_000,
    });
    const denied = await nobody.core
      .readNamespacedSecret({ name: "absent", namespace: "default" }, nobody.requestOptions)
      .then(
        () => undefined,
        (error: unknown) => classifyApiError(error),
      );
    expect(denied).toMatchObject({ kind: "forbidden", status: 403 });
  });

  test("a kubeconfig YAML error names the line and column and quotes none of its lines", async () => {
    const secret = "s3cr3t-abcdef.0123456789abcdef";
    const path = join(dir, "quoted.kubeconfig");
    await writeFile(path, `apiVersion: v1\nusers:\n- name: u\n  user:\n    token: ${secret}\n   bad: [\n`);
    await chmod(path, 0o600);
    const error = await userErrorOf(connect(path, { requestTimeoutMs: 1000 }));
    expect(error.code).toBe("KUBECONFIG_INVALID");
    expect(`${error.message}\n${error.why}`).not.toContain(secret);
    expect(error.why).toMatch(/line \d+, column \d+/);
  });
});

function execKubeconfig(plane: ControlPlaneClient, plugin: string): string {
  return tokenKubeconfig({ server: plane.server, caPem: plane.caPem, token: "unused" }).replace(
    "      token: unused",
    [
      "      exec:",
      "        apiVersion: client.authentication.k8s.io/v1",
      `        command: ${plugin}`,
      "        interactiveMode: Never",
    ].join("\n"),
  );
}
