import { join } from "node:path";
import { Args, dryRunFlag, Flags, parseDuration, runProgress } from "@nodekit/cli-kit";
import { isUserError, UserError } from "@nodekit/errors";
import { dump } from "js-yaml";
import { contextFlag, NvkectlCommand } from "../base.ts";
import { errorCodes } from "../errors.ts";
import { registryAccess, registryFlags } from "../flags.ts";
import { emitArgoCdTree, emitFluxTree, install } from "../services/install.ts";
import { shippedDeployPath } from "../services/shipped.ts";
import { kubectlRequestTimeout } from "../services/time.ts";

export default class Install extends NvkectlCommand<typeof Install> {
  static override summary = "Install the NVKE controller stack on the site cluster.";
  static override description =
    `Runs, in this order: clusterctl init at the versions the deploy path pins (every provider and cert-manager from the stack config's local provider repository, never from the internet; clusterctl's version check off and its HOME isolated); the lab StorageClass; the NICo API key as the NICo provider's Secret nico-system/nico-credentials with the NicoIdentity that names it (what get providers reads), and the controller's copy; the deploy path item by item (helm upgrade --install --wait for chart items, server-side kubectl apply and a wait for manifest items), with images chosen for the architecture read from the nodes; the SPIRE patch of the Cluster API controllers; the NetworkPolicy admitting the client networks to the controller API; and the prune: what an earlier run applied and this one no longer renders is deleted if nvkectl still owns it, and what this run applies is recorded, with the release, the items' versions and digests and the stack config's hash, in the install record, the ConfigMap kube-system/nvkectl-install-record (the dry run names each deletion).

Before anything runs, and in a dry run alike, the site spec, the stack config (every REPLACE_* left is listed) and the whole deploy path are validated; kubectl, helm and clusterctl are asked their versions (clusterctl must be of the Cluster API series the deploy path pins), every problem listed at once; the cluster is read (nodes, installed providers); and the provider repository and --from-item are checked. --dry-run prints the plan those reads produced (with --from-item, as a run from that item executes it): every kubectl, helm and clusterctl call in order, one copy-pasteable line each, exactly what a real run executes. --request-timeout bounds each kubectl request to the site cluster (the --timeout of helm and of the waits is each deploy path item's timeout). A failure stops at its item and names the call; --from-item ITEM continues from there. Running it again changes nothing.

With --release FILE (the description release export wrote, from a reference release verify accepted), every chart item is pulled from the release by digest (helm upgrade --install oci://…@sha256:…), every image named in the values the install renders (keys named image or …Image, and the stack's images) is rewritten to the release's repository at its digest, and clusterctl's providers are installed from the components the release carries, each pulled and checked against its digest; the profile content image is the release's. Anything the release lacks is listed and nothing runs. --dry-run shows every digest. Without --release, the charts come from this checkout and their repositories, images.profiles names the profile content image, and images.controller may override the controller image. The components are pulled with the credential release verify uses (NODEKIT_REGISTRY_USERNAME/_PASSWORD first, only for NODEKIT_REGISTRY_HOST when set, then docker's config.json and helm's registry config), and so are the charts when that credential is in the environment: helm reads logins only from a file, so the install writes one for the run (<work dir>/helm-registry/config.json, 0600, removed when the run ends, also on failure or Ctrl-C) and passes it to helm as HELM_REGISTRY_CONFIG; the dry run names it, never its content. Without it, helm reads your helm registry config (or docker's config.json) as it is.

The NICo API key is read from the environment variable the stack config names (nico.apiKeyFromEnv, default NVKE_NICO_API_KEY); it goes to kubectl on stdin and never appears in argv, files or logs. docs/install.md walks through it; deploy/README.md lists the stack config keys, docs/deploy-path.md the deploy path format.

With --emit flux DIR, nothing on the cluster changes: after the same reads and checks, the same plan is rendered instead of applied (helm template for chart items, with the stack's values and images for the nodes' architecture; clusterctl generate provider for Cluster API; cert-manager's file from the provider repository) and written under DIR as Flux objects: DIR/oci/, an OCI image layout with one artifact per item in Flux's format (tagged with the item's name), and DIR/flux/, an OCIRepository per item pinned by the artifact's digest (at --flux-repository/<item>, verified with cosign against the public keys in Secret --flux-verify-secret unless --flux-verify none) and a Kustomization per item (dependsOn from the deploy path, prune, wait, the item's timeout; Cluster API's carries the SPIRE patch). The tree holds no Secret: the NICo key's Secrets are named on stderr for you to create. With --flux-push each artifact is also pushed by digest to --flux-repository, and with --flux-sign-key FILE signed there as cosign signs with a key (a sha256-<digest>.sig manifest beside it), which is what source-controller verifies against the public key in --flux-verify-secret; the key is read from the file and never printed. --flux-insecure marks the OCIRepositories for a plain-HTTP registry (push with --plain-http then). With --dry-run the files are listed and the Flux objects printed, and nothing is written or pushed. docs/gitops.md walks through it.

With --emit argocd DIR, the same items are rendered the same way and written as Argo CD objects: DIR/oci/, the OCI image layout with one artifact per item (the same manifests.yaml as Flux's, in the OCI image layer type Argo CD's repo-server accepts by default, application/vnd.oci.image.layer.v1.tar+gzip; Cluster API's with a kustomization.yaml carrying the SPIRE patch) and one more, app-of-apps, holding the items' Applications; DIR/argocd/applications/, an Application per item whose source is its artifact at --argocd-repository/<item> pinned by digest (automated sync with prune and self-heal, server-side apply, a sync wave standing for the deploy path's dependsOn); and DIR/argocd/app-of-apps.yaml, the Application you apply, whose source is the app-of-apps artifact pinned by digest. With --argocd-push every artifact is pushed by digest to --argocd-repository. Argo CD verifies no signature on an OCI source: the digest pin is the guarantee. With --dry-run the files are listed and the Applications printed as they would be written, and nothing is written or pushed.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> --sitespec sitespec.yaml --stack-config stack.yaml --dry-run",
    "NVKE_NICO_API_KEY=… <%= config.bin %> <%= command.id %> --sitespec sitespec.yaml --stack-config stack.yaml --kubeconfig my-tier0-site.kubeconfig",
    {
      description: "Install a verified release, every chart and image by digest (see what it pulls first):",
      command:
        "<%= config.bin %> <%= command.id %> --sitespec sitespec.yaml --stack-config stack.yaml --release release.json --dry-run",
    },
    {
      description: "Continue after a failure, from the item it named:",
      command:
        "<%= config.bin %> <%= command.id %> --sitespec sitespec.yaml --stack-config stack.yaml --from-item spire",
    },
  ];

  static override args = {
    dir: Args.string({
      description: "With --emit: the directory the tree is written to (empty, new, or an earlier tree).",
    }),
  };

  static override flags = {
    sitespec: Flags.string({ description: "The site spec (sitespec generate writes it).", required: true }),
    "stack-config": Flags.string({
      description: "The stack config beside the site spec (deploy/README.md lists its keys).",
      required: true,
    }),
    "deploy-path": Flags.string({
      description: "The deploy path directory. Default: the deploy path shipped with nvkectl (deploy/nico).",
    }),
    kubeconfig: Flags.string({
      description:
        "The site cluster's kubeconfig. Default: the active site's (or --site's); with no site configured, the one kubectl would use (KUBECONFIG, every file it lists, or ~/.kube/config).",
    }),
    context: contextFlag,
    "from-item": Flags.string({
      description: "Start at this item of the plan (after a failure); the items before it are skipped.",
    }),
    release: Flags.string({
      description:
        "A release description (release export wrote it): pull every chart, image and provider by the digest it pins.",
    }),
    ...registryFlags,
    "dry-run": dryRunFlag,
    output: Flags.option({
      char: "o",
      description: "With --dry-run: print the plan document as json or yaml instead of shell lines.",
      options: ["json", "yaml"] as const,
    })(),
    emit: Flags.option({
      description: "Write the install's plan as objects for this GitOps engine into DIR instead of applying it.",
      options: ["flux", "argocd"] as const,
    })(),
    "argocd-repository": Flags.string({
      description:
        "With --emit argocd: oci://HOST/PATH you push the artifacts to; item X's is HOST/PATH/X and the Applications' HOST/PATH/app-of-apps, each pinned by digest.",
      dependsOn: ["emit"],
    }),
    "argocd-push": Flags.boolean({
      description:
        "With --emit argocd: also push each artifact by digest to --argocd-repository (credentials as for --release: NODEKIT_REGISTRY_USERNAME/_PASSWORD or docker's config.json; --plain-http, --ca-file).",
      dependsOn: ["emit"],
    }),
    "flux-repository": Flags.string({
      description:
        "With --emit flux: oci://HOST/PATH you push the artifacts to; item X's is HOST/PATH/X, pinned by digest.",
      dependsOn: ["emit"],
    }),
    "flux-verify": Flags.option({
      description: "With --emit flux: how each OCIRepository verifies its artifact's signature.",
      options: ["cosign", "none"] as const,
      default: "cosign",
    })(),
    "flux-verify-secret": Flags.string({
      description:
        "With --emit flux: the Secret in flux-system holding the cosign public keys (*.pub) the artifacts are signed with.",
      default: "nvke-artifact-keys",
    }),
    "flux-insecure": Flags.boolean({
      description: "With --emit flux: the registry speaks plain HTTP (OCIRepository spec.insecure).",
      default: false,
    }),
    "flux-pull-secret": Flags.string({
      description:
        "With --emit flux: a docker-registry Secret in flux-system with pull credentials for --flux-repository (OCIRepository spec.secretRef); you create it.",
      dependsOn: ["emit"],
    }),
    "flux-push": Flags.boolean({
      description:
        "With --emit flux: also push each artifact by digest to --flux-repository (credentials as for --release: NODEKIT_REGISTRY_USERNAME/_PASSWORD or docker's config.json; --plain-http, --ca-file).",
      // No default: oclif checks dependsOn for every flag with a value, a default included
      // (with `default: false`, every install without --emit was refused).
      dependsOn: ["emit"],
    }),
    "flux-sign-key": Flags.string({
      description:
        "With --flux-push: sign each pushed artifact with this private key (PEM, ECDSA P-256, e.g. the release's signing key) as cosign does; Flux verifies it with the public key in --flux-verify-secret. The key is never printed.",
      dependsOn: ["flux-push"],
    }),
    "work-dir": Flags.string({
      description:
        "Where the install keeps the files it renders (values files, clusterctl's configuration, a release's provider components), kept private (0700). Default: $XDG_STATE_HOME/nvkectl/install/<site>.",
    }),
  };

  override async run(): Promise<void> {
    // nvkectl's global --request-timeout (base.ts) bounds each of the install's kubectl requests too.
    const requestTimeout = (this.flags as { "request-timeout"?: string })["request-timeout"];
    const requestTimeoutMs =
      requestTimeout === undefined ? undefined : parseDuration(requestTimeout, "--request-timeout");
    // A usage error before the kubeconfig is looked for, as every other flag's.
    if (requestTimeoutMs !== undefined) kubectlRequestTimeout(requestTimeoutMs);
    const { target } = await this.siteTarget();
    if (this.flags.emit !== undefined) return this.emit(target, requestTimeoutMs);
    const progress = this.flags["dry-run"] ? undefined : await this.progress();
    try {
      const { plan } = await install({
        inputs: await this.inputs(target, requestTimeoutMs),
        runner: this.processRunner(),
        dryRun: this.flags["dry-run"],
        fromItem: this.flags["from-item"],
        ...(progress === undefined ? {} : { onEvent: runProgress(progress) }),
      });
      if (this.flags["dry-run"]) await this.printPlan(plan, this.flags.output ?? "table");
      else this.logger.info(`installed the NVKE controller stack (${plan.items.length} items)`);
    } catch (error) {
      throw resumeHint(error, this.config.bin, this.argv);
    } finally {
      progress?.close();
    }
  }

  /** What the install reads, the same for applying the plan and for emitting it (--emit flux). */
  private async inputs(target: Awaited<ReturnType<Install["siteTarget"]>>["target"], requestTimeoutMs?: number) {
    return {
      siteSpec: this.flags.sitespec,
      stackConfig: this.flags["stack-config"],
      deployPath: this.flags["deploy-path"] ?? (await shippedDeployPath(this.config.root)),
      ...target,
      workDir: this.flags["work-dir"],
      redactor: this.redactor,
      release: this.flags.release,
      registry: registryAccess(this.flags, (message: string) => this.logger.warn(message)),
      requestTimeoutMs,
    };
  }

  private async emit(target: Awaited<ReturnType<Install["siteTarget"]>>["target"], requestTimeoutMs?: number) {
    if (this.flags.emit === "argocd") return this.emitArgoCd(target, requestTimeoutMs);
    const { dir, repository } = this.emitTarget(
      "flux",
      errorCodes.FLUX_EMIT_USAGE,
      ["argocd-repository", "argocd-push"],
      {
        others: "the --argocd-* flags are --emit argocd's; --emit flux has --flux-repository and --flux-push",
        needs: "the tree is written to DIR, and its OCIRepositories name where you push the artifacts",
      },
    );
    const result = await emitFluxTree({
      inputs: await this.inputs(target, requestTimeoutMs),
      runner: this.processRunner(),
      dir,
      dryRun: this.flags["dry-run"],
      repository,
      verify:
        this.flags["flux-verify"] === "none"
          ? undefined
          : { provider: "cosign", secret: this.flags["flux-verify-secret"] },
      insecure: this.flags["flux-insecure"],
      pullSecret: this.flags["flux-pull-secret"],
      push: this.flags["flux-push"]
        ? { access: this.pushAccess(), signingKeyFile: this.flags["flux-sign-key"] }
        : undefined,
    });
    for (const secret of result.secrets)
      this.logger.info(`the tree references Secret ${secret}: create it on the site (docs/gitops.md)`);
    if (this.flags["dry-run"]) {
      await this.out(
        [...wouldWrite(dir, result.files), ...result.objects.map((o) => `---\n${dump(o, { lineWidth: -1 })}`)].join(
          "\n",
        ),
        {
          raw: true,
        },
      );
      return;
    }
    await this.out(
      aligned([
        ["ITEM", "DIGEST", "DEPENDS ON"],
        ...result.items.map((item, i) => [
          item.name,
          result.artifacts[i]?.digest ?? "",
          item.dependsOn.join(",") || "-",
        ]),
      ]),
    );
    this.logger.info(`wrote the Flux tree for ${result.items.length} items to ${dir} (${result.architecture})`);
    for (const pushed of result.pushed) {
      this.logger.info(
        `pushed ${pushed.reference}${pushed.signature === undefined ? "" : `, signed (${pushed.signature})`}`,
      );
    }
  }

  private async emitArgoCd(target: Awaited<ReturnType<Install["siteTarget"]>>["target"], requestTimeoutMs?: number) {
    const { dir, repository } = this.emitTarget(
      "argocd",
      errorCodes.ARGOCD_EMIT_USAGE,
      ["flux-repository", "flux-push", "flux-sign-key", "flux-pull-secret"],
      {
        others:
          "the --flux-* flags are --emit flux's; --emit argocd has --argocd-repository and --argocd-push (Argo CD verifies no signature on an OCI source)",
        needs: "the tree is written to DIR, and its Applications name where you push the artifacts",
      },
    );
    const result = await emitArgoCdTree({
      inputs: await this.inputs(target, requestTimeoutMs),
      runner: this.processRunner(),
      dir,
      dryRun: this.flags["dry-run"],
      repository,
      push: this.flags["argocd-push"] ? { access: this.pushAccess() } : undefined,
    });
    for (const secret of result.secrets)
      this.logger.info(`the tree references Secret ${secret}: create it on the site (docs/gitops.md)`);
    if (this.flags["dry-run"]) {
      // The Applications as the run writes them: the files' own text.
      const applications = result.files
        .filter((f) => f.path.endsWith(".yaml"))
        .map((f) => `---\n${new TextDecoder().decode(f.bytes)}`);
      await this.out([...wouldWrite(dir, result.files), ...applications].join("\n"), { raw: true });
      return;
    }
    await this.out(
      aligned([
        ["APPLICATION", "DIGEST", "SYNC WAVE"],
        ...[...result.applications, result.appOfApps].map((a) => [
          a.metadata.name,
          (a.spec as { source: { targetRevision: string } }).source.targetRevision,
          (a.metadata.annotations as Record<string, string> | undefined)?.["argocd.argoproj.io/sync-wave"] ?? "-",
        ]),
      ]),
    );
    this.logger.info(`wrote the Argo CD tree for ${result.items.length} items to ${dir} (${result.architecture})`);
    for (const pushed of result.pushed) this.logger.info(`pushed ${pushed.reference}`);
  }

  /**
   * DIR and --ENGINE-repository, which --emit `engine` needs, refusing a missing one and any of
   * `others` (the other engine's flags) given; `why` says what those are, and what the two name.
   */
  private emitTarget(
    engine: "flux" | "argocd",
    code: typeof errorCodes.FLUX_EMIT_USAGE | typeof errorCodes.ARGOCD_EMIT_USAGE,
    others: readonly (
      | "argocd-repository"
      | "argocd-push"
      | `flux-${"repository" | "push" | "sign-key" | "pull-secret"}`
    )[],
    why: { others: string; needs: string },
  ): { dir: string; repository: string } {
    const next = `${this.config.bin} install --emit ${engine} DIR --${engine}-repository oci://registry.example.com/nvke …`;
    const given = others.filter((flag) => this.flags[flag] !== undefined);
    if (given.length > 0) {
      throw new UserError(code, `--emit ${engine} does not take --${given.join(", --")}`, { why: why.others, next });
    }
    const dir = this.args.dir;
    const repository = this.flags[`${engine}-repository`];
    if (dir === undefined || repository === undefined) {
      const missing = dir === undefined ? "the directory to write (DIR)" : `--${engine}-repository oci://HOST/PATH`;
      throw new UserError(code, `--emit ${engine} needs ${missing}`, { why: why.needs, next });
    }
    return { dir, repository };
  }

  /** How --flux-push and --argocd-push reach the registry (the registry flags). */
  private pushAccess() {
    return { ...registryAccess(this.flags, (message: string) => this.logger.warn(message)), redactor: this.redactor };
  }
}

