import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { UserError } from "@nodekit/errors";
import { readPrivateFile, writeNewFileSafe } from "@nodekit/fs-safe";
import { helmCall, isolatedToolEnv, kubectlCall } from "@nodekit/kube";
import { type CommandCall, type ProcessRunner, type Redactor, redactCredentialFields } from "@nodekit/process";
import { create } from "tar";
import * as z from "zod";
import { errorCodes } from "../errors.ts";
import { RecordedPins, recorded } from "../register/meta.ts";
import { operator as operatorPhase } from "../register/phases/operator.ts";
import { apiEndpoint, assertNrHome, ensureNrDir, loadNrConfig, nrPaths } from "./home.ts";
import { createHostFactsSource } from "./host.ts";
import { K3S_KUBECONFIG } from "./register.ts";
import { RESET_STATE } from "./reset.ts";
import { LAST_RUN_LOG } from "./run-log.ts";
import { findInstalledTool } from "./tools.ts";

export interface SupportBundleOptions {
  /** Where the archive goes (default `./nr-support-<time>.tar.gz`); never over an existing file. */
  output?: string | undefined;
  env: NodeJS.ProcessEnv;
  runner: ProcessRunner;
  redactor: Redactor;
  hostRoot?: string | undefined;
  /** How many lines of k3s's journal. */
  journalLines: number;
  clock?: () => Date;
  cwd?: string;
}

/** One entry of the bundle's `index.json`: what each file is, and how it was made. */
interface BundleEntry {
  file: string;
  what: string;
  /** The command that made it (as shell words), when one did. */
  command?: string;
  exitCode?: number;
  /** Why it is empty or partial (not there, the command failed). */
  note?: string;
}

const KubeSecret = z.object({ data: z.record(z.string(), z.string()).optional() });

/** Redacts what the redactor knows and every credential-looking field. */
function scrub(redactor: Redactor, text: string): string {
  return redactCredentialFields(redactor.redact(text));
}

/**
 * `nr cluster support-bundle`: one tar.gz (0600) with what a support engineer needs and no
 * secret — the registration's (and a reset's) state, the last run's log, host facts, `k3s
 * check-config`, the tail of k3s's journal, nodes and tigerastatus, `liqoctl info -o json`,
 * the operator's helm status (its info only: never values or manifest), the pins — each file
 * through the redactor, which first learns every secret nr knows of (the API token, the
 * Proxmox credentials in this cluster's Secret, NR_PROXMOX_TOKEN_SECRET), and then a pass for
 * any credential-looking field. Read-only: it changes nothing and talks to no service.
 */
