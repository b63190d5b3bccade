import { dryRunFlag, Flags } from "@nodekit/cli-kit";
import { isUserError, UserError } from "@nodekit/errors";
import { describePhases, phaseRunnerErrorCodes } from "@nodekit/phase-runner";
import { errorCodes } from "../../errors.ts";
import { PhaseCommand, waits } from "../../phase-command.ts";
import { cloudInitFor } from "../../register/cloud-init.ts";
import { REGISTER_PHASES } from "../../register/phases.ts";
import { K3S_KUBECONFIG, register } from "../../services/register.ts";

const list = (values: readonly string[] | undefined) =>
  (values ?? []).flatMap((value) => value.split(",").map((part) => part.trim())).filter((part) => part !== "");

export default class ClusterRegister extends PhaseCommand<typeof ClusterRegister> {
  static override summary = "Turn this VM into a NodeRings agent: k3s, Calico, Liqo peering, the Proxmox operator.";

  static override description = `Runs ten phases in this order, each checkpointed in ~/.nr/state.json once it succeeded:

${describePhases(REGISTER_PHASES)
  .split("\n")
  .map((line) => `  ${line}`)
  .join("\n")}

Before installing anything it asks the NodeRings API for the platform-pinned versions (--offline: the local defaults, with a warning). A missing or wrong-version helm or liqoctl is downloaded into ~/.nr/bin and checked against the pinned digest; keep ~/.nr/bin on PATH.

The API is found with --api-url or NR_API_URL, its token in --api-token-file FILE, NR_API_TOKEN or ~/.nr/config.yaml (files mode 0600). Proxmox credentials come from --proxmox-credentials FILE (or - for standard input), NR_PROXMOX_URL / NR_PROXMOX_TOKEN_ID / NR_PROXMOX_TOKEN_SECRET, or a prompt; never from the command line. They are written only into a Kubernetes Secret in this cluster.

--resume continues an earlier run: completed phases are re-checked, not redone; a phase whose inputs changed runs again, with every phase after it. --dry-run prints every call the run would make, in order, and changes nothing. Two runs at once are refused.

--print-cloud-init prints cloud-init user-data instead, and changes nothing here: on a VM's first boot it downloads nr from --nr-url, checks it against --nr-sha256, and runs this registration (with the flags given) from a systemd unit until it succeeds; the token and the Proxmox credentials are paths on the VM (--api-token-file, --proxmox-credentials), never values. See docs/fleets.md.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> --name pve-node-1 --api-url https://api.noderings.io --proxmox-credentials pve.yaml",
    {
      description: "See what it would do first:",
      command: "<%= config.bin %> <%= command.id %> --name pve-node-1 --dry-run",
    },
    {
      description: "Continue after a failure or an interruption:",
      command: "<%= config.bin %> <%= command.id %> --resume",
    },
    {
      description: "User-data that registers a VM on its first boot (the token stays in a file on the VM):",
      command:
        "<%= config.bin %> <%= command.id %> --print-cloud-init --nr-url URL --nr-sha256 HEX --api-token-file /etc/nodekit/api-token --api-url https://api.noderings.io --name pve-node-1 --proxmox-credentials /etc/nodekit/pve.yaml > user-data.yaml",
    },
    {
      description: "Peer now, install the operator later:",
      command: "<%= config.bin %> <%= command.id %> --name pve-node-1 --skip-operator-install",
    },
  ];

  static override flags = {
    name: Flags.string({
      description: "The agent's name in NodeRings: created, or reused when it exists (never a duplicate).",
      exclusive: ["agent-id"],
    }),
    "agent-id": Flags.string({ description: "Reuse this existing agent (its id in NodeRings).", exclusive: ["name"] }),
    "api-url": Flags.string({
      description: "The NodeRings API URL (default: NR_API_URL, then apiUrl in ~/.nr/config.yaml).",
    }),
    "api-token-file": Flags.string({
      description:
        "Read the NodeRings API token from this file (mode 0600; its first line), ahead of NR_API_TOKEN and ~/.nr/config.yaml. With --print-cloud-init: its path on the VM.",
    }),
    "api-token": Flags.string({ hidden: true }),
    kubeconfig: Flags.string({
      description: `The agent cluster's kubeconfig: where k3s writes it (${K3S_KUBECONFIG}), or an existing cluster's.`,
    }),
    "pod-cidr": Flags.string({
      description:
        "The cluster's pod CIDR, for k3s, Calico and Liqo alike (default 10.42.0.0/16, or what an earlier run recorded; fixed once k3s is installed).",
    }),
    "service-cidr": Flags.string({
      description:
        "The cluster's service CIDR, for k3s and Liqo (default 10.43.0.0/16, or what an earlier run recorded; fixed once k3s is installed).",
    }),
    "api-server-url": Flags.string({
      description:
        "Where NodeRings reaches this cluster's API server, for Liqo (default https://<the default route's address>:6443; a name given is added to k3s's certificate).",
    }),
    "offload-namespace": Flags.string({
      description: "Offload this namespace too, besides the VNC gateway's (repeatable, or comma-separated).",
      multiple: true,
    }),
    "skip-prechecks": Flags.boolean({ description: "Skip the prechecks phase (recorded in the state as skipped)." }),
    "ignore-precheck": Flags.string({
      description:
        "Let this precheck's failure pass, reported and recorded (repeatable, or comma-separated: init, kubectl, port-179-tcp, …), as kubeadm's --ignore-preflight-errors.",
      multiple: true,
    }),
    offline: Flags.boolean({
      description:
        "Do not ask the API for the pinned versions: use the local defaults (~/.nr/config.yaml pins, else the shipped ones). Not platform-validated.",
    }),
    "skip-operator-install": Flags.boolean({
      description: "Skip the operator phase. VMs cannot be sold until it runs; status says so.",
    }),
    "proxmox-credentials": Flags.string({
      description:
        "A file with the Proxmox credentials (url, tokenId, tokenSecret; YAML), or - to read it from standard input.",
    }),
    "proxmox-url": Flags.string({ description: "The Proxmox VE API URL (or NR_PROXMOX_URL)." }),
    "proxmox-token-id": Flags.string({
      description: "The Proxmox API token id, user@realm!name (or NR_PROXMOX_TOKEN_ID).",
    }),
    "proxmox-token-secret": Flags.string({ hidden: true }),
    "operator-chart": Flags.string({
      description:
        "Install the operator from this chart (a local path or a mirror's reference) instead of the pinned repository.",
    }),
    "calico-manifests": Flags.string({
      description:
        "Where the tigera operator manifests are (a URL or directory with operator-crds.yaml and tigera-operator.yaml), instead of Calico's release.",
    }),
    resume: Flags.boolean({
      description: "Continue the earlier run recorded in ~/.nr/state.json.",
      exclusive: ["restart"],
    }),
    restart: Flags.boolean({
      description: "Forget the earlier run's state and run every phase again.",
      exclusive: ["resume"],
    }),
    "break-lock": Flags.boolean({
      description: "Clear a lock left by a run that is no longer running (never one a live run holds), then go on.",
    }),
    "skip-phases": Flags.string({ description: "Skip these phases (comma-separated ids).", multiple: true }),
    "from-phase": Flags.string({ description: "Run from this phase on (the phases before it must be done)." }),
    "only-phase": Flags.string({ description: "Run this phase only (the phases before it must be done)." }),
    "dry-run": dryRunFlag,
    "print-cloud-init": Flags.boolean({
      description:
        "Print cloud-init user-data that downloads nr (--nr-url, checked against --nr-sha256) and runs this registration from a systemd unit until it succeeds; changes nothing here.",
      exclusive: ["dry-run", "resume", "restart", "break-lock", "skip-phases", "from-phase", "only-phase", "host-root"],
    }),
    "nr-url": Flags.string({
      description: "With --print-cloud-init: where the VM downloads the nr executable from.",
      dependsOn: ["print-cloud-init"],
    }),
    "nr-sha256": Flags.string({
      description:
        "With --print-cloud-init: the nr executable's SHA-256 (the release's checksum); the VM refuses another.",
      dependsOn: ["print-cloud-init"],
    }),
    output: Flags.option({
      char: "o",
      description: "With --dry-run: print the plan as json or yaml (the plan document) instead of shell lines.",
      options: ["table", "json", "yaml"] as const,
      default: "table" as const,
    })(),
    timeout: Flags.string({
      description: "How long each wait (node Ready, Calico, peering, helm) may take.",
      default: "10m",
    }),
    "poll-interval": Flags.string({ hidden: true, default: "2s" }),
    "api-timeout": Flags.string({ hidden: true, default: "30s" }),
    "host-root": Flags.string({ hidden: true, description: "Read the host facts from this directory instead of /." }),
  };

  override async run(): Promise<void> {
    const flags = this.flags;
    if (flags["proxmox-token-secret"] !== undefined) {
      this.redactor.add(flags["proxmox-token-secret"]);
      throw new UserError(
        errorCodes.SECRET_ON_COMMAND_LINE,
        "--proxmox-token-secret is not accepted; nothing was done",
        {
          why: "a secret on the command line is kept in shell history and shown by ps to every user of the machine",
          next: [
            "give it in NR_PROXMOX_TOKEN_SECRET, in a --proxmox-credentials file, on standard input (--proxmox-credentials -), or at the prompt",
            "and consider the token exposed: rotate it in Proxmox",
          ],
        },
      );
    }
    if (flags["api-token"] !== undefined) {
      this.redactor.add(flags["api-token"]);
      throw new UserError(errorCodes.SECRET_ON_COMMAND_LINE, "--api-token is not accepted; nothing was done", {
        why: "a secret on the command line is kept in shell history and shown by ps to every user of the machine",
        next: [
          "give it in a file with --api-token-file PATH (mode 0600), in NR_API_TOKEN, or as token in ~/.nr/config.yaml",
          "and consider the token exposed: rotate it in NodeRings",
        ],
      });
    }
    if (flags["print-cloud-init"]) {
      await this.out(
        cloudInitFor({
          nrUrl: flags["nr-url"],
          nrSha256: flags["nr-sha256"],
          apiTokenFile: flags["api-token-file"],
          registerArgs: passThrough(flags),
          hasIdentity: flags.name !== undefined || flags["agent-id"] !== undefined,
          hasApiUrl: flags["api-url"] !== undefined,
          proxmoxCredentials: flags["proxmox-credentials"],
          skipOperator: flags["skip-operator-install"],
        }),
        { raw: true },
      );
      return;
    }
    if (flags["break-lock"]) await this.breakLock();
    const dryRun = flags["dry-run"];
    await this.withRun(!dryRun, withResumeAdvice, async (parts, done) => {
      const outcome = await register({
        name: flags.name,
        agentId: flags["agent-id"],
        apiUrl: flags["api-url"],
        apiTokenFile: flags["api-token-file"],
        kubeconfig: flags.kubeconfig,
        podCidr: flags["pod-cidr"],
        serviceCidr: flags["service-cidr"],
        apiServerUrl: flags["api-server-url"],
        offload: list(flags["offload-namespace"]),
        skipPrechecks: flags["skip-prechecks"],
        ignorePrechecks: list(flags["ignore-precheck"]),
        offline: flags.offline,
        skipOperator: flags["skip-operator-install"],
        proxmoxCredentials: flags["proxmox-credentials"],
        proxmoxUrl: flags["proxmox-url"],
        proxmoxTokenId: flags["proxmox-token-id"],
        operatorChart: flags["operator-chart"],
        calicoManifests: flags["calico-manifests"],
        resume: flags.resume,
        restart: flags.restart,
        skipPhases: list(flags["skip-phases"]),
        fromPhase: flags["from-phase"],
        onlyPhase: flags["only-phase"],
        dryRun,
        ...waits(flags),
        ...parts,
      });
      done();
      if (outcome.kind === "plan") {
        await this.printPlan(outcome.planned.plan, flags.output);
        return;
      }
      const { result, agent } = outcome;
      await this.out(
        `agent ${agent?.name ?? ""} (${agent?.agentId ?? ""}) registered: ${result.ran.length} phases ran, ${result.kept.length} kept, ${result.skipped.length} skipped`,
      );
      if (outcome.operatorSkipped) {
        this.logger.warn(
          `the operator is not installed (${flags["skip-operator-install"] ? "--skip-operator-install" : "--skip-phases"}): VMs cannot be sold until it runs; install it with nr cluster register --resume --proxmox-credentials FILE`,
        );
      }
    });
  }
}

/** The registration's flags the cloud-init unit passes on to `nr cluster register --resume`, as argv words. */
const PASSED_ON = [
  "name",
  "agent-id",
  "api-url",
  "kubeconfig",
  "pod-cidr",
  "service-cidr",
  "api-server-url",
  "offload-namespace",
  "skip-prechecks",
  "ignore-precheck",
  "offline",
  "skip-operator-install",
  "proxmox-credentials",
  "proxmox-url",
  "proxmox-token-id",
  "operator-chart",
  "calico-manifests",
  "timeout",
] as const;

function passThrough(flags: Record<string, unknown>): string[] {
  return PASSED_ON.flatMap((flag) => {
    const value = flags[flag];
    if (value === undefined || value === false) return [];
    if (value === true) return [`--${flag}`];
    // --timeout's default is not passed on: the unit's nr has its own.
    if (flag === "timeout" && value === ClusterRegister.flags.timeout.default) return [];
    return (Array.isArray(value) ? value : [value]).flatMap((one) => [`--${flag}`, String(one)]);
  });
}

/** Errors about which phases to run: nothing ran, nothing to resume (usage, or the state says no). */
const SELECTION_ERRORS: ReadonlySet<string> = new Set(
  [
    phaseRunnerErrorCodes.PHASE_UNKNOWN,
    phaseRunnerErrorCodes.PHASE_SELECTION_CONFLICT,
    phaseRunnerErrorCodes.PHASE_PREREQUISITE_MISSING,
    phaseRunnerErrorCodes.PHASE_OUTPUT_MISSING,
  ].map((entry) => entry.code),
);

/**
 * A phase's failure says which phase, what is recorded, and how to continue (STYLE: errors)
 * — only where that is true: not for an error about which phases to run (nothing ran), and
 * for the first phase without claiming that phases before it are done.
 */
function withResumeAdvice(error: unknown): unknown {
  if (!isUserError(error) || typeof error.facts.phase !== "string" || SELECTION_ERRORS.has(error.code)) return error;
  const phase = error.facts.phase;
  const stateFile = String(error.facts.stateFile ?? "~/.nr/state.json");
  const done =
    REGISTER_PHASES[0]?.id === phase
      ? `no phase is done yet (the failure is recorded in ${stateFile})`
      : `the phases before ${phase} are done and recorded in ${stateFile}`;
  const stopped =
    error.code === phaseRunnerErrorCodes.RUN_INTERRUPTED.code ||
    error.code === phaseRunnerErrorCodes.RUN_TERMINATED.code;
  return new UserError(error.errorCode, error.message, {
    why: error.why,
    problems: error.problems,
    next: [...error.next, `${done}; ${stopped ? "" : "after fixing it, "}continue with: nr cluster register --resume`],
    facts: error.facts,
    cause: error,
  });
}
