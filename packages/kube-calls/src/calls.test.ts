import { mkdir } from "node:fs/promises";
import { testdir, userErrorOf } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import {
  assertKubeconfig,
  clusterctlCall,
  helmCall,
  isolatedToolEnv,
  kubeconfigFiles,
  kubectlCall,
  kubeErrorCodes,
  kubeTarget,
} from "./index.ts";

describe("the call builders", () => {
  test("kubectl names the kubeconfig, the context and a request timeout before the arguments", () => {
    expect(kubectlCall({ kubeconfig: "/k" }, ["get", "nodes"]).args).toEqual([
      "--kubeconfig",
      "/k",
      "--request-timeout=30s",
      "get",
      "nodes",
    ]);
    const call = kubectlCall({ kubeconfig: "/k", context: "c", requestTimeout: "5s" }, ["apply"], { input: "x" });
    expect(call).toMatchObject({ command: "kubectl", input: "x" });
    expect(call.args.slice(0, 5)).toEqual(["--kubeconfig", "/k", "--context", "c", "--request-timeout=5s"]);
  });

  test("helm and clusterctl take their own environment and name the context their way", () => {
    const env = isolatedToolEnv("/h");
    expect(env).toMatchObject({ HOME: "/h", XDG_CONFIG_HOME: "/h/.config", CLUSTERCTL_DISABLE_VERSIONCHECK: "true" });
    const helm = helmCall({ kubeconfig: "/k", context: "c" }, ["list"], env);
    expect(helm.args).toEqual(["list", "--kubeconfig", "/k", "--kube-context", "c"]);
    expect(helm.env).toBe(env);
    const clusterctl = clusterctlCall({ kubeconfig: "/k", context: "c" }, ["init"], env);
    expect(clusterctl.args).toEqual(["init", "--kubeconfig", "/k", "--kubeconfig-context", "c"]);
  });

  test("KUBECONFIG's list of several files goes to each tool as KUBECONFIG, one file as --kubeconfig", () => {
    expect(kubeTarget(["/a"], { context: "c" })).toEqual({ kubeconfig: "/a", context: "c" });
    const target = kubeTarget(["/a", "/b"], { context: "c" });
    expect(kubeconfigFiles(target)).toEqual(["/a", "/b"]);
    const kubectl = kubectlCall(target, ["get", "nodes"]);
    expect(kubectl.env).toEqual({ KUBECONFIG: "/a:/b" });
    expect(kubectl.args).not.toContain("--kubeconfig");
    expect(kubectl.args.slice(0, 2)).toEqual(["--context", "c"]);
    const env = isolatedToolEnv("/h");
    const helm = helmCall(target, ["list"], env);
    expect(helm.args).toEqual(["list", "--kube-context", "c"]);
    expect(helm.env).toEqual({ ...env, KUBECONFIG: "/a:/b" });
    const clusterctl = clusterctlCall(target, ["init"], env);
    expect(clusterctl.args).toEqual(["init", "--kubeconfig-context", "c"]);
    expect(clusterctl.env).toMatchObject({ KUBECONFIG: "/a:/b", HOME: "/h" });
  });
});

describe("assertKubeconfig", () => {
  test("a file passes; a missing path or a directory is KUBECONFIG_NOT_FOUND naming it", async () => {
    const dir = await testdir({ "k.yaml": "apiVersion: v1\nkind: Config\n" });
    await assertKubeconfig(dir.path("k.yaml"));
    const missing = await userErrorOf(assertKubeconfig(dir.path("nope"), "the site's kubeconfig"));
    expect(missing.code).toBe(kubeErrorCodes.KUBECONFIG_NOT_FOUND.code);
    expect(missing.message).toBe(`the site's kubeconfig ${dir.path("nope")} does not exist or is not a file`);
    await mkdir(dir.path("d"));
    expect((await userErrorOf(assertKubeconfig(dir.path("d")))).why).toBe("it is a directory");
  });
});
