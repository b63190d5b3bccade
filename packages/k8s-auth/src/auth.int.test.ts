import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  type AuthenticationV1Api,
  type AuthorizationV1Api,
  type CoreV1Api,
  KubeConfig,
  type RbacAuthorizationV1Api,
  type RequestContext,
  type V1PolicyRule,
} from "@kubernetes/client-node";
import { ExitCode } from "@nodekit/errors";
import { tempDir, tokenKubeconfig, userErrorOf } from "@nodekit/test-utils";
import { clientsFor, grantRole, ignoring, untilAllowed } from "@nodekit/testenv/kube";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { cacheFilePath } from "./cache.ts";
import { CLIENT_SERVICE_ACCOUNT, type ObjectRef } from "./constants.ts";
import { discoverAudience } from "./discover.ts";
import type { AuthEvent } from "./events.ts";
import { mintToken } from "./mint.ts";
import { recordingProvider } from "./test-support.ts";

// Every NV-9 case against a real kube-apiserver with real RBAC, on this file's own control
// plane: the namespaces are the fixed ones the product searches (cluster-scoped, and the
// plane has no namespace controller to finish deleting them), and the ServiceAccount, Roles
// and auth ConfigMaps made here would otherwise be what the next file on a shared plane
// finds. Each test starts from "no auth ConfigMap anywhere".

// The order the seed text gives, spelled out here rather than taken from the code under test.
const CTRL_NVKE = { namespace: "nke-controller", name: "nvke-auth-config" };
const CTRL_NKE = { namespace: "nke-controller", name: "nke-auth-config" };
const CWE_NVKE = { namespace: "cloud-workflow-engine", name: "nvke-auth-config" };
const CWE_NKE = { namespace: "cloud-workflow-engine", name: "nke-auth-config" };
const SEARCH_ORDER = [CTRL_NVKE, CTRL_NKE, CWE_NVKE, CWE_NKE];
const ROLE_PREFIX = "k8s-auth-int";

/** Records every request the client library sends: the boundary we count at. */
class RecordingKubeConfig extends KubeConfig {
  readonly requests: string[] = [];
  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    this.requests.push(`${context.getHttpMethod()} ${new URL(context.getUrl()).pathname}`);
    return super.applySecurityAuthentication(context);
  }
}

const GET = (ref: ObjectRef) => `GET /api/v1/namespaces/${ref.namespace}/configmaps/${ref.name}`;
const MINT = `POST /api/v1/namespaces/${CLIENT_SERVICE_ACCOUNT.namespace}/serviceaccounts/${CLIENT_SERVICE_ACCOUNT.name}/token`;

let plane: Awaited<ReturnType<typeof useControlPlane>>;
let core: CoreV1Api;
let rbac: RbacAuthorizationV1Api;
let authn: AuthenticationV1Api;
let authz: AuthorizationV1Api;
const kubeconfigs: Record<string, string> = {};

async function putConfigMap(ref: ObjectRef, data: Record<string, string>): Promise<void> {
  await ignoring(404, () => core.deleteNamespacedConfigMap(ref));
  await core.createNamespacedConfigMap({ namespace: ref.namespace, body: { metadata: { name: ref.name }, data } });
}

async function removeAllCandidates(): Promise<void> {
  for (const ref of SEARCH_ORDER) await ignoring(404, () => core.deleteNamespacedConfigMap(ref));
}

/** A Role with one rule, bound to `user`, in `namespace` (gone with the file's plane). */
async function grant(user: string, namespace: string, rule: V1PolicyRule): Promise<void> {
  await grantRole(rbac, { namespace, name: `${ROLE_PREFIX}-${user}`, user, rules: [rule] });
}

