/**
 * docs/troubleshooting.md: every exit code and every error code, each with its cause and
 * its fix. Codes, exit codes and causes come from the tables (packages' src/errors.ts and
 * @nodekit/errors' exit codes); the fixes are written here. A code without a fix of its own
 * gets its exit code's, so a new code is never missing from the page — add a line to FIXES
 * when it deserves a specific one.
 */
import { type ErrorCode, ExitCode, type ExitCodeName, exitCodeDescriptions } from "@nodekit/errors";

/** What to do about an exit code in general: the fallback for its codes. */
const EXIT_FIXES: Record<ExitCodeName, string> = {
  Ok: "Nothing to fix.",
  CheckFailed:
    "Read the check's own message: it says what did not pass. Fix that, then run the command again; nothing is retried for you.",
  Usage:
    "Run the command with `--help` (or read [the command reference](commands/nvkectl.md)) and correct the command line.",
  InvalidInput:
    "Every problem is listed with its file, line and field: fix each one and run the command again. Nothing was written or sent.",
  NotFound:
    "Check the name (`nvkectl get …` lists what exists, `nvkectl config get-sites` the sites) and the file path, then run the command again.",
  Conflict: "Wait for what is in progress to finish (or undo the other change), then run the command again.",
  Unreachable:
    "Check that the service answers from this machine (URL, port, network policy, proxy), then run the command again; the message names the address it tried.",
  Unauthorized:
    "Check the identity the command used and the RBAC it has ([Configuring NVKE API Authentication](auth.md#the-rbac-a-site-admin-grants)); the message names the identity and what it lacks.",
  Rejected:
    "The service's own message says why it refused; change the request accordingly. Nothing was changed by the refused request.",
  Precondition: "Install or fix what the message names (a tool on PATH, a readable file), then run the command again.",
  Internal: "This is a bug: run the command again with `-v` and report the whole output.",
  UnknownCommand: "Check the spelling; the closest command is suggested. `nvkectl --help` lists every command.",
  Interrupted: "Run the command again (with `--resume` where it has one) to continue.",
  BrokenPipe: "Nothing to fix: the program reading the output (such as `head`) stopped reading.",
};

