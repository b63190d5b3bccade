// Shared by this package's *.int.test.ts files only.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { CoreV1Api } from "@kubernetes/client-node";
import { tempDir } from "@nodekit/test-utils";
import { ignoring } from "@nodekit/testenv/kube";
import { afterAll } from "vitest";
import { AUTH_CONFIGMAP_CANDIDATES } from "./auth.ts";

const made: Array<() => Promise<void>> = [];
// Registered on the importing file: its directories go once its own hooks have stopped the emulators.
afterAll(async () => {
  for (const cleanup of made.splice(0)) await cleanup();
});

/** A directory of its own, removed after the importing test file. */
export async function testDir(): Promise<string> {
  const dir = await tempDir("nvke-emulator-test-");
  made.push(dir.cleanup);
  return dir.path;
}

/** A state file in a directory of its own, removed after the importing test file. */
export async function stateFile(): Promise<string> {
  return join(await testDir(), "state.json");
}

const ensureNamespace = (core: CoreV1Api, name: string) =>
  ignoring(409, () => core.createNamespace({ body: { metadata: { name } } }));

/** Removes every auth ConfigMap candidate: auth off for the emulator. */
export async function authOff(core: CoreV1Api): Promise<void> {
  for (const { namespace, name } of AUTH_CONFIGMAP_CANDIDATES) {
    await ignoring(404, () => core.deleteNamespacedConfigMap({ name, namespace }));
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
  await ignoring(409, () =>
    core.createNamespacedServiceAccount({ namespace: "nke-clients", body: { metadata: { name: "nke-client" } } }),
  );
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
