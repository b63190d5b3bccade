import { execFile } from "node:child_process";
import { cp, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { type CliResult, type RunCliOptions, repoRoot, runCli, tempDir } from "@nodekit/test-utils";

// Shared by apps/nvkectl's CLI tests. The CLI runs built, with HOME and the XDG directories in
// a temporary directory of the test's own: in the test's process (runCli), or as a process of
// its own where the test is about the process (`cliHome(prefix, { spawn: true })`: the start-up
// guard, the launcher, plugins).

const execFileAsync = promisify(execFile);

export interface CliHome {
  path: string;
  env: Record<string, string>;
  /** The token cache directory nvkectl uses under this home. */
  tokenCacheDir: string;
  nvkectl(args: string[], options?: Omit<RunCliOptions, "cwd">): Promise<CliResult>;
  cleanup(): Promise<void>;
}

/** PATH with node and nothing else: no kubectl, helm or clusterctl. */
export const NO_KUBECTL = dirname(process.execPath);

/** A home of the test's own; `env` is added to every run's environment (a PATH of NO_KUBECTL, say); `spawn` runs every run as a process of its own. */
export async function cliHome(
  prefix = "nvkectl-test-",
  how: { env?: Record<string, string>; spawn?: boolean } = {},
): Promise<CliHome> {
  const dir = await tempDir(prefix);
  const env = {
    HOME: dir.path,
    XDG_CONFIG_HOME: join(dir.path, "config"),
    XDG_CACHE_HOME: join(dir.path, "cache"),
    ...how.env,
  };
  return {
    path: dir.path,
    env,
    tokenCacheDir: join(dir.path, "cache", "nvkectl", "tokens"),
    nvkectl: (args, options = {}) =>
      runCli("nvkectl", args, { spawn: how.spawn, ...options, cwd: dir.path, env: { ...env, ...options.env } }),
    cleanup: dir.cleanup,
  };
}

/**
 * The inputs of `nvkectl install` in `dir`: the example site spec (sitespec.yaml), the
 * example stack config with every REPLACE_* filled (stack.yaml), and the shipped deploy
 * path (path/).
 */
export async function writeInstallInputs(dir: string): Promise<void> {
  await cp(join(repoRoot, "examples/sitespec.yaml"), join(dir, "sitespec.yaml"));
  const filled = (await readFile(join(repoRoot, "examples/stack.yaml"), "utf8"))
    .replace("REPLACE_NICO_API_ENDPOINT", "https://nico.example.net/api")
    .replace("REPLACE_NICO_ORGANIZATION_ID", "org-1")
    .replace("REPLACE_NICO_API_NAME", "nvke")
    .replace("REPLACE_PROFILES_IMAGE", "registry.example.net/nvke/profiles:v1")
    .replace("REPLACE_PROVIDER_REPOSITORY_DIR", "./providers");
  await writeFile(join(dir, "stack.yaml"), filled);
  await cp(join(repoRoot, "deploy/nico"), join(dir, "path"), { recursive: true });
}

/**
 * `install` with the inputs writeInstallInputs writes (sitespec.yaml and stack.yaml; the deploy
 * path, path/, is left to the caller) and a kubeconfig that does not exist, or these others.
 */
export const installArgs = ({
  siteSpec = "sitespec.yaml",
  stackConfig = "stack.yaml",
  kubeconfig = "missing.kubeconfig",
} = {}) => ["install", "--sitespec", siteSpec, "--stack-config", stackConfig, "--kubeconfig", kubeconfig];

/** `kubectl --kubeconfig K ...args`, with stdin; rejects on a non-zero exit. */
export async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  // A timeout, so that no kubectl outlives the test that started it.
  const child = execFileAsync("kubectl", ["--kubeconfig", kubeconfig, ...args], { encoding: "utf8", timeout: 60_000 });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  const { stdout } = await child;
  return stdout;
}

/** `kubectl apply` of Kubernetes objects (as one v1 List). */
export const apply = (kubeconfig: string, ...objects: object[]) =>
  kubectl(kubeconfig, ["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));

/**
 * A Node.js --import hook that records every module under @kubernetes/client-node the
 * process resolves, in `logFile`: how a test proves a command never loaded it. The package
 * is bundled into a chunk of nvkectl's own (its build's metafile says which), so the chunks
 * that hold it count as it.
 */
export async function moduleLoadRecorder(dir: string): Promise<{ nodeOptions: string; logFile: string }> {
  const hook = join(dir, "record-client-node.mjs");
  const logFile = join(dir, "client-node-loads.log");
  const metafile = JSON.parse(await readFile(join(repoRoot, "apps/nvkectl/dist/metafile-esm.json"), "utf8")) as {
    outputs: Record<string, { inputs: Record<string, unknown> }>;
  };
  const chunks = Object.entries(metafile.outputs)
    .filter(([, output]) => Object.keys(output.inputs).some((input) => input.includes("/@kubernetes/client-node/")))
    .map(([path]) => `/apps/nvkectl/${path}`);
  await writeFile(
    hook,
    `import { appendFileSync } from "node:fs";
import { registerHooks } from "node:module";
registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context);
    if (result.url.includes("/@kubernetes/client-node/")) appendFileSync(${JSON.stringify(logFile)}, result.url + "\\n");
    else if (${JSON.stringify(chunks)}.some((c) => result.url.endsWith(c)))
      appendFileSync(${JSON.stringify(logFile)}, "@kubernetes/client-node, bundled in " + result.url + "\\n");
    return result;
  },
});
`,
  );
  await writeFile(logFile, "");
  return { nodeOptions: `--import=${hook}`, logFile };
}