const readAllConfigMaps: V1PolicyRule = { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] };
const mintClientTokens: V1PolicyRule = {
  apiGroups: [""],
  resources: ["serviceaccounts/token"],
  verbs: ["create"],
  resourceNames: [CLIENT_SERVICE_ACCOUNT.name],
};
const canMint = (user: string) =>
  untilAllowed(authz, user, {
    namespace: CLIENT_SERVICE_ACCOUNT.namespace,
    verb: "create",
    resource: "serviceaccounts",
    subresource: "token",
    name: CLIENT_SERVICE_ACCOUNT.name,
  });
const canRead = (user: string, ref: ObjectRef) =>
  untilAllowed(authz, user, { namespace: ref.namespace, verb: "get", resource: "configmaps", name: ref.name });

/** Identities, each with a different slice of the RBAC a site may grant. */
const USERS = {
  /** get on every ConfigMap in both namespaces, create on nke-client's token. */
  reader: "k8s-auth-reader",
  /** get on nke-controller/nke-auth-config only (resourceNames), as a pinned site grants. */
  pinned: "k8s-auth-pinned",
  /** No ConfigMap access at all, but may mint: proves no TokenRequest follows a denial. */
  denied: "k8s-auth-denied",
  /** get on ConfigMaps in nke-controller only. */
  controllerOnly: "k8s-auth-controller-only",
  /** Reads the ConfigMaps but may not mint. */
  noMint: "k8s-auth-no-mint",
} as const;

beforeAll(async () => {
  plane = await useControlPlane({ dedicated: true });
  ({ core, rbac, authn, authz } = clientsFor(plane.adminKubeconfigPath));

  // The fixed namespaces and the client ServiceAccount, on a plane that starts without them.
  for (const namespace of ["nke-controller", "cloud-workflow-engine", CLIENT_SERVICE_ACCOUNT.namespace]) {
    await core.createNamespace({ body: { metadata: { name: namespace } } });
  }
  await core.createNamespacedServiceAccount({
    namespace: CLIENT_SERVICE_ACCOUNT.namespace,
    body: { metadata: { name: CLIENT_SERVICE_ACCOUNT.name } },
  });

  for (const namespace of ["nke-controller", "cloud-workflow-engine"]) {
    await grant(USERS.reader, namespace, readAllConfigMaps);
    await grant(USERS.noMint, namespace, readAllConfigMaps);
  }
  await grant(USERS.controllerOnly, "nke-controller", readAllConfigMaps);
  await grant(USERS.pinned, "nke-controller", { ...readAllConfigMaps, resourceNames: ["nke-auth-config"] });
  for (const user of [USERS.reader, USERS.pinned, USERS.denied, USERS.controllerOnly]) {
    await grant(user, CLIENT_SERVICE_ACCOUNT.namespace, mintClientTokens);
  }
  await Promise.all([
    canRead(USERS.reader, CWE_NKE),
    canRead(USERS.noMint, CWE_NKE),
    canRead(USERS.controllerOnly, CTRL_NKE),
    canRead(USERS.pinned, CTRL_NKE),
    ...[USERS.reader, USERS.pinned, USERS.denied, USERS.controllerOnly].map(canMint),
  ]);
  for (const user of Object.values(USERS)) kubeconfigs[user] = await plane.kubeconfigFor({ user });
});

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  await removeAllCandidates();
  ({ path: dir, cleanup } = await tempDir("k8s-auth-int-"));
});
afterEach(() => cleanup());

function kubeconfigOf(user: string): string {
  const path = kubeconfigs[user];
  if (!path) throw new Error(`no kubeconfig for ${user}`);
  return path;
}

function recording(user: string): RecordingKubeConfig {
  const kc = new RecordingKubeConfig();
  kc.loadFromFile(kubeconfigOf(user));
  return kc;
}

const providerFor = (kubeconfig: string | KubeConfig, overrides: { now?: () => Date } = {}) =>
  recordingProvider({ kubeconfig, cacheDir: join(dir, "tokens"), ...overrides });

