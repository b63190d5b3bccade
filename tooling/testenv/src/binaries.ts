import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { TestenvError } from "./errors.ts";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** The script that builds kube-apiserver, etcd, helm and clusterctl into a cache (tooling/k8s-testbin). */
export const ensureScript = join(repoRoot, "tooling/k8s-testbin/ensure.sh");

const howToProvide = [
  "install Go (>= 1.24; https://go.dev/dl) and run `bash tooling/k8s-testbin/ensure.sh` once: it builds kube-apiserver, etcd, helm and clusterctl into ~/.cache/nodekit/k8s-testbin (20–40 min cold, then cached)",
  "or set KUBEBUILDER_ASSETS to a directory holding envtest's kube-apiserver and etcd (e.g. from `setup-envtest use -p path`) and put helm and clusterctl on PATH",
  "see docs/testing.md and tooling/k8s-testbin/README.md",
];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function missingIn(binDir: string, names: readonly string[]): string[] {
  return names.filter((name) => !isExecutable(join(binDir, name)));
}

export interface ResolveBinDirOptions {
  /** Use this directory instead of running ensure.sh. */
  binDir?: string;
  /** Environment for ensure.sh (KUBEBUILDER_ASSETS, NODEKIT_TESTBIN_DIR, GOTOOLCHAIN …). */
  env?: NodeJS.ProcessEnv;
  /** Receives ensure.sh's progress lines (it may build for a long time on a cold cache). */
  log?: (line: string) => void;
  script?: string;
}

/**
 * The directory holding kube-apiserver and etcd (and helm, clusterctl): `binDir` when
 * given, else the last stdout line of tooling/k8s-testbin/ensure.sh, which builds the
 * binaries on first use and reuses its cache afterwards.
 */
export async function resolveBinDir(options: ResolveBinDirOptions = {}): Promise<string> {
  const required = ["kube-apiserver", "etcd"] as const;
  if (options.binDir !== undefined) {
    const missing = missingIn(options.binDir, required);
    if (missing.length > 0) {
      throw new TestenvError(`${options.binDir} has no executable ${missing.join(" or ")}`, {
        why: "the control plane needs kube-apiserver and etcd binaries",
        next: ["point binDir (or --bin-dir) at a directory holding both", ...howToProvide],
      });
    }
    return options.binDir;
  }
  const script = options.script ?? ensureScript;
  const { exitCode, stdout, stderr } = await runEnsure(script, options);
  const binDir = stdout.trim().split("\n").at(-1)?.trim() ?? "";
  if (exitCode !== 0 || binDir === "") {
    const tail = stderr.trim().split("\n").slice(-15).join("\n");
    throw new TestenvError("the Kubernetes test binaries (kube-apiserver, etcd) are not available", {
      why: `\`bash ${script}\` exited with ${exitCode === null ? "a signal" : `code ${exitCode}`}${tail ? `:\n${tail}` : ""}`,
      next: howToProvide,
    });
  }
  const missing = missingIn(binDir, required);
  if (missing.length > 0) {
    throw new TestenvError(`${binDir} (printed by ensure.sh) has no executable ${missing.join(" or ")}`, {
      next: howToProvide,
    });
  }
  return binDir;
}

function runEnsure(
  script: string,
  options: ResolveBinDirOptions,
): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn("bash", [script], { env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let partial = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) options.log?.(line);
    });
    child.on("error", (error) => resolvePromise({ exitCode: 127, stdout, stderr: `${stderr}${error.message}` }));
    child.on("close", (exitCode) => {
      if (partial) options.log?.(partial);
      resolvePromise({ exitCode, stdout, stderr });
    });
  });
}
