import { homedir } from "node:os";
import {
  BaseCommand,
  describeFailure,
  Flags,
  globalFlags,
  type Hints,
  isTableFormat,
  type OutputFormat,
  parseDuration,
  traceStartup,
  type View,
} from "@nodekit/cli-kit";
import type { KubeTarget } from "@nodekit/kube";
import type { NvkeClient } from "@nodekit/nvke-api";
import type { Site } from "@nodekit/site-config";
import type { Command } from "@oclif/core/command";
import { registryFlags } from "./flags.ts";
import { NVKECTL_HINTS } from "./hints.ts";
import type { OnSite } from "./services/all-sites.ts";
import type { SiteCluster } from "./services/kubectl.ts";
import type { KubeconfigOrigin } from "./services/sites.ts";

/** How much later than --timeout a request still in flight is cut off (the wait's own timeout speaks first). */
const DEADLINE_GRACE_MS = 2_000;

/** `--context` of the commands that read or change the site cluster, as kubectl's (helm's --kube-context, clusterctl's --kubeconfig-context). */
export const contextFlag = Flags.string({
  description:
    "The context of the kubeconfig to use instead of its current-context (the site's kubeconfig; with no site configured, KUBECONFIG's files or ~/.kube/config), as kubectl's --context; kubectl, helm and clusterctl are given it too.",
});

/**
 * What upgrade plan and upgrade apply both take: the install's inputs, a newer --release, the
 * site cluster (`kubeconfig` says whose kubeconfig it must be), the registry's flags.
 */
export const upgradeInputFlags = (kubeconfig: string) => ({
  sitespec: Flags.string({ description: "The site spec (sitespec generate writes it).", required: true }),
  "stack-config": Flags.string({ description: "The stack config beside the site spec.", required: true }),
  "deploy-path": Flags.string({ description: "The deploy path directory. Default: the shipped deploy/nico." }),
  kubeconfig: Flags.string({
    description: `${kubeconfig} Default: the active site's (or --site's); with no site configured, the one kubectl would use (KUBECONFIG, every file it lists, or ~/.kube/config).`,
  }),
  context: contextFlag,
  release: Flags.string({ description: "The newer release's description (release export wrote it)." }),
  ...registryFlags,
});

/** `--work-dir` of upgrade plan and upgrade apply. */
export const workDirFlag = Flags.string({
  description: "The install's work directory. Default: $XDG_STATE_HOME/nvkectl/install/<site>.",
});

/** How often a watch or wait polls, and its deadline (waitTimings). */
interface Timings {
  intervalMs: number;
  timeoutMs: number | undefined;
}

/**
 * A kind the controller provisions (clusters, node pools), as `get KIND [NAME...]` reads it
 * with one client: what showOrWait needs of it.
 */
interface ProvisionedKind<R> {
  view: () => View<R>;
  /** Every object, page by page. */
  list(onPage: (page: R[]) => void): Promise<unknown>;
  /** The list, then again each time it changes, until --timeout. */
  watch(options: Timings & { onChange: (rows: R[]) => void }): Promise<void>;
  /** The objects of these names, and the names not found. */
  get(names: readonly string[]): Promise<{ found: R[]; missing: string[] }>;
  /** Polls one object until it is Ready (or the wait's deadline); its last state. */
  waitReady(row: R, options: Timings & { timeoutMs: number; onChange: (seen: R) => void }): Promise<R | undefined>;
  /** The error naming the names not found. */
  notFound(missing: string[]): Error;
  /** What an empty table says, when not the default. */
  empty?: string;
}

/** nvkectl's global flags: the kit's, plus `--site` (NV-1) and the controller connection flags. */
export abstract class NvkectlCommand<T extends typeof Command> extends BaseCommand<T> {
  static override baseFlags = {
    ...globalFlags,
    site: Flags.string({
      description: "Use this site instead of the active one, for this invocation only.",
      helpGroup: "GLOBAL",
      env: "NVKECTL_SITE",
    }),
    "request-timeout": Flags.string({
      description:
        "How long one request may take, its whole answer included (e.g. 30s, 2m): each request to the controller, and each request to the site cluster (kubectl's, or nvkectl's own, retries on a 429 with Retry-After included). --timeout bounds a whole --wait or --watch.",
      helpGroup: "GLOBAL",
      default: "30s",
    }),
    "certificate-authority": Flags.string({
      description:
        "A PEM file with the certificate authority an https:// controller's certificate must chain to. Without it, the system trust store and Node.js's bundled roots are used.",
      helpGroup: "GLOBAL",
    }),
  };

  protected override hints(): Hints {
    return NVKECTL_HINTS;
  }