async function review(token: string, audience: string) {
  const result = await authn.createTokenReview({ body: { spec: { token, audiences: [audience] } } });
  return result.status ?? {};
}

describe("NV-9: finding the audience", () => {
  test("auth off: no auth ConfigMap in either namespace → no token, and no TokenRequest", async () => {
    // Given no candidate anywhere, and a kubeconfig that could read them all and mint
    const kc = recording(USERS.reader);

    // When a token is asked for
    const { tokens, events } = providerFor(kc);
    const token = await tokens.token();

    // Then there is none: auth is off
    expect(token).toBeUndefined();
    expect(events.map((e) => e.message)).toContain(
      "auth off: no auth ConfigMap in nke-controller or cloud-workflow-engine",
    );

    // And all four candidates were asked for, namespace by namespace, and nothing was minted
    expect(kc.requests).toEqual([GET(CTRL_NVKE), GET(CTRL_NKE), GET(CWE_NVKE), GET(CWE_NKE)]);

    // And "auth off" is cached: asking again sends nothing
    expect(await tokens.token()).toBeUndefined();
    expect(kc.requests).toHaveLength(4);
    expect(await discoverAudience(kubeconfigOf(USERS.reader))).toEqual({ auth: "off" });
  });

  test("nvke-auth-config in nke-controller gives the audience; the minted token validates for it and not for another", async () => {
    // Given the auth ConfigMap under its current name
    await putConfigMap(CTRL_NVKE, { audience: "nvke-controller-api" });
    const kc = recording(USERS.reader);

    // When a token is asked for
    const { tokens, handed, events } = providerFor(kc);
    const token = await tokens.token();

    // Then one ConfigMap read and one TokenRequest were made
    expect(kc.requests).toEqual([GET(CTRL_NVKE), MINT]);
    expect(token).toBeTypeOf("string");
    expect(handed).toEqual([token]);
    expect(JSON.stringify(events)).not.toContain(token);

    // And the API server accepts it for that audience, as nke-clients/nke-client
    const accepted = await review(token ?? "", "nvke-controller-api");
    expect(accepted.authenticated).toBe(true);
    expect(accepted.user?.username).toBe("system:serviceaccount:nke-clients:nke-client");

    // And not for another audience
    const rejected = await review(token ?? "", "someone-else");
    expect(rejected.authenticated).toBeFalsy();

    // And the second call is served from the 0600 cache without a request
    expect(await tokens.token()).toBe(token);
    expect(kc.requests).toHaveLength(2);
    expect(
      (await stat(cacheFilePath(join(dir, "tokens"), { site: "lab", serviceAccount: CLIENT_SERVICE_ACCOUNT }))).mode &
        0o777,
    ).toBe(0o600);
  });

  test("falls back to nke-auth-config in nke-controller (a site pinned to the old name)", async () => {
    await putConfigMap(CTRL_NKE, { audience: "pinned-audience" });
    const result = await discoverAudience(kubeconfigOf(USERS.reader));
    expect(result).toEqual({ auth: "on", audience: "pinned-audience", configMap: CTRL_NKE, denials: [] });
  });

  test("falls back to cloud-workflow-engine, nvke-auth-config first", async () => {
    await putConfigMap(CWE_NKE, { audience: "cwe-old" });
    expect(await discoverAudience(kubeconfigOf(USERS.reader))).toMatchObject({
      audience: "cwe-old",
      configMap: CWE_NKE,
    });

    await putConfigMap(CWE_NVKE, { audience: "cwe-new" });
    expect(await discoverAudience(kubeconfigOf(USERS.reader))).toMatchObject({
      audience: "cwe-new",
      configMap: CWE_NVKE,
    });
  });

  test("the search is namespace-major: both names in nke-controller before either in cloud-workflow-engine", async () => {
    // Given all four candidates, each with its own audience
    const audiences = ["ctrl-nvke", "ctrl-nke", "cwe-nvke", "cwe-nke"];
    for (const [index, ref] of SEARCH_ORDER.entries()) {
      await putConfigMap(ref, { audience: audiences[index] ?? "" });
    }
    // Then removing the winner each time walks the documented order, ending with auth off
    for (const [index, ref] of SEARCH_ORDER.entries()) {
      expect(await discoverAudience(kubeconfigOf(USERS.reader))).toMatchObject({
        audience: audiences[index],
        configMap: ref,
      });
      await core.deleteNamespacedConfigMap(ref);
    }
    expect(await discoverAudience(kubeconfigOf(USERS.reader))).toEqual({ auth: "off" });
  });

  test("a kubeconfig that may read only the pinned name is Forbidden on nvke-auth-config, moves on, and still mints a token", async () => {
    // Given both names in nke-controller, and a Role granting get on nke-auth-config alone
    await putConfigMap(CTRL_NVKE, { audience: "unreadable-audience" });
    await putConfigMap(CTRL_NKE, { audience: "pinned-audience" });
    const kc = recording(USERS.pinned);

    // When the audience is looked up
    const events: AuthEvent[] = [];
    const result = await discoverAudience(kc, { log: (event) => events.push(event) });

    // Then the denial is kept and the pinned ConfigMap is used
    expect(result).toEqual({
      auth: "on",
      audience: "pinned-audience",
      configMap: CTRL_NKE,
      denials: [
        {
          configMap: CTRL_NVKE,
          identity: USERS.pinned,
          message: expect.stringContaining(`User "${USERS.pinned}" cannot get resource "configmaps"`),
        },
      ],
    });
    expect(events.map((e) => e.message)).toContain(
      "auth ConfigMap nke-controller/nvke-auth-config forbidden; trying next",
    );

    // And a token is minted for that audience and validates
    const { tokens } = providerFor(kubeconfigOf(USERS.pinned));
    const token = await tokens.token();
    expect((await review(token ?? "", "pinned-audience")).authenticated).toBe(true);
  });
});

