import { accessSync, constants } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { TestenvError } from "./errors.ts";
import { runProcess } from "./supervisor.ts";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** The programs the tests build from Go modules (or unpack from Debian's packages, or install from PyPI, or take from Go modules' sources), each set by its own ensure.sh into a cache. */
export type BinarySet = "kubernetes" | "registry" | "cloud-init" | "ansible" | "flux" | "argocd";

interface SetDefinition {
  /** What the test runner (tooling/testenv/src/isolate.ts) sets once it has the directory. */
  variable: string;
  script: string;
  required: readonly string[];
  what: string;
  howToProvide: readonly string[];
}

const SETS: Record<BinarySet, SetDefinition> = {
  kubernetes: {
    variable: "NODEKIT_TESTENV_BIN_DIR",
    script: join(repoRoot, "tooling/k8s-testbin/ensure.sh"),
    required: ["kube-apiserver", "etcd"],
    what: "the Kubernetes test binaries (kube-apiserver, etcd)",
    howToProvide: [
      "install Go (>= 1.24; https://go.dev/dl) and run `bash tooling/k8s-testbin/ensure.sh` once: it builds kube-apiserver, etcd, helm and clusterctl into ~/.cache/nodekit/k8s-testbin (20–40 min cold, then cached)",
      "or set KUBEBUILDER_ASSETS to a directory holding envtest's kube-apiserver and etcd (e.g. from `setup-envtest use -p path`) and put helm and clusterctl on PATH",
      "see docs/testing.md and tooling/k8s-testbin/README.md",
    ],
  },
  registry: {
    variable: "NODEKIT_REGISTRY_BIN_DIR",
    script: join(repoRoot, "tooling/registry-testbin/ensure.sh"),
    required: ["registry", "ggcr-registry"],
    what: "the OCI registries for the tests (registry, ggcr-registry)",
    howToProvide: [
      "install Go (>= 1.24) and run `bash tooling/registry-testbin/ensure.sh` once: it builds them into ~/.cache/nodekit/registry-testbin (about 4 min cold, then cached)",
      "or set NODEKIT_REGISTRY_BIN_DIR to a directory holding them",
    ],
  },
  "cloud-init": {
    variable: "NODEKIT_CLOUD_INIT_BIN_DIR",
    script: join(repoRoot, "tooling/cloud-init-testbin/ensure.sh"),
    required: ["cloud-init"],
    what: "cloud-init, for its schema check of the user-data nr prints",
    howToProvide: [
      "on Debian or Ubuntu run `bash tooling/cloud-init-testbin/ensure.sh` once: it downloads Debian's cloud-init package and its Python dependencies with apt-get download (no root) into ~/.cache/nodekit/cloud-init-testbin (under a minute, then cached)",
      "or set NODEKIT_CLOUD_INIT_BIN_DIR to a directory holding a cloud-init executable",
    ],
  },
  ansible: {
    variable: "NODEKIT_ANSIBLE_BIN_DIR",
    script: join(repoRoot, "tooling/ansible-testbin/ensure.sh"),
    required: ["ansible-playbook", "ansible-galaxy"],
    what: "ansible-core (ansible-playbook, ansible-galaxy), for the nodekit.nr collection's tests",
    howToProvide: [
      "run `bash tooling/ansible-testbin/ensure.sh` once: it installs the ansible-core that tooling/ansible-testbin/requirements.txt pins from PyPI into a virtual environment in ~/.cache/nodekit/ansible-testbin (under a minute, then cached); it needs Python >= 3.11 with venv (Debian's python3-venv)",
      "or set NODEKIT_ANSIBLE_BIN_DIR to a directory holding ansible-playbook and ansible-galaxy (ansible-core >= 2.16)",
    ],
  },
  flux: {
    variable: "NODEKIT_FLUX_BIN_DIR",
    script: join(repoRoot, "tooling/flux-testbin/ensure.sh"),
    // crds/ is a directory (searchable, so the executable check holds): Flux's CRD files.
    required: ["source-controller", "kustomize-controller", "crds"],
    what: "Flux's source-controller and kustomize-controller and their CRDs, to reconcile what install --emit flux writes",
    howToProvide: [
      "install Go 1.26 and run `bash tooling/flux-testbin/ensure.sh` once: it builds source-controller v1.9.0 and kustomize-controller v1.9.6 from their Go modules and copies their CRDs into ~/.cache/nodekit/flux-source-…/ (a few minutes cold, then cached)",
      "or set NODEKIT_FLUX_BIN_DIR to a directory holding source-controller, kustomize-controller and crds/ with Flux's CRD files",
    ],
  },
  argocd: {
    variable: "NODEKIT_ARGOCD_CRDS_DIR",
    script: join(repoRoot, "tooling/argocd-crds/ensure.sh"),
    // crds/ is a directory (searchable, so the executable check holds): Argo CD's Application and AppProject CRDs.
    required: ["crds"],
    what: "Argo CD's Application and AppProject CRDs, to validate what install --emit argocd writes",
    howToProvide: [
      "install Go and run `bash tooling/argocd-crds/ensure.sh` once: it takes the two CRDs from Argo CD's v3.1.8 Go module into ~/.cache/nodekit/argocd-crds-…/ (seconds, then cached)",
      "or set NODEKIT_ARGOCD_CRDS_DIR to a directory holding crds/ with application-crd.yaml and appproject-crd.yaml",
    ],
  },
};

