import type { Column, View } from "@nodekit/cli-kit";
import { errorCodes as coreErrorCodes, UserError } from "@nodekit/errors";
import { errorCodes } from "../errors.ts";
import { quotedList } from "./select.ts";

// `get clusters|nodepools|providers --all-sites` (-A), as kubectl's --all-namespaces: every
// configured site is asked at once (a bounded number at a time), and the answers are merged
// into one list with the site of each row. A site that fails is its own result, not the
// command's end: the others still print. This module is the pure part (the bounded fan-out
// over an injected per-site read, the merge, the view, the errors); the commands do the I/O.

/** How many sites `--all-sites` asks at once. */
const ALL_SITES_CONCURRENCY = 8;

/** What one site gave: its rows, or the error that ended its read. */
export type SiteResult<T> = { site: string; items: T[] } | { site: string; error: unknown };

/** A row of a site's answer, with the site it came from (`site` in -o json, the SITE column). */
export type OnSite<T> = { site: string } & T;

export interface SiteFailure {
  site: string;
  error: unknown;
}

/**
 * Runs `read` for every site, at most `concurrency` at once, and returns each site's result
 * in the order of `sites`. Never rejects: a site whose read throws is a result with its error.
 */
export async function acrossSites<S extends { name: string }, T>(
  sites: readonly S[],
  read: (site: S) => Promise<T[]>,
  concurrency = ALL_SITES_CONCURRENCY,
): Promise<SiteResult<T>[]> {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency ${concurrency} is not ≥ 1`);
  // Loaded here, not with the module: `get` imports this module on every read (siteView).
  const { default: PQueue } = await import("p-queue");
  const queue = new PQueue({ concurrency });
  return Promise.all(
    sites.map((site) =>
      queue.add(async (): Promise<SiteResult<T>> => {
        try {
          return { site: site.name, items: await read(site) };
        } catch (error) {
          return { site: site.name, error };
        }
      }),
    ),
  );
}

/**
 * One list out of every site's answer: the sites by name, each site's rows in the order it
 * sent them, each row the object as the site sent it with `site` first; and the sites that
 * failed, by name too. (`--sort-by` then reorders the rows; its sort is stable, so rows with
 * equal keys stay by site.)
 */
export function mergeSiteResults<T extends object>(
  results: readonly SiteResult<T>[],
): { rows: OnSite<T>[]; failures: SiteFailure[] } {
  const bySite = [...results].sort((a, b) => (a.site < b.site ? -1 : a.site > b.site ? 1 : 0));
  const rows: OnSite<T>[] = [];
  const failures: SiteFailure[] = [];
  for (const result of bySite) {
    if ("error" in result) failures.push({ site: result.site, error: result.error });
    else for (const item of result.items) rows.push({ site: result.site, ...item });
  }
  return { rows, failures };
}

/**
 * A kind's view with SITE as its first column, as kubectl -A adds NAMESPACE. `promote` names a
 * wide column to show in every format, second (the node pools' CLUSTER: across sites and
 * clusters a pool's name alone says little).
 */
export function siteView<T>(view: View<T>, options: { promote?: string } = {}): View<OnSite<T>> {
  const promoted = view.columns.filter((column) => column.header === options.promote);
  const rest = view.columns.filter((column) => column.header !== options.promote);
  const columns: Column<OnSite<T>>[] = [
    { header: "site", value: (row) => row.site },
    ...promoted.map(({ header, value }) => ({ header, value })),
    ...rest,
  ];
  return { ...view, columns } as View<OnSite<T>>;
}

/** NO_SITES_CONFIGURED: --all-sites with an empty site configuration. */
export function noSitesConfigured(path: string): UserError {
  return new UserError(errorCodes.NO_SITES_CONFIGURED, "--all-sites: no site is configured", {
    why: `${path} names no site (or does not exist yet)`,
    next: "add one: nvkectl config set-site NAME --url URL --kubeconfig FILE",
  });
}

/** SOME_SITES_FAILED: which sites did not answer, once the others' rows are printed. */
export function someSitesFailed(failures: readonly SiteFailure[], total: number): UserError {
  const names = failures.map((failure) => failure.site);
  const [only] = names;
  return new UserError(
    errorCodes.SOME_SITES_FAILED,
    `${failures.length} of ${total} sites did not answer: ${quotedList(names)}`,
    {
      why: "each site's own error is above; the rows of the sites that answered are printed",
      next: `ask one site alone for its full error: nvkectl get … --site ${only ?? "NAME"} -v`,
      facts: { failed: names.join(", "), sites: total },
    },
  );
}

/** The usage errors of --all-sites: a NAME, --watch and --wait take one site. */
export function checkAllSitesUsage(options: { kind: string; names: readonly string[] }): void {
  if (options.names.length > 0) {
    throw new UserError(
      coreErrorCodes.USAGE,
      `--all-sites lists; a ${options.kind} cannot be shown by NAME across sites`,
      {
        why: "names are unique within a site only, as kubectl's are within a namespace",
        next: `name the site instead: --site SITE, or list every site's with --all-sites and --selector or -o name`,
      },
    );
  }
}
