/**
 * docs/troubleshooting.md: every exit code and every error code, each with its cause and
 * its fix. Codes, exit codes and causes come from the tables (packages' src/errors.ts and
 * @nodekit/errors' exit codes); the fixes are written here, one for every code (a test holds
 * FIXES to the catalogue, so a new code fails the suite until its fix is written). The exit
 * code's own fix is what a section opens with.
 */
import { type ErrorCode, ExitCode, type ExitCodeName, exitCodeDescriptions } from "@nodekit/errors";

/** What to do about an exit code in general: the fallback for its codes. */
const EXIT_FIXES: Record<ExitCodeName, string> = {
  Ok: "Nothing to fix.",
  CheckFailed:
    "Read the check's own message: it says what did not pass. Fix that, then run the command again; nothing is retried for you.",
  Usage:
    "Run the command with `--help` (or read the command reference: [nvkectl](commands/nvkectl.md), [nr](commands/nr.md)) and correct the command line.",
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
  UnknownCommand:
    "Check the spelling; the closest command is suggested. `nvkectl --help` and `nr --help` list every command.",
  Interrupted: "Run the command again (with `--resume` where it has one, as `nr cluster register` does) to continue.",
  BrokenPipe: "Nothing to fix: the program reading the output (such as `head`) stopped reading.",
  Terminated:
    "Run the command again (with `--resume` where it has one, as `nr cluster register` does) to continue; whatever sent SIGTERM (systemd, a CI timeout) may need more time allowed.",
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
  INPUT_TOO_LARGE:
    "Check that the file (or what is piped to standard input) is the one you meant: no document the CLIs read comes near 8 MiB, and a device or a pipe that never ends is none.",
  INTERNAL: "A bug: run the command again with `-v` and report the whole output.",
  INVALID_DURATION: "Give a duration such as `90s`, `10m` or `1h30m`.",
  KUBE_API_REJECTED: "The API server's message says what it refused; fix the object or the request.",
  KUBE_API_UNAVAILABLE: "The API server is overloaded or restarting: retry in a while.",
  KUBE_COMMAND_FAILED: "kubectl, helm or clusterctl said why in its own message (shown): fix that, then run again.",
  KUBE_CREDENTIAL_PLUGIN_MISSING:
    "Install the exec credential plugin the kubeconfig's user names (the message says which) and put it on PATH.",
  KUBE_FORBIDDEN:
    "The identity lacks an RBAC grant: the message names it; ask the site admin ([auth.md](auth.md#the-rbac-a-site-admin-grants) lists what operators need).",
  KUBE_REGISTRY_UNAUTHORIZED:
    "Give helm the registry's credentials: NODEKIT_REGISTRY_USERNAME and NODEKIT_REGISTRY_PASSWORD for nvkectl install, or helm registry login (docker login); check the user may pull the charts' repositories.",
  KUBE_TOOL_MISSING: "Install kubectl (or helm, clusterctl, as the message says) and put it on PATH.",
  KUBE_TOOL_TOO_OLD: "Install the version the message names, or newer, and put it first on PATH.",
  KUBE_UNAUTHORIZED:
    "The kubeconfig's credentials were refused (expired, revoked, another cluster's): get a fresh kubeconfig from the site admin and `nvkectl config set-site NAME --kubeconfig FILE`.",
  KUBE_UNREACHABLE:
    "Check the kubeconfig's server address and that it answers from this machine (`kubectl --kubeconfig FILE get --raw /readyz`).",
  KUBECONFIG_INVALID:
    "Fix the kubeconfig (its current context must name a context, cluster and user it defines), or use another one.",
  KUBE_CONTEXT_NOT_FOUND:
    "Name a context the kubeconfig defines (`kubectl config get-contexts` lists them; the message names them and the files read), or leave `--context` out.",
  KUBECONFIG_NOT_FOUND: "Check the kubeconfig path; `nvkectl config set-site NAME --kubeconfig FILE` changes a site's.",
  MACHINEIMAGE_NOT_FOUND:
    "Publish it first (`nvkectl create machineimage -f FILE`), or name one that `nvkectl get machineimages` lists.",
  NO_ACTIVE_SITE: "Make a site active (`nvkectl config use-site NAME`) or name one with `--site`.",
  NO_SITES_CONFIGURED:
    "Add the sites first (`nvkectl config set-site NAME --url URL --kubeconfig FILE`); `nvkectl config get-sites` lists them ([sites.md](sites.md#one-view-across-sites)).",
  SOME_SITES_FAILED:
    "Each site that did not answer is named above with its own error and fix: ask it alone (`nvkectl get … --site NAME -v`), or remove a site you retired (`nvkectl config delete-site NAME`). The rows printed are the other sites' ([sites.md](sites.md#one-view-across-sites)).",
  FLUX_EMIT_USAGE:
    "Give the directory to write and where you push the artifacts: `nvkectl install --emit flux DIR --flux-repository oci://HOST/PATH …` ([gitops.md](gitops.md)).",
  ARGOCD_EMIT_USAGE:
    "Give the directory to write and where you push the artifacts: `nvkectl install --emit argocd DIR --argocd-repository oci://HOST/PATH …` ([gitops.md](gitops.md#argo-cd)).",
  FLUX_EMIT_RENDER_FAILED:
    "The message names the item and the document: fix the chart's values or the manifest file so that every document is an object with apiVersion, kind and metadata.name ([gitops.md](gitops.md)).",
  FLUX_TREE_HOLDS_SECRET:
    "Turn the Secret off in the item's `overlay.yaml` (the chart's values) and create it on the site yourself, as the NICo key's Secrets are ([gitops.md](gitops.md#secrets)).",
  FLUX_SIGN_KEY_UNUSABLE:
    "Give the private key whose public half your Flux trusts, as an unencrypted PEM (ECDSA P-256, PKCS#8 or SEC1): `openssl ec -in KEY -out plain.pem` removes a passphrase; the public half goes into `--flux-verify-secret` ([gitops.md](gitops.md#signatures)).",
  FLUX_EMIT_DIR_NOT_EMPTY:
    "Name an empty or new directory, or one an earlier run of the same `--emit` wrote (it holds only `flux/` and `oci/`, or `argocd/` and `oci/`, and is replaced whole).",
  SUPPORT_BUNDLE_EXISTS:
    "Name a new file with `--output FILE`, or move the old bundle away first; nvkectl never writes over a bundle (it may be one support asked for) ([install.md](install.md#support-bundle)).",
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
  OCI_MANIFEST_INVALID:
    "Do not use the artifact: the manifest the registry serves is malformed. Ask its publisher to push it again; the message names each field at fault.",
  OCI_INVALID_REFERENCE: "Write the reference as `registry/repository[:tag][@sha256:…]`.",
  OCI_NOT_FOUND: "Check the repository, tag or digest; the registry has no such thing.",
  OCI_REGISTRY_ERROR: "The registry's answer is shown: retry later, or report it to the registry's owner.",
  OCI_REGISTRY_UNAVAILABLE:
    "The registry is busy or failing (429, 5xx), also after the retries each read gets: try again later; the message quotes what the registry said.",
  OCI_TLS_UNTRUSTED: "Trust the registry's CA on this machine, or check that the host name is the certificate's.",
  OCI_TOKEN_REALM_REFUSED:
    "If the host the message names is the registry's own token service (Docker Hub's `auth.docker.io`), allow it with `--allow-token-realm HOST`; otherwise do not: the registry's answers may have been tampered with.",
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
  RELEASE_POLICY_UNMET:
    "Do not install this release: ask its publisher for one signed with the timestamp (or log entry) your policy requires.",
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
  DOWNLOAD_TOO_LARGE:
    "The pinned URL serves far more than a tool is: check the pin's URL with the platform; if the file really is that large, its pin should name its size.",
  DOWNLOAD_TRUNCATED:
    "Run again; a connection that keeps dropping mid-download points at a proxy or an unstable network.",
  DOWNLOAD_WRITE_FAILED: "Free disk space, or make the target directory (`~/.nr/bin`) writable by you, then run again.",
  NODERINGS_BAD_RESPONSE:
    "Something else answered at the NodeRings API's address (a proxy's page): check the URL and what listens there.",
  NODERINGS_REDIRECTED:
    "Check the NodeRings API URL (`--api-url`, `NR_API_URL`): it points at something that redirects elsewhere (a proxy or a login page).",
  NODERINGS_RESPONSE_TOO_LARGE:
    "Something other than the NodeRings API answered with a huge body: check the API URL and this machine's proxy settings.",
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
  PLAN_ITEM_UNKNOWN: "Give `--from-item` one of the items the message lists (the plan's own item names).",
  PLAN_STEP_FAILED:
    "Read the failed call's output in the message and fix its cause, then run again with `--from-item` and the item named: the items before it are done.",
  PINS_DIGEST_MISSING:
    "The platform's pins lack a digest for this architecture: tell the platform; nothing is downloaded unverified.",
  PINS_INVALID: "Fix each problem listed in the pins (the platform's or the local config defaults).",
  PINS_TOOL_MISSING:
    "The pins do not name a tool the command needs: update the local config defaults, or tell the platform.",
  API_SERVER_URL_UNKNOWN:
    "Give `--api-server-url https://ADDRESS:6443` with an address of this machine that NodeRings reaches (Liqo refuses localhost), or give the machine a default route.",
  AGENT_OTHER_MACHINE:
    "Register this machine under another `--name`; when it replaces the machine that registered the agent, remove the agent in NodeRings first ([registration.md](registration.md#phases)).",
  AGENT_IDENTITY_CHANGED:
    "This machine is registered as another agent (`nr cluster status` names it): run with that `--name` or `--agent-id`, or start over with `--restart` to register it as the new one.",
  AGENT_IDENTITY_MISSING:
    "Name the agent: `--name NAME` creates it (or reuses the one with that name), `--agent-id ID` reuses an existing one.",
  HOST_FACTS_UNREADABLE:
    "Make `/etc/os-release` and `/proc` readable to the user running nr (run it as root on the VM), then run again.",
  K3S_INSTALLER_MISSING:
    "Put the official k3s installer, checked, on PATH as `k3s-install.sh` (chmod +x), or use pins that name a `k3s-install` download with its sha256.",
  NETWORK_PLAN_CHANGED:
    "Leave `--pod-cidr`/`--service-cidr` out (the ranges k3s was installed with are used; `nr cluster status` shows them), or remove k3s (`k3s-uninstall.sh`) before registering again with `--restart`.",
  NETWORK_PLAN_INVALID:
    "Give `--pod-cidr` and `--service-cidr` as IPv4 CIDRs that do not overlap (the defaults are 10.42.0.0/16 and 10.43.0.0/16).",
  NR_API_URL_MISSING:
    "Give the NodeRings API's URL with `--api-url`, `NR_API_URL`, or `apiUrl` in `~/.nr/config.yaml`; nr never guesses it.",
  CLOUD_INIT_INPUT_INVALID:
    "Give each input the message lists: `--nr-url` and `--nr-sha256` (the release's executable and its SHA-256), `--api-token-file` and `--proxmox-credentials` as absolute paths on the VM, `--api-url`, and `--name` or `--agent-id` ([fleets.md](fleets.md)).",
  API_TOKEN_FILE_INVALID:
    "Put the token on the first line of the file the message names, mode 0600 and owned by the user running nr (`chmod 600 FILE`); a file others could read means the token is exposed: rotate it.",
  NR_CONFIG_INSECURE:
    "`chmod 600 ~/.nr/config.yaml` (the path the message names): a file holding the token must be yours alone.",
  NR_CONFIG_INVALID:
    "Fix each problem listed (line, field) in `~/.nr/config.yaml`; its keys are `apiUrl`, `token` and `pins` ([registration.md](registration.md#versions)).",
  OFFLOAD_NAMESPACE_INVALID:
    "Name each `--offload-namespace` as a Kubernetes namespace: lower-case letters, digits and `-`, at most 63 characters.",
  OFFLOAD_NAMESPACE_UNSAFE:
    "Leave that namespace out of `--offload-namespace`: Liqo would copy its Secrets (the Proxmox credentials, for `proxmox-operator`) into NodeRings' cluster ([registration.md](registration.md#what-noderings-can-and-cannot-do)).",
  OFFLOAD_NAMESPACE_REFUSED:
    "NodeRings' message says why (a reserved name, too many namespaces): leave that `--offload-namespace` out, then run again with `--resume`.",
  PHASE_OUTPUT_MISSING:
    "Run the earlier phase the message names (drop it from `--skip-phases`, or `--from-phase` it), then the one that needs it.",
  PHASE_PREREQUISITE_MISSING:
    "Run the phases before it first (`nr cluster register --resume` runs what is left in order); `nr cluster status` shows which are done.",
  PHASE_SELECTION_CONFLICT:
    "Choose either `--from-phase` or `--only-phase`, and do not skip the phase you chose; `nr cluster register --help` lists the phase ids.",
  PHASE_UNKNOWN:
    "Use one of the phase ids the message lists (also in [registration.md](registration.md#phases) and `nr cluster register --help`).",
  PRECHECK_UNKNOWN:
    "Name a check as a failed precheck names it (`os`, `kernel`, `init`, `kubectl`, `port-179-tcp`, …): see [registration.md](registration.md#phases).",
  PRECHECKS_FAILED:
    "Each failed check says what was found, what is required and how to fix it: fix them all and run again; `--ignore-precheck NAME` lets one you checked yourself pass (reported, recorded), `--skip-prechecks` skips them all (recorded in the state).",
  PROXMOX_CREDENTIALS_INVALID:
    "Fix each problem listed: the credentials need `url`, `tokenId` (`user@realm!name`) and `tokenSecret` ([registration.md](registration.md#proxmox-credentials)).",
  PROXMOX_CREDENTIALS_MISSING:
    "Give them with `--proxmox-credentials FILE` (`-` for standard input), the `NR_PROXMOX_*` variables or the prompt on a terminal; or `--skip-operator-install` to install the operator later.",
  RESET_NOTHING_RECORDED:
    "Nothing to reset on this machine: `nr cluster status` shows what is recorded. If the state was moved, run the reset with the `NR_HOME` that holds it.",
  RESET_TOOL_MISSING:
    "Put the tool the message names on PATH (or in `~/.nr/bin`) at the installed version (`nr cluster status` shows the versions), then `nr cluster reset` again: it continues where it stopped.",
  LIVE_CHECK_FAILED:
    "Fix what each failed check names (a node NotReady, Calico or Liqo pods not ready, a peering not Established), then `nr cluster status --live` again; `nr cluster register --resume` re-runs only what the evidence says is gone.",
  BUNDLE_EXISTS: "Give another file with `--output`, or move the existing bundle away, then run it again.",
  UPGRADE_NOTHING_REGISTERED:
    "Register the machine first (`nr cluster register --name NAME`): it installs the current pins. If the state was moved, run the upgrade with the `NR_HOME` that holds it.",
  UPGRADE_REGISTRATION_INCOMPLETE:
    "Finish the registration with `nr cluster register --resume` (it installs the new pins' versions where it runs), then `nr cluster upgrade`.",
  UPGRADE_DOWNGRADE:
    "Ask NodeRings for the pins this machine should run: nr never moves a component back. `nr cluster upgrade --plan` shows each component's installed and pinned version.",
  UPGRADE_K3S_MINOR_SKIP:
    "Upgrade through each k3s minor in turn (v1.33 → v1.34 → v1.35), with pins for each step ([registration.md](registration.md#upgrade)).",
  UPGRADE_LIQOCTL_MISMATCH: "The pin set is inconsistent (liqoctl must be Liqo's version): report it to NodeRings.",
  UPGRADE_LIQO_PEERING_SKEW:
    "Wait until NodeRings runs the new Liqo minor, then `nr cluster upgrade` again; or move now with `nr cluster reset` and `nr cluster register` (a new peering at the new version) ([registration.md](registration.md#upgrade)).",
  UPGRADE_VERSION_UNREADABLE:
    "`nr cluster status` shows the versions the state records: fix a hand-edited one, or report pins that name no version.",
  UPGRADE_INPUTS_CHANGED:
    "Give `nr cluster upgrade` the registration's own `--api-server-url`, `--calico-manifests` and `--operator-chart`; to apply new settings, use `nr cluster register --resume`.",
  UPGRADE_REFUSED:
    "Read each refusal listed: pick a release (or deploy path) that moves every item forward and every Cluster API provider one contract at a time (`nvkectl upgrade plan` shows it, and changes nothing), then `nvkectl upgrade apply` again ([install.md](install.md#upgrade)).",
  UPGRADE_SITE_DRIFTED:
    "Someone changed the site since the install: put back what is listed (re-run `nvkectl install` with the recorded release to restore it), or, if the change was meant, record it with an install run, then `nvkectl upgrade plan` and `nvkectl upgrade apply` again ([install.md](install.md#upgrade)).",
  INSTALL_RECORD_NOT_FOUND:
    "Check the site (`nvkectl config current-site`) and the kubeconfig: the record is read from the site cluster. A site installed by an nvkectl older than the record needs one `nvkectl install` run to write it.",
  UNINSTALL_TENANT_CLUSTERS_EXIST:
    "Delete the tenant clusters the message names (`nvkectl delete cluster NAME`) and wait for them to go, or pass `--force` to uninstall anyway and leave them unmanaged.",
  RELEASE_ARTIFACT_CORRUPT:
    "The registry's copy of the named artifact was changed: publish the release again (or restore the registry from a copy you trust), then `nvkectl release verify` before you install from it.",
  RUN_INTERRUPTED: "Run `nr cluster register --resume`: completed phases are re-checked, not redone.",
  RUN_TERMINATED:
    "Run `nr cluster register --resume`: completed phases are re-checked, not redone; the lock was released.",
  RUN_LOCK_COMPROMISED:
    "Make sure no other nr run is in progress on this machine (`nr cluster status`), then `nr cluster register --resume`.",
  RUN_LOCK_STALE:
    "When no other nr runs on this machine, remove the lock the message names, or `nr cluster register --resume --break-lock`.",
  RUN_LOCKED: "Wait for the other run to finish (`nr cluster status` shows its progress), or stop it, then run again.",
  RUN_STATE_EXISTS:
    "Continue the earlier run with `nr cluster register --resume`, or run every phase again with `--restart`; `nr cluster status` shows where it stopped.",
  RUN_STATE_INVALID:
    "Fix the lines listed in the state file (`~/.nr/state.json`), or move it away to start over: the agent is found again by its name and every phase runs again ([nr-state.md](nr-state.md#recovering-from-a-bad-state-file)).",
  RUN_STATE_UNREADABLE:
    "Make the state file (`~/.nr/state.json`, or `$NR_HOME/state.json`) a file you can read, or run as the user that owns it.",
  RUN_STATE_UNSAFE:
    "The message says what is wrong with the state file: `chmod 600` it when only its mode is, or remove a link or a file that is not yours (every phase then runs again, each is safe to run again) ([nr-state.md](nr-state.md#who-may-change-it)).",
  RUN_STATE_WRITE_FAILED:
    "Free disk space, or make `~/.nr` writable, then `nr cluster register --resume`: the phase's work is re-checked and recorded.",
  SECRET_ON_COMMAND_LINE:
    "Pass the secret in a file, on standard input or in the environment (`--proxmox-credentials FILE`, `NR_PROXMOX_TOKEN_SECRET`); clear it from your shell history.",
  TOOL_INSTALL_FAILED:
    "The message says what the tool answered: check that `~/.nr/bin` is on a file system that may run programs (not `noexec`) and the pinned version for this architecture, then run again.",
  VERIFY_FAILED:
    "Each failed check is listed: fix it, then `nr cluster register --resume --only-phase verify` runs the gate again.",
  BOOTSTRAP_PREREQUISITES_MISSING:
    "Install each tool the message lists at (at least) the version it names — nerdctl on the host and containerd running (`systemctl start containerd`); kind, helm, kubectl and clusterctl on PATH — then run `site bootstrap` again; `--dry-run` checks without changing anything.",
  BOOTSTRAP_API_SERVER_ADDRESS_INVALID:
    "Name this host's IP address on the site's network with `--api-server-address IP` (not `0.0.0.0`: the API server's certificate and the kubeconfig name it).",
  DEPLOY_PATH_INVALID:
    "Fix each problem listed (file, line, field) in `nvke-deploy.yaml` or its item directories ([deploy-path.md](deploy-path.md)); nothing was applied.",
  HOSTS_UNREACHABLE:
    "Check that nvke-agent runs on each host named and listens on its port, that the site spec's `ip` is right, and that no firewall blocks the path; then run again.",
  IMAGE_NOT_CONFIGURED:
    "Set `images.profiles` in the stack config — one multi-architecture reference, or one for the nodes' architecture ([deploy/README.md](../deploy/README.md)).",
  INSTALL_WORK_DIR_UNUSABLE:
    "Name a directory with `--work-dir` (it is created 0700 when missing), or remove what is in the way of the default one.",
  INSTALL_DEPLOY_PATH_UNUSABLE:
    "Add `spec.clusterAPI` (version, certManager, infrastructure) to `nvke-deploy.yaml`, or rename the item whose name the install keeps for its own steps ([deploy-path.md](deploy-path.md)).",
  NODE_ARCHITECTURE_MIXED:
    "Install on a site cluster whose nodes are all amd64 or all arm64: the message lists the nodes of each; move the odd ones out of the site cluster.",
  NODE_ARCHITECTURE_UNKNOWN:
    "Check that the kubeconfig names the site cluster and that its nodes have joined (`kubectl get nodes -L kubernetes.io/arch`); the stack has images for amd64 and arm64.",
  INSTALL_CONTROLLER_API_MISMATCH:
    "Make the stack config's `controllerApi.namespace` the namespace of the deploy path's controller item (or leave it out), and leave `app.kubernetes.io/name` out of `controllerApi.podSelector`.",
  INSTALL_PREREQUISITES_MISSING:
    "Install each tool the message lists at the version it names (clusterctl of the Cluster API series the deploy path pins), on PATH, then run the install again; nothing was changed.",
  PROVIDER_REPOSITORY_INCOMPLETE:
    "Lay out the provider repository the stack config names as `{provider}/{version}/{components, metadata.yaml}` and `cert-manager/{version}/cert-manager.yaml`, with every file the message lists.",
  PROVIDER_VERSION_MISMATCH:
    "Upgrade the installed provider with `clusterctl upgrade`, or pin the installed version in the deploy path's `spec.clusterAPI`; the install never upgrades a provider itself.",
  SITE_SPEC_FILE_INVALID:
    "Fix each problem listed (line, field) in the site spec ([sitespec.md](sitespec.md)), or generate it again from the hosts CSV.",
  SITE_SPEC_UNREADABLE:
    "Check the path given to `--sitespec` and that the file is readable; `sitespec generate` writes one.",
  STACK_CONFIG_INVALID:
    "Fix each problem listed (line, key) in the stack config; its keys are in [deploy/README.md](../deploy/README.md), and [examples/stack.yaml](../examples/stack.yaml) is a starting point.",
  STACK_CONFIG_NOT_FOUND:
    "Check the path given to `--stack-config`; copy [examples/stack.yaml](../examples/stack.yaml) beside the site spec to start one.",
  STACK_CONFIG_UNFILLED:
    "Replace every `REPLACE_*` value listed (by key path) with the site's own ([deploy/README.md](../deploy/README.md) says what each key means); nothing was changed.",
  STACK_CREDENTIAL_MISSING:
    "Export the variable the message names (the stack config's `nico.apiKeyFromEnv`, default `NVKE_NICO_API_KEY`) with the NICo API key from your secret store, then run again.",
  CONTROLLER_CONFLICT:
    "The controller's message says what conflicts (a name in use, an object being deleted): look at the object (`nvkectl get …`), wait for a deletion to finish or choose another name, then run again.",
  EXPLAIN_FIELD_NOT_FOUND:
    "Use one of the fields the message lists at that level (`nvkectl explain KIND` shows the top level), with dots between levels.",
  EXPLAIN_KIND_UNKNOWN:
    "Use one of the kinds the message lists (`nvkectl explain --help` names them all: the kinds `get` prints and the request documents).",
  NODEPOOL_DELETING:
    "The pool is going away: wait until it is gone (`nvkectl get nodepools --cluster CLUSTER`), then create it again.",
  NODEPOOL_FAILED:
    "Read the controller's message on the pool (`nvkectl get nodepools NAME --cluster CLUSTER -o yaml`), fix its cause (the release, the cluster's state), then delete and create the pool again.",
  PROVIDER_NOT_FOUND: "Name one of the providers the message lists; `nvkectl get providers` shows them all.",
  UNKNOWN_COMMAND:
    "Check the spelling; the closest commands are suggested. `nvkectl --help` and `nr --help` list every command.",
  WAIT_TIMEOUT:
    "The controller keeps working: look at the object (`nvkectl get clusters NAME -o wide`), and wait longer with `--timeout`.",
  CA_FILE_INVALID:
    "Point `--certificate-authority` at a readable PEM file holding the certificate authority (`-----BEGIN CERTIFICATE-----`) that signed the controller's certificate.",
  CA_FILE_NOT_FOUND:
    "Check the path given to `--certificate-authority` (relative paths are from the current directory).",
  HTTP_ABORTED: "Run the command again; it was ended (Ctrl-C, or its whole deadline) before the answer came.",
  HTTP_BAD_RESPONSE:
    "Something other than the service answered, or its answer was damaged on the way (a proxy): check the URL and what listens there.",
  HTTP_CONNECTION_LOST:
    "Run again; a connection that keeps dropping points at a proxy, a load balancer or the network.",
  HTTP_REDIRECT_REFUSED:
    "Check the URL: it points at something that redirects elsewhere (a proxy, a login page); point it at the service itself.",
  HTTP_RESPONSE_TOO_LARGE:
    "Check the URL: the service answered with far more than it should (the message names the limit).",
  HTTP_TIMEOUT: "Check that the service runs and answers from this machine, then run again.",
  HTTP_TLS_UNTRUSTED:
    "Trust the certificate authority that signed the service's certificate on this machine, or use the host name its certificate names.",
  HTTP_UNREACHABLE:
    "Check the URL's host and port, and that the service answers from this machine (DNS, proxy, firewall).",
  CONTROLLER_BUSY:
    "The controller is busy: wait as long as the message says, then run the command again (reads already waited and retried once).",
  CONTROLLER_REDIRECTED:
    "Check the site's controller URL (`nvkectl config get-sites`): it must name the controller API itself, not a proxy or login page that redirects elsewhere.",
  CONTROLLER_RESPONSE_TOO_LARGE:
    "Ask for less (name the object instead of listing), or raise the limit for this run with `NVKECTL_MAX_RESPONSE_MB` (the message names the current one).",
  CONTROLLER_TLS_UNTRUSTED:
    "Give the controller's certificate authority with `--certificate-authority FILE` (or add it to the system trust store), and check that the URL's host is a name the certificate carries.",
  INVALID_SETTING: "Fix or unset the environment variable the message names; it says which values it takes.",
  REGISTRY_CA_UNREADABLE: "Point `--ca-file` at a readable PEM file holding the registry's certificate authority.",
  RELEASE_FILE_UNREADABLE:
    "Check the path given to `--release`; write the file with `nvkectl release export REF@sha256:… --output-file FILE` after `nvkectl release verify` accepted REF.",
  RELEASE_PLATFORM_NOT_LISTED:
    "Name one of the platforms the message lists with `--nvkectl` (`linux/amd64`, `linux/arm64`); `release export REF` without it shows the description's `nvkectl[]`.",
  RELEASE_IMAGE_NOT_PINNED:
    "Each image listed is used by the deploy path but not carried by the release: install the release the deploy path was written for, or remove the image from the values it names.",
  RELEASE_INCOMPLETE_FOR_INSTALL:
    "The release does not carry every chart or provider this deploy path installs: use a release made for this deploy path (`nvkectl release export` of the matching version).",
  DIR_UNSAFE:
    "Make the directory the message names your own and writable only by you (`chown $USER DIR && chmod go-w DIR`, the same for a directory above it), or point the tool at a private one; nothing was read from it.",
  FILE_IS_SYMLINK:
    "Remove the link (`rm PATH`, which leaves its target alone) or write to another path; a link in a shared directory may have been planted to redirect the write.",
  FILE_LOCK_LOST:
    "Another process took the lock over while this one was writing: check that no other nvkectl runs against the same config, look at the file, then run the command again.",
  FILE_LOCKED:
    "Another process is changing the file: wait for it to finish and run the command again. A lock left by a killed process is taken over once it is stale (the message says when).",
  FILE_NOT_REGULAR: "Point the command at a regular file: the path names a directory or a special file.",
  FILE_OWNED_BY_OTHER:
    "The file belongs to another user: write to a path of your own, remove the file first, or pass `--force` (where the command has it) to replace it with a file you own.",
  FILE_UNSAFE:
    "Make the file yours and readable and writable by you only (`chown $USER FILE && chmod 600 FILE`), after checking that nobody changed it; it was not used.",
  FILE_WRITE_FAILED:
    "Fix what the message names (a missing directory, permissions, a full disk) and run the command again; the old file is unchanged.",
  PLUGIN_SOURCE_REFUSED:
    "Install a plugin by its npm package name (`nvkectl plugins install NAME`), or link a local directory for development with `nvkectl plugins link DIR`.",
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
    "- `nr cluster status` says where a registration stopped, its last error and the next command;",
    "- on the [sandbox](end-to-end.md), `./run sandbox status` says what runs, and",
    "  `$NVKE_SANDBOX_DIR/emulator.log` has one line per controller request, and",
    "  `$NVKE_SANDBOX_DIR/noderings.log` one per NodeRings API request.",
    "",
    ...sections,
  ].join("\n");
}
