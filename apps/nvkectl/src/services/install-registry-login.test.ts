import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAuthsFile } from "@nodekit/oci";
import { Redactor } from "@nodekit/process";
import { holdingChild, tempDir } from "@nodekit/test-utils";
import { afterEach, describe, expect, test } from "vitest";
import {
  type HelmRegistryLogin,
  helmRegistryConfigPath,
  helmRegistryLogin,
  withHelmRegistryConfig,
} from "./install-registry-login.ts";

// The helm registry config install --release writes when the registry credential is in the
// environment: the same credential release verify takes, written 0600 in a fresh 0700
// directory for the length of the run, and gone afterwards however the run ends.

const PASSWORD = "env-Pw-9931q";
const REGISTRY = "127.0.0.1:5123";

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups) await cleanup();
  cleanups = [];
});
async function scratch() {
  const dir = await tempDir("install-registry-login-");
  cleanups.push(dir.cleanup);
  return dir.path;
}
const gone = (path: string) =>
  stat(path).then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === "ENOENT",
  );

describe("which credential helm is given", () => {
  test("the environment's, for the chart registry: every password registered with the redactor", async () => {
    const home = await scratch();
    const redactor = new Redactor();
    const env = { HOME: home, NODEKIT_REGISTRY_USERNAME: "ops", NODEKIT_REGISTRY_PASSWORD: PASSWORD };
    const login = await helmRegistryLogin([REGISTRY, REGISTRY], { env, workDir: join(home, "state"), redactor });
    expect(login).toEqual({
      path: join(home, "state", "helm-registry", "config.json"),
      auths: { [REGISTRY]: { username: "ops", password: PASSWORD } },
    });
    const auth = Buffer.from(`ops:${PASSWORD}`).toString("base64");
    expect(redactor.redact(`${PASSWORD} ${auth}`)).not.toMatch(new RegExp(`${PASSWORD}|${auth}`));
  });

  test("the environment wins over docker's config (as in release verify); another registry keeps the file's", async () => {
    const home = await scratch();
    await mkdir(join(home, ".docker"));
    const file = (user: string, password: string) => ({ auth: Buffer.from(`${user}:${password}`).toString("base64") });
    await writeFile(
      join(home, ".docker", "config.json"),
      JSON.stringify({ auths: { [REGISTRY]: file("stale", "old"), "mirror.example.test": file("m", "mpw") } }),
    );
    const env = {
      HOME: home,
      NODEKIT_REGISTRY_USERNAME: "ops",
      NODEKIT_REGISTRY_PASSWORD: PASSWORD,
      NODEKIT_REGISTRY_HOST: REGISTRY,
    };
    const login = await helmRegistryLogin([REGISTRY, "mirror.example.test", "anonymous.example.test"], {
      env,
      workDir: join(home, "state"),
      redactor: new Redactor(),
    });
    expect(login?.auths).toEqual({
      [REGISTRY]: { username: "ops", password: PASSWORD },
      "mirror.example.test": { username: "m", password: "mpw" },
    });
  });

  test("no credential in the environment for the chart registries: none is generated (helm reads the user's file)", async () => {
    const home = await scratch();
    const options = { workDir: join(home, "state"), redactor: new Redactor() };
    expect(await helmRegistryLogin([REGISTRY], { ...options, env: { HOME: home } })).toBeUndefined();
    const elsewhere = {
      HOME: home,
      NODEKIT_REGISTRY_USERNAME: "ops",
      NODEKIT_REGISTRY_PASSWORD: PASSWORD,
      NODEKIT_REGISTRY_HOST: "other.example.test",
    };
    expect(await helmRegistryLogin([REGISTRY], { ...options, env: elsewhere })).toBeUndefined();
  });
});

describe("the generated config", () => {
  const loginIn = (workDir: string): HelmRegistryLogin => ({
    path: helmRegistryConfigPath(workDir),
    auths: { [REGISTRY]: { username: "ops", password: PASSWORD } },
  });

  test("is 0600 in a 0700 directory while the run lasts, in the form helm reads, and removed after it", async () => {
    const workDir = join(await scratch(), "state");
    const login = loginIn(workDir);
    const seen = await withHelmRegistryConfig(login, async () => ({
      file: (await stat(login.path)).mode & 0o777,
      dir: (await stat(join(workDir, "helm-registry"))).mode & 0o777,
      auths: Object.fromEntries(parseAuthsFile(await readFile(login.path, "utf8"), login.path)),
    }));
    expect(seen).toEqual({ file: 0o600, dir: 0o700, auths: login.auths });
    expect(await gone(join(workDir, "helm-registry"))).toBe(true);
    expect((await stat(workDir)).mode & 0o777).toBe(0o700);
  });

  test("is removed when the run fails, and the failure is what the caller sees", async () => {
    const workDir = join(await scratch(), "state");
    const login = loginIn(workDir);
    const failure = new Error("helm failed");
    await expect(
      withHelmRegistryConfig(login, async () => {
        expect((await stat(login.path)).isFile()).toBe(true);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await gone(join(workDir, "helm-registry"))).toBe(true);
  });

  test("one left behind by a killed run is replaced by a fresh one; the exit hook is undone after the run", async () => {
    const workDir = join(await scratch(), "state");
    await mkdir(join(workDir, "helm-registry"), { recursive: true, mode: 0o755 });
    await writeFile(join(workDir, "helm-registry", "left.json"), "{}");
    const hooked: Array<() => void> = [];
    let unhooked = 0;
    const onExit = (cleanup: () => void) => {
      hooked.push(cleanup);
      return () => {
        unhooked++;
      };
    };
    const login = loginIn(workDir);
    const listing = await withHelmRegistryConfig(
      login,
      async () => {
        expect((await stat(join(workDir, "helm-registry"))).mode & 0o777).toBe(0o700);
        return gone(join(workDir, "helm-registry", "left.json"));
      },
      { onExit },
    );
    expect(listing).toBe(true);
    expect({ hooked: hooked.length, unhooked }).toEqual({ hooked: 1, unhooked: 1 });
  });

  test("Ctrl-C in the middle of the run: the directory is removed and the process still ends by SIGINT", async () => {
    const workDir = join(await scratch(), "state");
    const login = loginIn(workDir);
    const module = fileURLToPath(new URL("./install-registry-login.ts", import.meta.url));
    const { child, exited } = await holdingChild(
      `const { withHelmRegistryConfig } = await import(${JSON.stringify(module)});
       await withHelmRegistryConfig(${JSON.stringify(login)}, () => {
         process.stdout.write("written\\n");
         setInterval(() => {}, 1000);
         return new Promise(() => {});
       });`,
    );
    expect((await stat(login.path)).mode & 0o777).toBe(0o600);
    child.kill("SIGINT");
    expect(await exited).toBe("SIGINT");
    expect(await gone(join(workDir, "helm-registry"))).toBe(true);
  });
});
