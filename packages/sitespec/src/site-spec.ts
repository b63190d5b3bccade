import { hasErrors, type Problem } from "@nodekit/errors";
import { dump } from "js-yaml";
import { DEFAULT_AGENT_PORT, SITE_SPEC_API_VERSION, SITE_SPEC_KIND } from "./constants.ts";
import { siteNameProblem } from "./fields.ts";
import { type Host, parseHostsCsv } from "./hosts-csv.ts";
import type { SiteSpec, SiteSpecHost } from "./schema.ts";

export interface BuildSiteSpecOptions {
  /** metadata.name: a DNS-1123 label. Not checked here; generateSiteSpec checks it. */
  siteName: string;
  /** spec.agentPort; 8443 when left out. */
  agentPort?: number;
}

/**
 * The site spec for hosts that parseHostsCsv accepted. It does not validate them again:
 * check a spec from anywhere else with `SiteSpecSchema.safeParse` or `parseSiteSpec`.
 */
export function buildSiteSpec(hosts: readonly Host[], options: BuildSiteSpecOptions): SiteSpec {
  return {
    apiVersion: SITE_SPEC_API_VERSION,
    kind: SITE_SPEC_KIND,
    metadata: { name: options.siteName },
    spec: {
      agentPort: options.agentPort ?? DEFAULT_AGENT_PORT,
      hosts: hosts.map((host) =>
        host.tpmEkThumbprint === undefined
          ? { name: host.name, ip: host.ip }
          : {
              name: host.name,
              ip: host.ip,
              attestation: { tpm: { enabled: true, ekThumbprint: host.tpmEkThumbprint } },
            },
      ),
    },
  };
}

export interface RenderSiteSpecOptions {
  /** The file the spec was generated from, named in a comment at the top. */
  generatedFrom?: string;
}

/**
 * The spec as YAML. Keys come out in the documented order whatever order the object has
 * them in, so the same spec always renders to the same bytes.
 */
export function renderSiteSpec(spec: SiteSpec, options: RenderSiteSpecOptions = {}): string {
  const ordered = {
    apiVersion: spec.apiVersion,
    kind: spec.kind,
    metadata: { name: spec.metadata.name },
    spec: { agentPort: spec.spec.agentPort, hosts: spec.spec.hosts.map(orderHost) },
  };
  const body = dump(ordered, { lineWidth: -1, noRefs: true });
  if (options.generatedFrom === undefined) return body;
  const from = options.generatedFrom.replace(/[\r\n]+/g, " ");
  return `# NVKE site spec, generated from ${from}.\n# Change the hosts file and generate it again rather than editing it here.\n${body}`;
}

function orderHost(host: SiteSpecHost): SiteSpecHost {
  const tpm = host.attestation?.tpm;
  if (tpm === undefined) return { name: host.name, ip: host.ip };
  const ordered =
    tpm.ekThumbprint === undefined
      ? { enabled: tpm.enabled }
      : { enabled: tpm.enabled, ekThumbprint: tpm.ekThumbprint };
  return { name: host.name, ip: host.ip, attestation: { tpm: ordered } };
}

export interface GenerateSiteSpecOptions {
  /** The hosts CSV's text. */
  csvText: string;
  /** The CSV's file name, as the user gave it: named in problems and in the YAML's header comment. */
  source: string;
  /** metadata.name of the site: a DNS-1123 label. */
  siteName: string;
}

export interface GeneratedSiteSpec {
  /** The rendered YAML; absent when there is any error. */
  yaml?: string;
  /** The spec; absent when there is any error. */
  spec?: SiteSpec;
  /** Every problem: the site name's, then the CSV's in file order. Warnings do not stop generation. */
  problems: Problem[];
}

/** Hosts CSV in, site spec YAML out, or every problem and nothing else. */
export function generateSiteSpec(options: GenerateSiteSpecOptions): GeneratedSiteSpec {
  const nameFault = siteNameProblem(options.siteName);
  const parsed = parseHostsCsv(options.csvText, { source: options.source });
  const problems: Problem[] =
    nameFault === undefined
      ? parsed.problems
      : [{ severity: "error", source: "site name", value: options.siteName, message: nameFault }, ...parsed.problems];
  if (hasErrors(problems)) return { problems };
  const spec = buildSiteSpec(parsed.hosts, { siteName: options.siteName });
  return { spec, yaml: renderSiteSpec(spec, { generatedFrom: options.source }), problems };
}
