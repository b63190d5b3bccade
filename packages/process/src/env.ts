/** The Go runtime's memory and CPU settings, which every child inherits (see INHERITED_ENV). */
export const GO_RUNTIME_ENV: readonly string[] = ["GOGC", "GOMEMLIMIT", "GOMAXPROCS"];

/**
 * What every program the runner starts receives of the parent's environment, and nothing
 * more: a CLI's environment holds its secrets (an API token, a registry password, the
 * Proxmox and NICo keys), and a child (a downloaded installer run as root, a helm plugin, a
 * kubeconfig's exec plugin) has no business with them. A call adds what it needs: values
 * in `env`, and names of the parent's variables in `inheritEnv`.
 *
 * Why each is passed:
 * - PATH: the program's own helpers (kubectl's exec plugins, kind's nerdctl, the k3s
 *   installer's curl, sha256sum, systemctl).
 * - HOME, USER, LOGNAME: where a program keeps its files and whose they are (kubectl's
 *   ~/.kube/cache, an exec plugin's ~/.aws or ~/.config/gcloud); helm and clusterctl get
 *   a HOME of their own from their call.
 * - KUBECACHEDIR: where kubectl keeps its discovery and HTTP caches instead of
 *   ~/.kube/cache (kubectl's --cache-dir reads it), as it does in the operator's shell.
 * - LANG, LANGUAGE, LC_*, TZ: how messages, text and times are written.
 * - TMPDIR: where temporary files go.
 * - XDG_*: the base directories (rootless nerdctl needs XDG_RUNTIME_DIR).
 * - HTTP(S)_PROXY, NO_PROXY, ALL_PROXY, in either case: the way out of the network, which
 *   Go's net/http, curl and the k3s installer (it copies them into k3s's service
 *   environment) all read.
 * - SSL_CERT_FILE, SSL_CERT_DIR: a private certificate authority for Go programs.
 * - GOGC, GOMEMLIMIT, GOMAXPROCS: the Go runtime's memory and CPU settings, which kubectl,
 *   helm, clusterctl, kind and liqoctl read, as they do in the operator's shell (a VM with
 *   little memory sets GOMEMLIMIT; a shared machine, GOMAXPROCS).
 *
 * KUBECONFIG is not passed: every kubectl, helm and clusterctl call names its kubeconfig,
 * and a program that does not must not reach a cluster by accident. HELM_* and
 * CLUSTERCTL_* are not passed either: HELM_KUBETOKEN or HELM_KUBEAPISERVER would point helm
 * at another cluster; a helm or clusterctl call sets the ones it needs.
 */
export const INHERITED_ENV: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "KUBECACHEDIR",
  "LANG",
  "LANGUAGE",
  "LC_*",
  "TZ",
  "TMPDIR",
  "XDG_*",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  ...GO_RUNTIME_ENV,
];

/** Whether `name` matches one of `patterns`: a name exactly, or a prefix written `PREFIX*`. */
export function matchesEnvName(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => (pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : name === pattern));
}

/**
 * The environment a child gets: the parent's variables that {@link INHERITED_ENV} or the
 * call's `inheritEnv` name (when set), then the call's own `env` values over them.
 */
export function childEnv(
  parent: Readonly<Record<string, string | undefined>>,
  call: { env?: Readonly<Record<string, string>> | undefined; inheritEnv?: readonly string[] | undefined },
): Record<string, string> {
  const patterns = call.inheritEnv === undefined ? INHERITED_ENV : [...INHERITED_ENV, ...call.inheritEnv];
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && matchesEnvName(name, patterns)) env[name] = value;
  }
  return { ...env, ...call.env };
}
