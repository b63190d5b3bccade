import { basename, dirname, join, relative, resolve } from "node:path";
import type { ChartItem, DeployPath, DeployPathItem } from "@nodekit/deploy-path";
import { readInputFile } from "@nodekit/documents";
import { invalidInput, type Problem, UserError } from "@nodekit/errors";
import type { ReleaseDescription } from "@nodekit/release";
import { dump, load } from "js-yaml";
import { errorCodes } from "../errors.ts";
import type { RegistryAccess } from "./release-artifacts.ts";

// `install --release`: the deploy path pinned to a release description. Every chart item is
// pulled from the release's OCI reference at its digest, every image named in the values the
// install renders is rewritten to the release's repository at its digest, and the Cluster API
// providers' components come from the release. Anything the release does not carry is listed,
// all at once, before the cluster is touched.

type Lib = Pick<typeof import("@nodekit/release"), "releaseImageFor" | "pinnedProfiles" | "parseReleaseDescription">;

/** One values file of a chart item, rewritten with its images pinned. */
export interface PinnedValuesFile {
  item: string;
  /** The file in the deploy path. */
  source: string;
  /** The rewritten copy the install writes and helm reads. */
  path: string;
  content: string;
  pins: Array<{ field: string; from: string; to: string }>;
}

export interface ReleasePinning {
  release: ReleaseDescription;
  /** Where the description was read from, as the user named it. */
  source: string;
  deployPath: DeployPath;
  values: PinnedValuesFile[];
}

/**
 * The content of every artifact the install pulls or pins — its charts, the images it pins, the
 * providers' components, the profiles (all but the nvkectl builds, which are for clients) —
 * read from the registry and hashed, every byte, before the first change: a blob whose stored
 * bytes were changed fails here, naming the artifact and its part (RELEASE_ARTIFACT_CORRUPT,
 * exit 1; RELEASE_ARTIFACT_MISSING, exit 4), not in helm halfway through the install.
 */
export async function checkReleaseContent(pinning: ReleasePinning, access: RegistryAccess): Promise<void> {
  const { assertContent, checkArtifactContent, listedArtifacts } = await import("@nodekit/release");
  const { openRegistry } = await import("./release-artifacts.ts");
  const artifacts = listedArtifacts(pinning.release).filter((artifact) => !artifact.field.startsWith("nvkectl["));
  const report = await checkArtifactContent(await openRegistry(access), artifacts);
  assertContent(report, artifacts, { reference: pinning.source }, "nothing was changed");
}

/** Read and parse the release description `install --release` names (RELEASE_INVALID lists every problem). */
export async function readReleaseFile(path: string, cwd: string, lib: Lib): Promise<ReleaseDescription> {
  let text: string;
  try {
    text = (await readInputFile(resolve(cwd, path), { source: path, what: "release description" })).toString("utf8");
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(errorCodes.RELEASE_FILE_UNREADABLE, `release description ${path} cannot be read`, {
      why: (error as NodeJS.ErrnoException).code === "ENOENT" ? "there is no such file" : String(error),
      facts: { file: path },
    });
  }
  const parsed = lib.parseReleaseDescription(text, { source: path });
  if (parsed.value === undefined) {
    const { releaseErrorCodes } = await import("@nodekit/release");
    throw invalidInput(releaseErrorCodes.RELEASE_INVALID, path, parsed.problems, undefined, "nothing was changed");
  }
  return parsed.value;
}

const isImageField = (key: string | number, parent: string | number | undefined) =>
  (typeof key === "string" && /image$/i.test(key)) || parent === "images";

/** Rewrite every image reference in a values tree; `pin` answers the pinned reference or records a problem. */
function pinTree(
  value: unknown,
  path: Array<string | number>,
  pin: (reference: string, path: Array<string | number>) => string | undefined,
): unknown {
  if (Array.isArray(value)) return value.map((v, i) => visit(v, [...path, i], path.at(-1)));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, visit(v, [...path, k], path.at(-1))]),
    );
  }
  return value;
  function visit(v: unknown, at: Array<string | number>, parent: string | number | undefined): unknown {
    const key = at.at(-1) ?? "";
    if (typeof v === "string" && v !== "" && isImageField(key, parent)) return pin(v, at) ?? v;
    return pinTree(v, at, pin);
  }
}

/** A pinner over the release's images: problems for images the release does not carry. */
function imagePinner(release: ReleaseDescription, lib: Lib, problems: Problem[]) {
  return (source: string, reference: string, path: Array<string | number>): string | undefined => {
    const match = lib.releaseImageFor(reference, release);
    if (match.found) return match.pinned;
    problems.push({
      severity: "error",
      source,
      path,
      value: reference,
      message:
        match.reason === "ambiguous"
          ? "matches more than one image of the release by name; name the release's repository"
          : match.reason === "not-a-reference"
            ? "is not a registry/repository[:tag] reference, so the release cannot pin it"
            : "is not in the release, so it cannot be pulled by digest",
    });
    return undefined;
  };
}