/** Rows of three columns as text, the first two padded to their widest cell, three spaces apart. */
function aligned(rows: readonly (readonly string[])[]): string {
  const width = (column: number) => Math.max(...rows.map((row) => (row[column] ?? "").length));
  return rows
    .map((row) => `${(row[0] ?? "").padEnd(width(0))}   ${(row[1] ?? "").padEnd(width(1))}   ${row[2]}`)
    .join("\n");
}

/** The tree's files as `--dry-run` lists them. */
const wouldWrite = (dir: string, files: readonly { path: string; bytes: Uint8Array }[]) =>
  files.map((f) => `# would write ${join(dir, f.path)} (${f.bytes.length} bytes)`);

/**
 * A failure in an item of the plan, with the command that continues from it (what
 * docs/install.md promises): the same command line, its --from-item that item.
 */
export function resumeHint(error: unknown, bin: string, argv: readonly string[], command = "install"): unknown {
  if (!isUserError(error) || typeof error.facts.planItem !== "string") return error;
  const item = error.facts.planItem;
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--from-item") i++;
    else if (!arg.startsWith("--from-item=")) kept.push(arg);
  }
  const quoted = [...kept, "--from-item", item].map((arg) =>
    /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`,
  );
  return new UserError(error.errorCode, error.message, {
    why: error.why,
    problems: error.problems,
    facts: error.facts,
    cause: error,
    next: [...error.next, `after fixing the cause, continue from ${item}: ${bin} ${command} ${quoted.join(" ")}`],
  });
}
