import { execFile } from "node:child_process";
import { promisify } from "node:util";
import {
  ApiextensionsV1Api,
  AuthenticationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  RbacAuthorizationV1Api,
} from "@kubernetes/client-node";

// Shared by this package's *.int.test.ts files only.

/** API clients for one kubeconfig (one identity). */
export function clientsFor(kubeconfigPath: string) {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return {
    core: kc.makeApiClient(CoreV1Api),
    rbac: kc.makeApiClient(RbacAuthorizationV1Api),
    authn: kc.makeApiClient(AuthenticationV1Api),
    apiextensions: kc.makeApiClient(ApiextensionsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

/** Retries `fn` until it stops throwing: for things the API server settles asynchronously (RBAC caches, CRD handlers). */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export const run = promisify(execFile);