async function chartName(item: ChartItem): Promise<string> {
  if (item.localChart === undefined) return basename(item.pin.chart);
  try {
    const chart = load((await readInputFile(join(item.localChart, "Chart.yaml"))).toString("utf8")) as {
      name?: unknown;
    };
    if (typeof chart?.name === "string") return chart.name;
  } catch {
    // The deploy path reader checked the chart; a chart without a readable name falls back to its pin.
  }
  return basename(item.pin.chart);
}

/**
 * The deploy path with every chart item pinned to the release (an `oci://…` reference at its
 * digest), and the values files that name images rewritten to the release's digests.
 * Throws RELEASE_INCOMPLETE_FOR_INSTALL (charts) or RELEASE_IMAGE_NOT_PINNED (images) with
 * every problem at once.
 */
export async function pinDeployPath(
  deployPath: DeployPath,
  release: ReleaseDescription,
  options: { source: string; workDir: string; lib: Lib },
): Promise<ReleasePinning> {
  const missingCharts: Problem[] = [];
  const imageProblems: Problem[] = [];
  const pinImage = imagePinner(release, options.lib, imageProblems);
  const values: PinnedValuesFile[] = [];
  const items: DeployPathItem[] = [];
  for (const item of deployPath.items) {
    if (item.kind !== "chart") {
      items.push(item);
      continue;
    }
    const name = await chartName(item);
    const chart = release.charts.find((c) => c.name === name);
    if (chart === undefined) {
      missingCharts.push({
        severity: "error",
        source: options.source,
        path: ["charts"],
        message: `has no chart ${JSON.stringify(name)}, which deploy path item ${item.name} installs`,
      });
      continue;
    }
    const valuesFiles: string[] = [];
    for (const file of item.valuesFiles) {
      const shown = relative(dirname(deployPath.root), file);
      const tree = load((await readInputFile(file, { source: shown, what: "values file" })).toString("utf8")) ?? {};
      const pins: PinnedValuesFile["pins"] = [];
      const pinned = pinTree(tree, [], (reference, path) => {
        const to = pinImage(shown, reference, path);
        if (to !== undefined) pins.push({ field: path.join("."), from: reference, to });
        return to;
      });
      if (pins.length === 0) {
        valuesFiles.push(file);
        continue;
      }
      const path = join(options.workDir, "release-values", item.name, basename(file));
      values.push({ item: item.name, source: shown, path, content: dump(pinned, { lineWidth: -1 }), pins });
      valuesFiles.push(path);
    }
    const reference = chart.reference.startsWith("oci://") ? chart.reference : `oci://${chart.reference}`;
    const { localChart: _local, ...rest } = item;
    items.push({
      ...rest,
      pin: {
        ...item.pin,
        repository: dirname(reference),
        chart: basename(reference),
        version: chart.version,
        digest: chart.digest,
      },
      valuesFiles,
    });
  }
  if (missingCharts.length > 0) {
    throw new UserError(
      errorCodes.RELEASE_INCOMPLETE_FOR_INSTALL,
      `release ${options.source} lacks ${missingCharts.length} chart${missingCharts.length === 1 ? "" : "s"} deploy path ${deployPath.name} installs; nothing was changed`,
      { problems: missingCharts, next: "use the release built for this deploy path, or install without --release" },
    );
  }
  if (imageProblems.length > 0) throw imagesNotPinned(imageProblems, options.source);
  return { release, source: options.source, deployPath: { ...deployPath, items }, values };
}

function imagesNotPinned(problems: Problem[], source: string): UserError {
  return new UserError(
    errorCodes.RELEASE_IMAGE_NOT_PINNED,
    `${problems.length} image${problems.length === 1 ? "" : "s"} in the values the install renders ${problems.length === 1 ? "is" : "are"} not in release ${source}; nothing was changed`,
    {
      problems,
      why: "with a release, every image is pulled by digest, and only the release says which digest",
      next: "use the release built for this deploy path, or remove the image from the values",
    },
  );
}

/** The stack's images with a release: the profile image from the release, an images.controller override pinned by it. */
export function pinStackImages(
  release: ReleaseDescription,
  controller: string | undefined,
  options: { source: string; lib: Lib },
): { profiles: string; controller?: string } {
  const problems: Problem[] = [];
  const pin = imagePinner(release, options.lib, problems);
  const pinnedController =
    controller === undefined ? undefined : pin("the stack config", controller, ["images", "controller"]);
  if (problems.length > 0) throw imagesNotPinned(problems, options.source);
  return {
    profiles: options.lib.pinnedProfiles(release),
    ...(pinnedController === undefined ? {} : { controller: pinnedController }),
  };
}