/** Fixes of individual codes, where more can be said than the exit code's. */
export const FIXES: Record<string, string> = {
  AUTH_CONFIG_FORBIDDEN:
    "Ask the site admin for `get` on the auth ConfigMap (`nvke-auth-config-reader` in [auth.md](auth.md#the-rbac-a-site-admin-grants)); the message names the ConfigMaps that were denied.",
  AUTH_CONFIG_INVALID:
    'Set `data.audience` of the ConfigMap to the audience the controller validates tokens for (`kubectl -n NAMESPACE patch configmap NAME --type merge -p \'{"data":{"audience":"…"}}\'`).',
  AUTH_SERVICE_ACCOUNT_NOT_FOUND:
    "The controller stack installs `nke-clients/nke-client`: install (or repair) the stack, or ask the site admin.",
  AUTH_TOKEN_EXPIRATION_INVALID: "Ask for a lifetime of 600 seconds or more, in whole seconds.",
  AUTH_TOKEN_FORBIDDEN:
    "Ask the site admin for `create` on `serviceaccounts/token` for `nke-client` (`nke-client-token-creator` in [auth.md](auth.md#the-rbac-a-site-admin-grants)).",
  AUTH_TOKEN_RESPONSE_INVALID:
    "The site cluster's API server answered the TokenRequest oddly: check its version and any proxy in front of it; run again with `-v`.",
  CLUSTER_DELETING: "The cluster is going away: wait until it is gone (`nvkectl get clusters`), then create it again.",
  CLUSTER_FAILED:
    "Read the controller's message (`nvkectl get clusters NAME -o wide`); fix its cause (release, provider, capacity), delete the cluster and create it again.",
  CLUSTER_NAME_INVALID:
    "Use lower-case letters, digits and `-`, at most 63 characters, starting and ending with a letter or digit.",
  CLUSTER_NOT_FOUND: "`nvkectl get clusters` lists the clusters of the active site; check the name and `--site`.",
  CLUSTERRELEASE_NOT_FOUND:
    "Publish it first (`nvkectl create clusterrelease -f FILE`), or name one that `nvkectl get clusterreleases` lists.",
  COMMAND_FAILED: "The program's last lines of output are shown: fix what they say, then run the command again.",
  CONFIG_INVALID:
    "Fix each problem listed (file, line, field) in the nvkectl config file, or remove the file to start from no sites; nvkectl never writes over a file it cannot read.",
  CONFIG_UNREADABLE: "Make the config file readable by you (`ls -l` it), or point `NVKECTL_CONFIG` at another file.",
  CONTROLLER_BAD_RESPONSE:
    "Something else answered at the site's `--url` (a proxy, an ingress's error page): check the URL with `nvkectl config get-sites` and what listens there.",
  CONTROLLER_ERROR:
    "The controller failed; its message is shown. Retry in a while; if it persists, look at the controller's logs on the site cluster. Nothing was changed unless the message says otherwise.",
  CONTROLLER_NOT_FOUND: "The object is gone or never existed on this site: list what exists with `nvkectl get …`.",
  CONTROLLER_REJECTED:
    "The controller's message says why (a name taken, no room in the pod CIDR, a last control-plane pool); change the request and send it again.",
  CONTROLLER_TIMEOUT:
    "The controller did not answer in time: check it is running and reachable, then retry; a create may have been applied, so check with `nvkectl get …` first.",
  CONTROLLER_UNAUTHORIZED:
    "The controller refused a freshly minted token too: check that the site's `--url` is this site's controller and that the auth ConfigMap's audience is the one it validates.",
  CONTROLLER_UNREACHABLE:
    "Check the site's `--url` (`nvkectl config get-sites`), that the controller runs, and that its NodePort (30080 by default) and the NetworkPolicy admit this machine.",
  HOSTS_FILE_NOT_FOUND: "Check the path given to `--hosts`.",
  HOSTS_FILE_UNREADABLE: "Make the hosts CSV readable by you (`ls -l` it).",
  INPUT_EMPTY: "The file holds no document: put one request in it.",
  INPUT_FILE_NOT_FOUND: "Check the path given to `-f` or `--patch-file`.",
  INPUT_FILE_UNREADABLE: "Make the file readable by you (`ls -l` it).",
  INPUT_INVALID:
    "Fix every problem listed (file, line, field path); the schemas are at `/api/docs` on the management plane and in [nvke-api.md](nvke-api.md).",
  INPUT_MULTIPLE_DOCUMENTS: "Put one request in each file, and run the command once for each.",
  INTERNAL: "A bug: run the command again with `-v` and report the whole output.",
  INVALID_DURATION: "Give a duration such as `90s`, `10m` or `1h30m`.",
  KUBE_API_REJECTED: "The API server's message says what it refused; fix the object or the request.",
  KUBE_API_UNAVAILABLE: "The API server is overloaded or restarting: retry in a while.",
  KUBE_COMMAND_FAILED: "kubectl, helm or clusterctl said why in its own message (shown): fix that, then run again.",
  KUBE_CREDENTIAL_PLUGIN_MISSING:
    "Install the exec credential plugin the kubeconfig's user names (the message says which) and put it on PATH.",
  KUBE_FORBIDDEN:
    "The identity lacks an RBAC grant: the message names it; ask the site admin ([auth.md](auth.md#the-rbac-a-site-admin-grants) lists what operators need).",
  KUBE_TOOL_MISSING: "Install kubectl (or helm, clusterctl, as the message says) and put it on PATH.",
  KUBE_TOOL_TOO_OLD: "Install the version the message names, or newer, and put it first on PATH.",
  KUBE_UNAUTHORIZED:
    "The kubeconfig's credentials were refused (expired, revoked, another cluster's): get a fresh kubeconfig from the site admin and `nvkectl config set-site NAME --kubeconfig FILE`.",
  KUBE_UNREACHABLE:
    "Check the kubeconfig's server address and that it answers from this machine (`kubectl --kubeconfig FILE get --raw /readyz`).",
  KUBECONFIG_INVALID:
    "Fix the kubeconfig (its current context must name a context, cluster and user it defines), or use another one.",
  KUBECONFIG_NOT_FOUND: "Check the kubeconfig path; `nvkectl config set-site NAME --kubeconfig FILE` changes a site's.",
  MACHINEIMAGE_NOT_FOUND:
    "Publish it first (`nvkectl create machineimage -f FILE`), or name one that `nvkectl get machineimages` lists.",
  NO_ACTIVE_SITE: "Make a site active (`nvkectl config use-site NAME`) or name one with `--site`.",
  NODEPOOL_NOT_FOUND:
    "`nvkectl get nodepools --cluster CLUSTER` lists the cluster's pools; pool names are unique within a cluster only, so check `--cluster`.",
  NODEPOOLRELEASE_NOT_FOUND:
    "Publish it first (`nvkectl create nodepoolrelease -f FILE`), or name one that `nvkectl get nodepoolreleases` lists.",
  OCI_AUTH_REFUSED:
    "Log in to the registry (docker or helm registry login) or check the credentials the message names.",
  OCI_CREDENTIALS_INVALID:
    "Fix the docker or helm registry config file the message names: it must be JSON with an `auths` map.",
  OCI_DIGEST_MISMATCH:
    "Do not use this content: the registry served something else than was asked for. Report it to the registry's owner.",
  OCI_INVALID_REFERENCE: "Write the reference as `registry/repository[:tag][@sha256:…]`.",
  OCI_NOT_FOUND: "Check the repository, tag or digest; the registry has no such thing.",
  OCI_REGISTRY_ERROR: "The registry's answer is shown: retry later, or report it to the registry's owner.",
  OCI_TLS_UNTRUSTED: "Trust the registry's CA on this machine, or check that the host name is the certificate's.",
  OCI_TOO_LARGE: "The content is larger than a release may be: check that the reference names what you meant.",
  OCI_UNREACHABLE: "Check the registry's address and that it answers from this machine.",
  OUTPUT_NOT_WRITTEN: "Check that the directory of `--output-file` exists and that you may write there.",
  RELEASE_ARTIFACT_MISSING:
    "The release is incomplete in this registry: copy the missing artifact (named in the message) or use another release.",
  RELEASE_DIGEST_MISMATCH: "Do not install this release: the registry served other content than it describes.",
  RELEASE_INVALID: "Fix every problem listed (line, field) in the release description, or ask its publisher.",
  RELEASE_NOT_A_RELEASE: "The reference names another kind of artifact: name the release's reference.",
  RELEASE_NOT_FOUND: "Check the release reference; the registry has no release under it.",
  RELEASE_POLICY_INVALID: "Fix every problem listed (line, field) in the policy file.",
  RELEASE_REGISTRY_AUTH_REFUSED: "Log in to the registry holding the release, or check the credentials used.",
  RELEASE_REGISTRY_UNREACHABLE: "Check the registry's address and that it answers from this machine.",
  RELEASE_SIGNATURE_INVALID: "Do not install this release: its signature does not verify.",
  RELEASE_UNSIGNED: "Ask the publisher for a signed release; verify refuses unsigned ones.",
  RELEASE_UNTRUSTED_SIGNER: "Add the signer to your policy if you trust it, or use a release signed by one you do.",
  REPLICAS_INVALID: "Give `--replicas` a whole number from 0 to 5000.",
  SITE_INVALID:
    "A site's name is a DNS label, its URL `http://` or `https://` without a user name, and its kubeconfig a file that exists ([sites.md](sites.md)).",
  SITE_NOT_FOUND: "`nvkectl config get-sites` lists the configured sites; add one with `nvkectl config set-site`.",
  SITESPEC_INVALID: "Fix every problem listed (row, line, column) in the hosts CSV ([sitespec.md](sitespec.md)).",
  TENANT_KUBECONFIG_EMPTY:
    "The cluster's kubeconfig Secret is damaged: look at the controller's logs, or delete and recreate the cluster.",
  TENANT_KUBECONFIG_NOT_FOUND:
    "The Secret appears when the cluster is Ready: wait for it (`nvkectl get clusters NAME --wait`), and check the name.",
  TOOL_NOT_FOUND: "Install the program the message names and put it on PATH.",
  USAGE: "Run the command with `--help` and correct the command line.",
  AGENT_NOT_FOUND: "Check the agent's name or id; `--name` creates the agent when none has that name.",
  DOWNLOAD_DIGEST_MISMATCH:
    "Do not install the file: it is not what the platform pinned. Run again (a corrupted download); if it persists, the artifact or its pin is wrong — tell the platform.",
  DOWNLOAD_FAILED:
    "Check that the download URL the pins name answers from this machine (proxy, firewall), then run again.",
  DOWNLOAD_TRUNCATED:
    "Run again; a connection that keeps dropping mid-download points at a proxy or an unstable network.",
  DOWNLOAD_WRITE_FAILED: "Free disk space, or make the target directory (`~/.nr/bin`) writable by you, then run again.",
  NODERINGS_BAD_RESPONSE:
    "Something else answered at the NodeRings API's address (a proxy's page): check the URL and what listens there.",
  NODERINGS_CONFLICT:
    "The NodeRings API's message says what conflicts (a name taken, a state in progress): use another name, or wait and run again.",
  NODERINGS_NO_TOKEN: "Give the NodeRings API token (`NR_API_TOKEN`, or nr's 0600 config file), then run again.",
  NODERINGS_NOT_FOUND:
    "The object is not in your NodeRings account: check its id, and the account the token belongs to.",
  NODERINGS_RATE_LIMITED: "Wait a while and run again; the API asks for fewer requests.",
  NODERINGS_REJECTED: "Fix each field the API's message names, then run again.",
  NODERINGS_SERVER_ERROR:
    "The NodeRings API failed: retry later; if it persists, report the request id in the message to NodeRings.",
  NODERINGS_TIMEOUT:
    "Check the network to the NodeRings API, then run again; reads and the agent's create are safe to repeat.",
  NODERINGS_UNAUTHORIZED:
    "Check the token (expired, revoked, another account) or ask for the permission the message names.",
  NODERINGS_UNREACHABLE: "Check the NodeRings API's URL and that it answers from this machine (DNS, proxy, firewall).",
  PEERING_FAILED:
    "Read NodeRings' message; fix what it names (the cluster's reachability, CIDRs), then run again with `--resume`.",
  PEERING_TIMEOUT:
    "The peering may still complete: run again with `--resume` to go on waiting, or check its state in NodeRings.",
  PINS_DIGEST_MISSING:
    "The platform's pins lack a digest for this architecture: tell the platform; nothing is downloaded unverified.",
  PINS_INVALID: "Fix each problem listed in the pins (the platform's or the local config defaults).",
  PINS_TOOL_MISSING:
    "The pins do not name a tool the command needs: update the local config defaults, or tell the platform.",
  WAIT_TIMEOUT:
    "The controller keeps working: look at the object (`nvkectl get clusters NAME -o wide`), and wait longer with `--timeout`.",
};