  /**
   * What `get KIND NAME...` found: one name asked, the object itself (-o json prints an
   * object); several, a list. The view is built at print time, so ages are current after a wait.
   */
  protected async printFound<R>(output: OutputFormat, view: () => View<R>, found: R[], asked: number): Promise<void> {
    const [only] = found;
    if (asked === 1 && only !== undefined) await this.printOne(output, view(), only);
    else if (found.length > 0) await this.printList(output, view(), (add) => add(found));
  }

  /**
   * `get clusters` and `get nodepools` on the site acted on: without NAME, the list (with -w,
   * then each change); with NAMEs, those objects (--watch: each change of the one named until it
   * is Ready; --wait: nothing until each is Ready, then them), and the names not found in one
   * error. The kind is read with the controller's client, opened after the flags are checked.
   */
  protected async showOrWait<R>(
    flags: { output: OutputFormat; watch: boolean; wait: boolean },
    { intervalMs, timeoutMs, waitMs }: Timings & { waitMs: number },
    names: readonly string[],
    kindOf: (client: NvkeClient) => ProvisionedKind<R>,
  ): Promise<void> {
    const { output, watch, wait } = flags;
    const kind = kindOf(await this.controller());
    const view = kind.view();
    if (names.length === 0 && watch) {
      const printer = await this.watchPrinter(output, view);
      await kind.watch({ intervalMs, timeoutMs, onChange: (rows) => printer.print(rows) });
      return;
    }
    if (names.length === 0) {
      await this.printList(output, view, (add) => kind.list(add), kind.empty);
      return;
    }
    const { found, missing } = await kind.get(names);
    if (watch || wait) {
      if (missing.length > 0) throw kind.notFound(missing);
      const printer = watch ? await this.watchPrinter(output, view) : undefined;
      const ready: R[] = [];
      for (const row of found) {
        const last = await kind.waitReady(row, {
          timeoutMs: waitMs,
          intervalMs,
          onChange: (seen) => printer?.print([seen]),
        });
        if (last !== undefined) ready.push(last);
      }
      if (wait) await this.printFound(output, kind.view, ready, names.length);
      return;
    }
    await this.printFound(output, kind.view, found, names.length);
    if (missing.length > 0) throw kind.notFound(missing);
  }

  /** The site this invocation acts on: `--site` when given, else the active site (NV-8). */
  protected async site(): Promise<Site> {
    // Loaded on use: commands that need no site (sitespec generate) never pay for reading the config.
    const { currentSite } = await import("./services/sites.ts");
    const { site } = await currentSite({ site: (this.flags as { site?: string }).site });
    return site;
  }

  /**
   * The site cluster, read directly (get providers, get kubeconfig, version) with the site's
   * kubeconfig, each request bounded by --request-timeout as the controller's are. With no
   * site configured (and no --site), the kubeconfig kubectl would use: KUBECONFIG (every
   * file it lists, merged as kubectl merges them), or ~/.kube/config; `--context` picks a
   * context other than its current one, either way. `site` is the site, when one is configured.
   */
  protected async siteCluster(): Promise<SiteCluster & { site?: Site }> {
    const { kubectlRequestTimeout } = await import("./services/time.ts");
    const flags = this.flags as { "request-timeout"?: string };
    const text = flags["request-timeout"];
    const requestTimeoutMs = text === undefined ? undefined : parseDuration(text, "--request-timeout");
    const { target, from, site } = await this.siteTarget();
    return {
      ...target,
      ...(from === "site"
        ? {}
        : { what: from === "KUBECONFIG" ? "the kubeconfig KUBECONFIG names" : "~/.kube/config" }),
      runner: this.processRunner(),
      ...(requestTimeoutMs === undefined
        ? {}
        : { requestTimeout: kubectlRequestTimeout(requestTimeoutMs), requestTimeoutMs }),
      ...(site === undefined ? {} : { site }),
    };
  }

  /**
   * The site cluster's kubeconfig and `--context` as kubectl, helm and clusterctl are to be
   * given them: `--kubeconfig` when the command has it and it is given, else the site's, else
   * (no site configured) KUBECONFIG's files or ~/.kube/config. An unknown --context is
   * refused here (exit 2), before anything is read or run.
   */
  protected async siteTarget(): Promise<{ target: KubeTarget; from: KubeconfigOrigin | "--kubeconfig"; site?: Site }> {
    const flags = this.flags as { site?: string; context?: string; kubeconfig?: string };
    const context = flags.context === undefined ? {} : { context: flags.context };
    const { siteKubeconfig } = await import("./services/sites.ts");
    const found =
      flags.kubeconfig === undefined
        ? await siteKubeconfig({ site: flags.site, env: process.env, home: process.env.HOME || homedir() })
        : { target: { kubeconfig: flags.kubeconfig }, from: "--kubeconfig" as const };
    if (found.from === "KUBECONFIG" || found.from === "~/.kube/config")
      this.logger.debug(`no site is configured: using the kubeconfig ${found.target.kubeconfig} (${found.from})`);
    const target = { ...found.target, ...context };
    if (target.context !== undefined) {
      const { assertContext } = await import("./services/kubectl.ts");
      await assertContext(target);
    }
    return { ...found, target };
  }