export async function supportBundle(options: SupportBundleOptions): Promise<{ path: string; entries: BundleEntry[] }> {
  const { env, runner, redactor } = options;
  const clock = options.clock ?? (() => new Date());
  const paths = nrPaths(env);
  await assertNrHome(paths);
  // Every secret nr knows of, before anything is read.
  const config = await loadNrConfig(paths).catch(() => undefined);
  if (config !== undefined) {
    try {
      const endpoint = apiEndpoint({}, config, env);
      redactor.add(endpoint.token, "the NodeRings API token");
    } catch {}
    redactor.add(config.config.token, "the NodeRings API token");
  }
  redactor.add(env.NR_API_TOKEN?.trim(), "the NodeRings API token");
  redactor.add(env.NR_PROXMOX_TOKEN_SECRET, "the Proxmox token secret");

  const stateRead = await readPrivateFile(paths.state);
  const stateText = stateRead.kind === "read" ? stateRead.data.toString("utf8") : undefined;
  const state = stateText === undefined ? undefined : (JSON.parse(stateText) as Record<string, unknown>);
  const meta = (state?.meta ?? {}) as Record<string, unknown>;
  const kubeconfig = typeof meta.kubeconfig === "string" ? meta.kubeconfig : K3S_KUBECONFIG;
  const kube = { kubeconfig };
  const operatorOutputs = ((state?.phases as Record<string, { outputs?: Record<string, unknown> }> | undefined)?.[
    operatorPhase.id
  ]?.outputs ?? {}) as Record<string, unknown>;
  const [secretNamespace, secretName] =
    typeof operatorOutputs.secret === "string"
      ? operatorOutputs.secret.split("/")
      : ["proxmox-operator", "proxmox-credentials"];
  const release = typeof operatorOutputs.release === "string" ? operatorOutputs.release : "proxmox-operator";

  // The Proxmox credentials as the cluster holds them: learnt, never written.
  const secret = await runner
    .run(kubectlCall(kube, ["get", "secret", secretName ?? "", "-n", secretNamespace ?? "", "-o", "json"]), {
      allowFailure: true,
    })
    .catch(() => undefined);
  if (secret?.exitCode === 0) {
    const parsed = KubeSecret.safeParse(JSON.parse(secret.stdout));
    for (const value of Object.values(parsed.success ? (parsed.data.data ?? {}) : {})) {
      redactor.add(Buffer.from(value, "base64").toString("utf8"), "a value of the Proxmox credentials Secret");
      redactor.add(value, "a value of the Proxmox credentials Secret");
    }
  }

  const stamp = clock().toISOString().replace(/[:.]/g, "-");
  const name = `nr-support-${stamp}`;
  await ensureNrDir(paths, "run");
  const work = await mkdtemp(join(paths.run, ".support-"));
  const dir = join(work, name);
  const entries: BundleEntry[] = [];
  const put = async (file: string, what: string, text: string, extra: Omit<BundleEntry, "file" | "what"> = {}) => {
    await writeFile(join(dir, file), scrub(redactor, text), { mode: 0o600, flag: "wx" });
    entries.push({ file, what, ...extra });
  };
  const run = async (file: string, what: string, call: CommandCall | undefined, missing?: string) => {
    if (call === undefined) {
      await put(file, what, "", { note: missing ?? "not run" });
      return;
    }
    const command = [call.command, ...call.args].join(" ");
    try {
      const result = await runner.run(call, { allowFailure: true });
      await put(file, what, result.exitCode === 0 ? result.stdout : `${result.stdout}${result.stderr}`, {
        command: scrub(redactor, command),
        exitCode: result.exitCode,
        ...(result.exitCode === 0 ? {} : { note: "the command failed: its output and error are kept" }),
      });
    } catch (error) {
      await put(file, what, "", {
        command: scrub(redactor, command),
        note: `did not run: ${(error as Error).message}`,
      });
    }
  };
  try {
    await mkdir(dir, { mode: 0o700 });
    await put(
      "state.json",
      "the registration's state (~/.nr/state.json)",
      stateText ?? "",
      stateText === undefined ? { note: "no registration on this machine" } : {},
    );
    const resetRead = await readPrivateFile(join(paths.home, RESET_STATE));
    if (resetRead.kind === "read")
      await put("reset-state.json", "a reset in progress", resetRead.data.toString("utf8"));
    const logRead = await readPrivateFile(join(paths.run, LAST_RUN_LOG));
    await put(
      "last-run.log",
      "the last run's log (register or reset), redacted",
      logRead.kind === "read" ? logRead.data.toString("utf8") : "",
      logRead.kind === "read" ? {} : { note: "no run recorded its log yet" },
    );
    const pins = recorded(RecordedPins, meta.pins);
    await put("pins.json", "the pins the registration used", `${JSON.stringify(pins ?? null, null, 2)}\n`);
    const host = createHostFactsSource(options.hostRoot === undefined ? {} : { root: options.hostRoot });
    const facts = await host.facts().catch((error: unknown) => ({ error: (error as Error).message }));
    await put(
      "host.json",
      "host facts (OS, kernel, memory, architecture, network, ports)",
      `${JSON.stringify(facts, null, 2)}\n`,
    );
    await run("k3s-check-config.txt", "k3s check-config", { command: "k3s", args: ["check-config"] });
    await run("k3s-journal.txt", `the last ${options.journalLines} lines of k3s's journal`, {
      command: "journalctl",
      args: ["-u", "k3s", "--no-pager", "-n", String(options.journalLines)],
    });
    await run("nodes.json", "kubectl get nodes", kubectlCall(kube, ["get", "nodes", "-o", "json"]));
    await run(
      "tigerastatus.json",
      "kubectl get tigerastatus",
      kubectlCall(kube, ["get", "tigerastatus", "-o", "json"]),
    );
    const liqoVersion = pins?.versions.liqo;
    const liqoctl = await findInstalledTool("liqoctl", { paths, runner, env, version: liqoVersion });
    await run(
      "liqoctl-info.json",
      "liqoctl info -o json",
      liqoctl.path === undefined
        ? undefined
        : { command: liqoctl.path, args: ["info", "--kubeconfig", kubeconfig, "-o", "json"] },
      liqoctl.path === undefined ? `liqoctl: ${liqoctl.found}` : undefined,
    );
    const helm = await findInstalledTool("helm", { paths, runner, env });
    const helmCallFor =
      helm.path === undefined
        ? undefined
        : {
            ...helmCall(
              kube,
              ["status", release, "--namespace", secretNamespace ?? "", "-o", "json"],
              isolatedToolEnv(join(paths.run, "helm")),
            ),
            command: helm.path,
          };
    // The release's info only: its values and manifest are left out.
    if (helm.path === undefined || helmCallFor === undefined) {
      await put("helm-status.json", "helm status of the operator", "", {
        note: `helm: ${helm.path === undefined ? helm.found : "not found"}`,
      });
    } else {
      const result = await runner.run(helmCallFor, { allowFailure: true }).catch(() => undefined);
      const status =
        result?.exitCode === 0
          ? (() => {
              const parsed = JSON.parse(result.stdout) as Record<string, unknown>;
              return { name: parsed.name, namespace: parsed.namespace, version: parsed.version, info: parsed.info };
            })()
          : { error: result?.stderr ?? "helm did not run" };
      await put(
        "helm-status.json",
        "helm status of the operator (its info; never values or manifest)",
        `${JSON.stringify(status, null, 2)}\n`,
        {
          command: scrub(redactor, [helmCallFor.command, ...helmCallFor.args].join(" ")),
          exitCode: result?.exitCode ?? 127,
        },
      );
    }
    await put(
      "index.json",
      "what each file is",
      `${JSON.stringify({ createdAt: clock().toISOString(), files: [...entries] }, null, 2)}\n`,
    );

    const out = options.output ?? join(options.cwd ?? process.cwd(), `${name}.tar.gz`);
    // Whole or not at all, never over an existing file.
    const written = await writeNewFileSafe(out, () => create({ gzip: true, cwd: work, portable: true }, [name]), {
      mode: 0o600,
      what: "the support bundle",
    });
    if (written.kind === "exists") {
      throw new UserError(errorCodes.BUNDLE_EXISTS, `${out} exists; nothing was overwritten`, {
        next: `give another --output, or remove ${basename(out)} first`,
      });
    }
    return { path: out, entries };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