describe("NV-9: denials", () => {
  test("candidates exist but none is readable: fails with the kept denial, and no TokenRequest is made", async () => {
    // Given the auth ConfigMap, and an identity that may mint but not read any ConfigMap
    await putConfigMap(CTRL_NVKE, { audience: "nvke-controller-api" });
    const kc = recording(USERS.denied);

    // When a token is asked for
    const { tokens, handed } = providerFor(kc);
    const error = await userErrorOf(tokens.token());

    // Then it fails as Unauthorized, naming the identity, the ConfigMap and its namespace
    expect(error.code).toBe("AUTH_CONFIG_FORBIDDEN");
    expect(error.exitCode).toBe(ExitCode.Unauthorized);
    expect(error.message).toBe(
      `user "${USERS.denied}" may not read the NVKE auth ConfigMap nvke-auth-config in namespace nke-controller, and no other candidate is readable; no request was sent to the controller`,
    );
    expect(error.why).toContain(
      "Forbidden: nke-controller/nvke-auth-config, nke-controller/nke-auth-config, cloud-workflow-engine/nvke-auth-config, cloud-workflow-engine/nke-auth-config",
    );

    // And it gives the grant that would fix it
    expect(error.next).toEqual([
      `ask a cluster admin to let user "${USERS.denied}" get the auth ConfigMap: kubectl create role nvke-auth-config-reader -n nke-controller --verb=get --resource=configmaps --resource-name=nvke-auth-config --resource-name=nke-auth-config`,
      `and bind it: kubectl create rolebinding nvke-auth-config-reader -n nke-controller --role=nvke-auth-config-reader --user=${USERS.denied}`,
      "check with: kubectl auth can-i get configmap/nvke-auth-config -n nke-controller",
    ]);

    // And all four were tried, none minted, nothing cached
    expect(kc.requests).toEqual([GET(CTRL_NVKE), GET(CTRL_NKE), GET(CWE_NVKE), GET(CWE_NKE)]);
    expect(handed).toEqual([]);
    await expect(stat(join(dir, "tokens"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  test("a denial is never 'auth off': with no ConfigMap anywhere, an identity that may not look still fails", async () => {
    const error = await userErrorOf(discoverAudience(kubeconfigOf(USERS.denied)));
    expect(error.code).toBe("AUTH_CONFIG_FORBIDDEN");
    expect(error.next.join("\n")).toContain(`--kubeconfig ${kubeconfigOf(USERS.denied)} auth can-i`);
  });

  test("NotFound in one namespace and Forbidden in the other fails with the Forbidden one", async () => {
    // Given the ConfigMap in cloud-workflow-engine, which this identity may not read
    await putConfigMap(CWE_NKE, { audience: "cwe" });

    const error = await userErrorOf(discoverAudience(kubeconfigOf(USERS.controllerOnly)));

    expect(error.code).toBe("AUTH_CONFIG_FORBIDDEN");
    expect(error.message).toContain("nvke-auth-config in namespace cloud-workflow-engine");
    expect(error.why).toContain("not found: nke-controller/nvke-auth-config, nke-controller/nke-auth-config");
    expect(error.next[0]).toContain(
      "-n cloud-workflow-engine --verb=get --resource=configmaps --resource-name=nvke-auth-config --resource-name=nke-auth-config",
    );
  });

  test("minting denied (no create on serviceaccounts/token) names the missing permission and the fix", async () => {
    await putConfigMap(CTRL_NVKE, { audience: "nvke-controller-api" });
    const { tokens } = providerFor(kubeconfigOf(USERS.noMint));

    const error = await userErrorOf(tokens.token());

    expect(error.code).toBe("AUTH_TOKEN_FORBIDDEN");
    expect(error.exitCode).toBe(ExitCode.Unauthorized);
    expect(error.message).toBe(
      `user "${USERS.noMint}" may not mint tokens for ServiceAccount nke-client in namespace nke-clients: it lacks create on serviceaccounts/token`,
    );
    expect(error.next).toEqual([
      "ask a cluster admin to grant it: kubectl create role nke-client-token-creator -n nke-clients --verb=create --resource=serviceaccounts/token --resource-name=nke-client",
      `and bind it: kubectl create rolebinding nke-client-token-creator -n nke-clients --role=nke-client-token-creator --user=${USERS.noMint}`,
      `check with: kubectl --kubeconfig ${kubeconfigOf(USERS.noMint)} auth can-i create serviceaccounts/nke-client --subresource=token -n nke-clients`,
    ]);
  });

  test("the suggested grants work: applied with kubectl's flags, the denied identity mints", async () => {
    // The fix the two errors print, as Role rules (kubectl create role builds exactly these)
    await putConfigMap(CTRL_NVKE, { audience: "granted" });
    const user = "k8s-auth-granted";
    await grant(user, "nke-controller", {
      ...readAllConfigMaps,
      resourceNames: ["nvke-auth-config", "nke-auth-config"],
    });
    await grant(user, "nke-clients", mintClientTokens);
    await canRead(user, CTRL_NVKE);
    await canMint(user);

    const { tokens } = providerFor(await plane.kubeconfigFor({ user }));
    expect((await review((await tokens.token()) ?? "", "granted")).authenticated).toBe(true);
  });
});

describe("NV-9: other failures", () => {
  test("a ConfigMap without an audience key is AUTH_CONFIG_INVALID, naming it", async () => {
    await putConfigMap(CTRL_NVKE, { issuer: "https://example" });
    const error = await userErrorOf(discoverAudience(kubeconfigOf(USERS.reader)));
    expect(error.code).toBe("AUTH_CONFIG_INVALID");
    expect(error.message).toBe(
      'the NVKE auth ConfigMap nvke-auth-config in namespace nke-controller has no "audience" value',
    );
    expect(error.why).toContain("only issuer");
  });

  test("a missing ServiceAccount is AUTH_SERVICE_ACCOUNT_NOT_FOUND (NotFound)", async () => {
    const error = await userErrorOf(
      mintToken(plane.adminKubeconfigPath, {
        audience: "x",
        serviceAccount: { namespace: "nke-clients", name: "k8s-auth-absent" },
      }),
    );
    expect(error.code).toBe("AUTH_SERVICE_ACCOUNT_NOT_FOUND");
    expect(error.exitCode).toBe(ExitCode.NotFound);
    expect(error.message).toBe(
      "ServiceAccount k8s-auth-absent in namespace nke-clients does not exist on the site cluster",
    );
  });

  test("credentials the API server rejects (401) are KUBE_UNAUTHORIZED, naming kubeconfig and server", async () => {
    const path = join(dir, "stale.kubeconfig");
    await writeFile(path, tokenKubeconfig({ server: plane.server, caPem: plane.caPem, token: "not-a-valid-token" }));
    const error = await userErrorOf(discoverAudience(path));
    expect(error.code).toBe("KUBE_UNAUTHORIZED");
    expect(error.exitCode).toBe(ExitCode.Unauthorized);
    expect(error.message).toBe(
      `the site cluster did not accept the credentials in kubeconfig ${path} (server ${plane.server})`,
    );
  });

  test("a server certificate the kubeconfig does not trust is KUBE_UNREACHABLE with the TLS reason", async () => {
    const path = join(dir, "no-ca.kubeconfig");
    await writeFile(path, tokenKubeconfig({ server: plane.server, token: "x" }));
    const error = await userErrorOf(discoverAudience(path));
    expect(error.code).toBe("KUBE_UNREACHABLE");
    expect(error.exitCode).toBe(ExitCode.Unreachable);
    expect(error.why).toMatch(/^TLS verification failed/);
  });
});

describe("token lifetime and the cache", () => {
  test("mintToken asks for the lifetime given; the API server's expiry comes back", async () => {
    const before = Date.now();
    const minted = await mintToken(plane.adminKubeconfigPath, { audience: "short", expirationSeconds: 600 });
    const lifetime = minted.expiresAt.getTime() - before;
    expect(lifetime).toBeGreaterThan(595_000);
    expect(lifetime).toBeLessThan(605_000);
    expect((await review(minted.token, "short")).authenticated).toBe(true);
  });

  test("a token inside its refresh margin is replaced; invalidate() forces a new one; a corrupt file is replaced", async () => {
    await putConfigMap(CTRL_NVKE, { audience: "rotating" });
    const kc = recording(USERS.reader);
    let now = new Date();
    const { tokens } = providerFor(kc, { now: () => now });

    // A first token, then the cache
    const first = await tokens.token();
    await tokens.token();
    expect(kc.requests).toEqual([GET(CTRL_NVKE), MINT]);

    // 55 minutes on, inside the last 10%: discovered and minted again
    now = new Date(now.getTime() + 55 * 60_000);
    expect(await tokens.token()).toBeTypeOf("string");
    expect(kc.requests).toEqual([GET(CTRL_NVKE), MINT, GET(CTRL_NVKE), MINT]);

    // invalidate() (the controller said 401): discovered and minted again
    now = new Date();
    await tokens.invalidate();
    const third = await tokens.token();
    expect(kc.requests).toHaveLength(6);

    // A corrupt cache file is ignored and replaced by a valid one
    const file = cacheFilePath(join(dir, "tokens"), { site: "lab", serviceAccount: CLIENT_SERVICE_ACCOUNT });
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, "{ not json");
    await tokens.token();
    expect(kc.requests).toHaveLength(8);
    expect(JSON.parse(await readFile(file, "utf8")).state.audience).toBe("rotating");

    for (const token of [first, third]) expect((await review(token ?? "", "rotating")).authenticated).toBe(true);
  });
});