const exitName = (code: number): ExitCodeName =>
  (Object.keys(ExitCode) as ExitCodeName[]).find((name) => ExitCode[name] === code) ?? "Internal";
const cell = (text: string) => text.replaceAll("|", "\\|");
const anchor = (code: number, name: string) => `exit-${code}-${name.toLowerCase()}`;

/** The whole page, from the catalogue. */
export function troubleshootingReference(codes: readonly ErrorCode[]): string {
  const sections = (Object.keys(ExitCode) as ExitCodeName[]).map((name) => {
    const code = ExitCode[name];
    const own = codes.filter((entry) => exitName(entry.exitCode) === name);
    return [
      `## Exit ${code}: ${name}`,
      "",
      `**Cause:** ${exitCodeDescriptions[name]}`,
      "",
      `**Fix:** ${EXIT_FIXES[name]}`,
      "",
      ...(own.length === 0
        ? []
        : [
            "| code | area | cause | fix |",
            "|---|---|---|---|",
            ...own.map(
              (entry) =>
                `| \`${entry.code}\` | ${entry.area} | ${cell(entry.meaning)} | ${cell(FIXES[entry.code] ?? EXIT_FIXES[name])} |`,
            ),
            "",
          ]),
    ].join("\n");
  });
  const index = (Object.keys(ExitCode) as ExitCodeName[]).map(
    (name) => `[${ExitCode[name]}](#${anchor(ExitCode[name], name)})`,
  );
  return [
    "# Troubleshooting",
    "",
    "<!-- Generated by `./run pnpm docs:gen` from the exit-code and error-code tables and tooling/docs/troubleshooting.ts. Do not edit. -->",
    "",
    "Every failure of `nr` and `nvkectl` ends with a documented exit code, and names a permanent",
    "error code (with `-v` after the message, and as `code` in the final `--json-logs` record). Find",
    "the exit code below, then the error code: its cause and its fix. The error message itself says",
    "what happened, why and what to do next (`error:`, `why:`, `next:`); this page says the same in",
    `general. ${codes.length} error codes; exit codes: ${index.join(", ")}.`,
    "",
    "Before anything else:",
    "",
    "- run the command again with `-v`: it logs each HTTP request and each kubectl call, and the",
    "  auth decisions (`auth off`, `minted a token`), never a token;",
    "- `nvkectl config current-site` and `nvkectl config get-sites` say which site a command acts on;",
    "- on the [sandbox](end-to-end.md), `./run sandbox status` says what runs, and",
    "  `$NVKE_SANDBOX_DIR/emulator.log` has one line per controller request.",
    "",
    ...sections,
  ].join("\n");
}