/** The script that builds kube-apiserver, etcd, helm and clusterctl into a cache (tooling/k8s-testbin). */
export const ensureScript = SETS.kubernetes.script;

export interface BinariesOptions {
  /** This directory, checked, instead of the variable or ensure.sh. */
  binDir?: string;
  /** Where the runner's variable is read, and ensure.sh's environment (KUBEBUILDER_ASSETS, GOTOOLCHAIN …). Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Receives ensure.sh's progress lines (it may build for minutes on a cold cache). */
  log?: (line: string) => void;
  /** Another ensure script (tests). */
  script?: string;
}

/** ensure.sh runs once per process and script: its answer is kept (a failure is not). */
const ensured = new Map<string, Promise<string>>();

/**
 * The directory holding a set of Go-built test binaries: `binDir` when given; else the
 * directory the test runner hands on in its variable (`NODEKIT_TESTENV_BIN_DIR`,
 * `NODEKIT_REGISTRY_BIN_DIR`: `pnpm test` runs every ensure.sh before the tests, outside
 * their network namespace); else the last stdout line of the set's ensure.sh, which builds
 * them on first use and reuses its cache afterwards. Each way, the directory is checked for
 * the set's programs. Optional extras (cosign, oras; helm and clusterctl) are in the same
 * directory when they were built.
 */
export async function binaries(set: BinarySet, options: BinariesOptions = {}): Promise<string> {
  const definition = SETS[set];
  const env = options.env ?? process.env;
  const given = options.binDir ?? (env[definition.variable] || undefined);
  if (given !== undefined) {
    const missing = missingIn(given, definition.required);
    if (missing.length > 0) {
      const from = options.binDir === undefined ? `${definition.variable}=${given}` : given;
      throw new TestenvError(`${from} has no executable ${missing.join(" or ")}`, {
        why: `the tests need ${definition.what}`,
        next: [`point it at a directory holding ${definition.required.join(" and ")}`, ...definition.howToProvide],
      });
    }
    return given;
  }
  const script = options.script ?? definition.script;
  const key = `${script}\u0000${options.env === undefined ? "" : JSON.stringify(options.env)}`;
  let dir = ensured.get(key);
  if (dir === undefined) {
    dir = ensure(definition, script, env, options.log);
    ensured.set(key, dir);
    dir.catch(() => ensured.delete(key));
  }
  return dir;
}

async function ensure(
  definition: SetDefinition,
  script: string,
  env: NodeJS.ProcessEnv,
  log: ((line: string) => void) | undefined,
): Promise<string> {
  const { exitCode, stdout, stderr } = await runProcess("bash", [script], {
    env,
    timeoutMs: 0,
    ...(log === undefined ? {} : { onStderrLine: log }),
  });
  const binDir = stdout.trim().split("\n").at(-1)?.trim() ?? "";
  if (exitCode !== 0 || binDir === "") {
    const lastLines = stderr.trim().split("\n").slice(-15).join("\n");
    throw new TestenvError(`${definition.what} are not available`, {
      why: `\`bash ${script}\` exited with ${exitCode === null ? "a signal" : `code ${exitCode}`}${lastLines ? `:\n${lastLines}` : ""}`,
      next: [...definition.howToProvide],
    });
  }
  const missing = missingIn(binDir, definition.required);
  if (missing.length > 0) {
    throw new TestenvError(`${binDir} (printed by ${script}) has no executable ${missing.join(" or ")}`, {
      next: [...definition.howToProvide],
    });
  }
  return binDir;
}

function missingIn(binDir: string, names: readonly string[]): string[] {
  return names.filter((name) => {
    try {
      accessSync(join(binDir, name), constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
}
