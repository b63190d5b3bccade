import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** nr's own error codes: what its commands and phases check, beyond the libraries'. */
export const errorCodes = defineErrorCodes("nr", {
  NR_API_URL_MISSING: {
    exitCode: ExitCode.Usage,
    meaning: "No NodeRings API URL was given (--api-url, NR_API_URL or apiUrl in the config file); nothing was sent.",
  },
  NR_CONFIG_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "nr's config file does not parse or breaks its schema; every problem is listed.",
  },
  NR_CONFIG_INSECURE: {
    exitCode: ExitCode.Precondition,
    meaning: "nr's config file holds the API token but others may read it (its mode is not 0600); it was not used.",
  },
  AGENT_IDENTITY_MISSING: {
    exitCode: ExitCode.Usage,
    meaning: "Neither --name nor --agent-id was given, and no earlier run recorded the agent.",
  },
  AGENT_IDENTITY_CHANGED: {
    exitCode: ExitCode.Conflict,
    meaning: "--name or --agent-id names another agent than the one this machine's state is registered as.",
  },
  AGENT_OTHER_MACHINE: {
    exitCode: ExitCode.Conflict,
    meaning:
      "The agent named was registered from another machine (NodeRings records a keyed hash of its /etc/machine-id); this one does not take it over.",
  },
  NETWORK_PLAN_INVALID: {
    exitCode: ExitCode.Usage,
    meaning: "The pod or service CIDR is not an IPv4 CIDR, or the two overlap.",
  },
  NETWORK_PLAN_CHANGED: {
    exitCode: ExitCode.Conflict,
    meaning:
      "--pod-cidr or --service-cidr differs from the range k3s was installed with on this machine; the network plan cannot change after k3s. Nothing was done.",
  },
  API_SERVER_URL_UNKNOWN: {
    exitCode: ExitCode.Precondition,
    meaning:
      "This machine has no default route with an IPv4 address to tell Liqo where its API server is (--api-server-url); nothing was done.",
  },
  OFFLOAD_NAMESPACE_INVALID: {
    exitCode: ExitCode.Usage,
    meaning: "A namespace named with --offload-namespace is not a valid namespace name.",
  },
  OFFLOAD_NAMESPACE_UNSAFE: {
    exitCode: ExitCode.Usage,
    meaning:
      "A namespace named with --offload-namespace holds a Secret nr creates (the Proxmox credentials) or is a system namespace: Liqo would reflect its Secrets to NodeRings. Refused before anything is done.",
  },
  OFFLOAD_NAMESPACE_REFUSED: {
    exitCode: ExitCode.Rejected,
    meaning: "NodeRings does not allow a namespace named with --offload-namespace (reserved, or too many).",
  },
  PRECHECKS_FAILED: {
    exitCode: ExitCode.Precondition,
    meaning:
      "The machine does not meet what k3s, Calico and Liqo need; every failed check says what was found, what is required and how to fix it.",
  },
  PRECHECK_UNKNOWN: {
    exitCode: ExitCode.Usage,
    meaning: "--ignore-precheck names a check that is not one of the prechecks; nothing was done.",
  },
  HOST_FACTS_UNREADABLE: {
    exitCode: ExitCode.Precondition,
    meaning: "The prechecks could not read a fact about this machine (/etc/os-release, /proc).",
  },
  TOOL_INSTALL_FAILED: {
    exitCode: ExitCode.Precondition,
    meaning:
      "A companion tool downloaded and verified into ~/.nr/bin did not install or does not answer with its pinned version; nothing was kept.",
  },
  K3S_INSTALLER_MISSING: {
    exitCode: ExitCode.Precondition,
    meaning:
      "No k3s installer on this machine (k3s-install.sh on PATH or in ~/.nr/bin) and the pins give none to download with a digest.",
  },
  PROXMOX_CREDENTIALS_MISSING: {
    exitCode: ExitCode.Usage,
    meaning:
      "The operator phase needs Proxmox credentials and none were given (file, standard input, environment or prompt).",
  },
  PROXMOX_CREDENTIALS_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The Proxmox credentials given are incomplete or malformed; every problem is listed (never the secret).",
  },
  SECRET_ON_COMMAND_LINE: {
    exitCode: ExitCode.Usage,
    meaning: "A secret was passed as a command-line flag, where shell history and ps can read it; it was not used.",
  },
  RESET_NOTHING_RECORDED: {
    exitCode: ExitCode.Precondition,
    meaning:
      "nr cluster reset found no registration recorded on this machine (no ~/.nr/state.json): there is nothing it created to remove.",
  },
  RESET_TOOL_MISSING: {
    exitCode: ExitCode.Precondition,
    meaning:
      "nr cluster reset needs liqoctl (at the installed Liqo's version) or helm and finds none on this machine; a reset downloads nothing.",
  },
  LIVE_CHECK_FAILED: {
    exitCode: ExitCode.CheckFailed,
    meaning:
      "nr cluster status --live found the running machine unhealthy; each failed check is listed. Nothing was changed or reported.",
  },
  BUNDLE_EXISTS: {
    exitCode: ExitCode.Conflict,
    meaning: "The support bundle's file (--output) exists already; nr never overwrites it.",
  },
  UPGRADE_NOTHING_REGISTERED: {
    exitCode: ExitCode.Precondition,
    meaning:
      "nr cluster upgrade found no registration recorded on this machine (no ~/.nr/state.json): there is nothing nr installed to upgrade.",
  },
  UPGRADE_REGISTRATION_INCOMPLETE: {
    exitCode: ExitCode.Conflict,
    meaning:
      "The registration has not succeeded (it failed, was interrupted or is running): finish it (nr cluster register --resume) before upgrading. Nothing was done.",
  },
  UPGRADE_DOWNGRADE: {
    exitCode: ExitCode.Conflict,
    meaning:
      "The new pins name an older version of a component than the one installed; no component is moved back. Nothing was done.",
  },
  UPGRADE_K3S_MINOR_SKIP: {
    exitCode: ExitCode.Conflict,
    meaning:
      "The new pins move k3s more than one minor version (or to another major); k3s upgrades one minor at a time (the Kubernetes version skew policy). Nothing was done.",
  },
  UPGRADE_LIQOCTL_MISMATCH: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "The new pins name a liqoctl whose version is not Liqo's; liqoctl must be the installed Liqo's own version. Nothing was done.",
  },
  UPGRADE_LIQO_PEERING_SKEW: {
    exitCode: ExitCode.Conflict,
    meaning:
      "The new pins change Liqo's minor version while this agent is peered with NodeRings, which runs another minor; Liqo does not support a peering across minor versions. Nothing was done.",
  },
  UPGRADE_VERSION_UNREADABLE: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "A version recorded in the registration's state or named by the new pins cannot be compared (a hand edit?). Nothing was done.",
  },
  UPGRADE_INPUTS_CHANGED: {
    exitCode: ExitCode.Conflict,
    meaning:
      "Besides versions, what a component to upgrade was installed with differs from what the registration recorded (--api-server-url, --calico-manifests, --operator-chart, the host's address); an upgrade changes versions only. Nothing was done.",
  },
  VERIFY_FAILED: {
    exitCode: ExitCode.CheckFailed,
    meaning:
      "The verify phase's health gate did not pass; each failed check is listed and the result was reported to NodeRings.",
  },
  CLOUD_INIT_INPUT_INVALID: {
    exitCode: ExitCode.Usage,
    meaning:
      "nr cluster register --print-cloud-init lacks an input or has a malformed one (--nr-url, --nr-sha256, --api-token-file, the agent's name, the Proxmox credentials' path); every problem is listed and nothing was printed.",
  },
  API_TOKEN_FILE_INVALID: {
    exitCode: ExitCode.Precondition,
    meaning:
      "The file named by --api-token-file cannot be read, is empty, or others may read or change it (its mode is not 0600); it was not used and nothing was sent.",
  },
});
