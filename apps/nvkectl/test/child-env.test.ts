import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type CliHome, cliHome, installArgs, writeInstallInputs } from "./helpers.ts";

// Issue 22, item 4, from the outside: the secrets in nvkectl's environment reach no program
// it starts. A kubeconfig's exec plugin (a real one: kubectl runs it through the process
// runner; @kubernetes/client-node runs it in-process for the token) writes down the
// environment it got. Build nvkectl first.

const CANARIES = {
  NR_API_TOKEN: "canary-nr-api-token-4f1c",
  NR_PROXMOX_TOKEN_SECRET: "canary-proxmox-secret-77a2",
  NODEKIT_REGISTRY_USERNAME: "canary-registry-user-5a11",
  NODEKIT_REGISTRY_PASSWORD: "canary-registry-password-9d0e",
  NVKE_NICO_API_KEY: "canary-nico-key-31b8",
  HELM_KUBETOKEN: "canary-helm-kubetoken-c5e7",
  SOME_OTHER_SECRET: "canary-other-secret-0b9f",
};
const PROXY = "http://proxy.invalid:3128";

let home: CliHome;
let dumps: string;
let kubeconfig: string;
// A port nothing listens on: every request is refused, after the plugin ran.
let port: number;

beforeAll(async () => {
  home = await cliHome("nvkectl-child-env-");
  dumps = join(home.path, "dumps");
  tools = join(home.path, "tools");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  const plugin = join(home.path, "exec-plugin.sh");
  await writeFile(
    plugin,
    `#!/bin/sh
mkdir -p "$DUMP_DIR"
env > "$DUMP_DIR/$$.env"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"plugin-token"}}'
`,
    { mode: 0o755 },
  );
  kubeconfig = join(home.path, "exec.kubeconfig");
  await writeFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: `https://127.0.0.1:${port}`, "insecure-skip-tls-verify": true } }],
      users: [
        {
          name: "u",
          user: {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1",
              command: plugin,
              interactiveMode: "Never",
              env: [{ name: "DUMP_DIR", value: dumps }],
            },
          },
        },
      ],
      contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
      "current-context": "c",
    }),
    { mode: 0o600 },
  );
  await writeInstallInputs(home.path);
  // The install asks helm and clusterctl their versions first: stand-ins that answer, and
  // write down the environment they got as the plugin does.
  await mkdir(tools, { recursive: true });
  for (const [name, version] of [
    ["helm", "v3.18.6+g0000000"],
    ["clusterctl", "v1.11.7"],
  ] as const) {
    await writeFile(
      join(tools, name),
      `#!/bin/sh\nmkdir -p "${dumps}-tools"\nenv > "${dumps}-tools/${name}-$$"\necho ${version}\n`,
      { mode: 0o755 },
    );
  }
});
afterAll(() => home.cleanup());
beforeEach(async () => {
  const { rm } = await import("node:fs/promises");
  await rm(dumps, { recursive: true, force: true });
});

let tools: string;
const env = () => ({ ...CANARIES, HTTPS_PROXY: PROXY, NO_PROXY: "127.0.0.1", PATH: `${tools}:${process.env.PATH}` });

/** Every environment the plugin was started with, as NAME → value. */
async function pluginEnvironments(): Promise<Array<{ text: string; vars: Record<string, string> }>> {
  const files = await readdir(dumps).catch(() => []);
  return Promise.all(
    files.map(async (file) => {
      const text = await readFile(join(dumps, file), "utf8");
      const vars = Object.fromEntries(
        text.split("\n").flatMap((line) => {
          const at = line.indexOf("=");
          return at > 0 ? [[line.slice(0, at), line.slice(at + 1)]] : [];
        }),
      );
      return { text, vars };
    }),
  );
}

function expectNoSecrets(seen: Array<{ text: string; vars: Record<string, string> }>) {
  expect(seen.length).toBeGreaterThan(0);
  for (const { text, vars } of seen) {
    for (const [name, value] of Object.entries(CANARIES)) {
      expect(vars[name], name).toBeUndefined();
      expect(text).not.toContain(value);
    }
    // What every program needs, and what the kubeconfig gives its plugin, still arrive.
    expect(vars.PATH).toBe(env().PATH);
    expect(vars.HOME).toBe(home.path);
    expect(vars.HTTPS_PROXY).toBe(PROXY);
    expect(vars.DUMP_DIR).toBe(dumps);
  }
}

describe("the secrets in nvkectl's environment reach no program it starts (issue 22, item 4)", () => {
  test("install: kubectl's exec plugin gets neither the NICo key nor the registry password", async () => {
    const result = await home.nvkectl([...installArgs({ kubeconfig }), "--dry-run"], { env: env() });
    expect(result.exitCode, result.stderr).toBe(6);
    expectNoSecrets(await pluginEnvironments());
    // helm and clusterctl, asked their versions before anything else, got none either.
    const asked = await readdir(`${dumps}-tools`);
    expect(asked.map((file) => file.split("-")[0]).sort()).toEqual(["clusterctl", "helm"]);
    for (const file of asked) {
      const text = await readFile(join(`${dumps}-tools`, file), "utf8");
      for (const value of Object.values(CANARIES)) expect(text).not.toContain(value);
    }
  });

  test("get clusters: the exec plugin @kubernetes/client-node starts for the token gets no secret", async () => {
    const set = await home.nvkectl(
      ["config", "set-site", "lab", "--url", `http://127.0.0.1:${port}`, "--kubeconfig", kubeconfig],
      { env: env() },
    );
    expect(set.exitCode, set.stderr).toBe(0);
    const result = await home.nvkectl(["get", "clusters"], { env: env() });
    expect(result.exitCode, result.stderr).not.toBe(0);
    expectNoSecrets(await pluginEnvironments());
  });
});