  /**
   * The site's NVKE controller API, authenticated per NV-9. Every token is registered with
   * the redactor before it is used, so no log line or error can carry it. Each request has
   * one deadline (--request-timeout); with --wait or --watch, --timeout ends the whole command.
   */
  protected async controller(): Promise<NvkeClient> {
    // The site configuration is read (its files checked, read and parsed) while the
    // controller's modules load; its error, if any, is reported after the flags' own.
    const reading = this.site();
    reading.catch(() => {});
    const open = await this.controllerOpener();
    const site = await reading;
    traceStartup("site config read");
    return open(site);
  }

  /**
   * What opens a client for the NVKE controller API of any one site, with this invocation's
   * connection flags (read once): `controller()` for the site acted on, `--all-sites` for each.
   */
  protected async controllerOpener(): Promise<(site: Site) => Promise<NvkeClient>> {
    const flags = this.flags as {
      "request-timeout"?: string;
      "certificate-authority"?: string;
      timeout?: string;
      wait?: boolean;
      watch?: boolean;
    };
    const { openController, connectionOptions, dirLookups } = await import("./services/controller.ts");
    traceStartup("controller modules loaded");
    const waits = flags.wait === true || flags.watch === true;
    const connection = await connectionOptions({
      requestTimeoutMs:
        flags["request-timeout"] === undefined
          ? undefined
          : parseDuration(flags["request-timeout"], "--request-timeout"),
      certificateAuthority: flags["certificate-authority"],
      commandTimeout:
        waits && flags.timeout !== undefined
          ? { ms: parseDuration(flags.timeout, "--timeout"), text: flags.timeout, graceMs: DEADLINE_GRACE_MS }
          : undefined,
      env: process.env,
    });
    // One token cache for every site opened: its directories are checked once (--all-sites).
    const lookups = dirLookups();
    return (site) =>
      openController({
        site,
        ...connection,
        dirLookups: lookups,
        onToken: (token) => this.redactor.add(token, "the controller token"),
        debug: (message, fields) => this.logger.debug(message, fields),
        warn: (message) => this.logger.warn(message),
      });
  }

  /**
   * One configured site's cluster, read directly with its kubeconfig (`get providers
   * --all-sites`, for each site), each request bounded by --request-timeout.
   */
  protected async siteClusterOf(site: Site): Promise<SiteCluster> {
    const { kubectlRequestTimeout } = await import("./services/time.ts");
    const text = (this.flags as { "request-timeout"?: string })["request-timeout"];
    const requestTimeoutMs = text === undefined ? undefined : parseDuration(text, "--request-timeout");
    return {
      kubeconfig: site.kubeconfig,
      what: `site ${JSON.stringify(site.name)}'s kubeconfig`,
      runner: this.processRunner(),
      ...(requestTimeoutMs === undefined
        ? {}
        : { requestTimeout: kubectlRequestTimeout(requestTimeoutMs), requestTimeoutMs }),
    };
  }

  /**
   * `get … --all-sites`: `read` runs for every configured site (a bounded number at once);
   * the rows of the sites that answered print as one list
   * with a SITE column (`site` in -o json), then each site that failed is named on stderr with
   * its own error, and SOME_SITES_FAILED ends the command. No site configured is
   * NO_SITES_CONFIGURED. `--site` does not apply (as kubectl's -A overrides -n).
   */
  protected async printAcrossSites<T extends object>(
    output: OutputFormat,
    view: View<OnSite<T>>,
    read: (site: Site) => Promise<T[]>,
    emptyMessage?: string,
  ): Promise<void> {
    const { readSites } = await import("./services/sites.ts");
    const { acrossSites, mergeSiteResults, noSitesConfigured, someSitesFailed } = await import(
      "./services/all-sites.ts"
    );
    const { path, sites } = await readSites();
    if (sites.length === 0) throw noSitesConfigured(path);
    const { rows, failures } = mergeSiteResults(await acrossSites(sites, read));
    // With every site failed, a table would only say "No resources found.": the errors say more.
    if (rows.length > 0 || failures.length === 0 || !isTableFormat(output)) {
      await this.printList(output, view, (add) => add(rows), emptyMessage);
    }
    if (failures.length === 0) return;
    const context = { bin: this.config.bin, version: this.config.version, hints: this.hints() };
    for (const { site, error } of failures) {
      const failure = describeFailure(error, context);
      this.logger.error(
        `site ${JSON.stringify(site)}: ${failure.message}`,
        { site, ...failure.fields },
        failure.details,
      );
    }
    throw someSitesFailed(failures, sites.length);
  }
}
