// Shared by this package's *.int.test.ts files only.
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { AUTH_CONFIGMAP_CANDIDATES } from "./auth.ts";

export function coreFor(kubeconfigPath: string): CoreV1Api {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return kc.makeApiClient(CoreV1Api);
}

export async function stateFile(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), "nvke-emulator-test-")), "state.json");
}

/** Retries `fn` until it stops throwing. */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function ensureNamespace(core: CoreV1Api, name: string): Promise<void> {
  try {
    await core.createNamespace({ body: { metadata: { name } } });
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
}

/** Removes every auth ConfigMap candidate: auth off for the emulator. */
export async function authOff(core: CoreV1Api): Promise<void> {
  for (const { namespace, name } of AUTH_CONFIGMAP_CANDIDATES) {
    try {
      await core.deleteNamespacedConfigMap({ name, namespace });
    } catch (error) {
      if ((error as { code?: number }).code !== 404) throw error;
    }
  }
}

/** Writes one auth ConfigMap candidate with this audience (auth on). */
export async function authOn(
  core: CoreV1Api,
  audience: string,
  where: { namespace: string; name: string } = AUTH_CONFIGMAP_CANDIDATES[0],
): Promise<void> {
  await ensureNamespace(core, where.namespace);
  const body = { metadata: { name: where.name, namespace: where.namespace }, data: { audience } };
  try {
    await core.createNamespacedConfigMap({ namespace: where.namespace, body });
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
    await core.replaceNamespacedConfigMap({ name: where.name, namespace: where.namespace, body });
  }
}

/** A real token from a TokenRequest for nke-clients/nke-client (created if missing). */
export async function mintToken(core: CoreV1Api, audience: string): Promise<string> {
  await ensureNamespace(core, "nke-clients");
  try {
    await core.createNamespacedServiceAccount({ namespace: "nke-clients", body: { metadata: { name: "nke-client" } } });
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
  const request = await core.createNamespacedServiceAccountToken({
    name: "nke-client",
    namespace: "nke-clients",
    body: { spec: { audiences: [audience], expirationSeconds: 600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error("TokenRequest returned no token");
  return token;
}

export const randomSuffix = () => randomBytes(3).toString("hex");

export const FAST = { provisionMs: 300, deleteMs: 300, nodeMs: 100 };
