import { apiVersionField, checkedString, kindField, strictMapping, typeMessage } from "@nodekit/documents";
import * as z from "zod";
import { DEFAULT_AGENT_PORT, SITE_SPEC_API_VERSION, SITE_SPEC_KIND } from "./constants.ts";
import {
  ekThumbprintProblem,
  FirstSeen,
  hostNameProblem,
  ipIdentity,
  ipProblem,
  normalizeEkThumbprint,
  normalizeIp,
  siteNameProblem,
} from "./fields.ts";

// Messages complete a sentence that starts with the field's path and value, as
// formatProblem prints them: `field spec.hosts[2].ip: "10.0.0.300" is not a valid ...`.

const TpmAttestationSchema = strictMapping({
  enabled: z.boolean({ error: typeMessage("true or false") }),
  ekThumbprint: checkedString(ekThumbprintProblem).transform(normalizeEkThumbprint).optional(),
}).superRefine((tpm, context) => {
  if (tpm.enabled && tpm.ekThumbprint === undefined) {
    context.addIssue({ code: "custom", path: ["ekThumbprint"], message: "is required when tpm.enabled is true" });
  }
});

export const SiteSpecHostSchema = strictMapping({
  /** DNS-1123 label; becomes the Kubernetes node name. */
  name: checkedString(hostNameProblem),
  /** IPv4 or IPv6; read in any valid spelling and kept in canonical form. */
  ip: checkedString(ipProblem).transform(normalizeIp),
  /** Absent: the host is not attested. */
  attestation: strictMapping({ tpm: TpmAttestationSchema }).optional(),
});

const HostsSchema = z
  .array(SiteSpecHostSchema, { error: typeMessage("a list of hosts") })
  .min(1, { error: "must list at least one host" })
  .superRefine(
    (hosts, context) => {
      // Runs even when some hosts are invalid (`when` below), so that a duplicate is
      // reported alongside every other problem; hence the defensive reads.
      if (!Array.isArray(hosts)) return;
      const names = new FirstSeen<number>();
      const ips = new FirstSeen<number>();
      const thumbprints = new FirstSeen<number>();
      const claim = (seen: FirstSeen<number>, key: string, index: number, field: string[], what: string) => {
        const earlier = seen.claim(key, key, index);
        if (earlier !== undefined) {
          context.addIssue({
            code: "custom",
            path: [index, ...field],
            message: `is a duplicate ${what}: spec.hosts[${earlier.place}] already has it`,
          });
        }
      };
      hosts.forEach((host: unknown, index) => {
        if (!isRecord(host)) return;
        if (typeof host.name === "string" && hostNameProblem(host.name) === undefined) {
          claim(names, host.name, index, ["name"], "host name");
        }
        if (typeof host.ip === "string" && ipProblem(host.ip) === undefined) {
          claim(ips, ipIdentity(normalizeIp(host.ip)), index, ["ip"], "IP address");
        }
        const tpm = isRecord(host.attestation) && isRecord(host.attestation.tpm) ? host.attestation.tpm : undefined;
        if (tpm && typeof tpm.ekThumbprint === "string" && ekThumbprintProblem(tpm.ekThumbprint) === undefined) {
          claim(
            thumbprints,
            normalizeEkThumbprint(tpm.ekThumbprint),
            index,
            ["attestation", "tpm", "ekThumbprint"],
            "TPM EK thumbprint",
          );
        }
      });
    },
    { when: () => true },
  );

/**
 * The NVKE site spec: the site's name and the hosts it is built from. The format is
 * described in docs/sitespec.md. Parsing normalizes IPs and thumbprints and fills in
 * `spec.agentPort`.
 */
export const SiteSpecSchema = strictMapping({
  apiVersion: apiVersionField(SITE_SPEC_API_VERSION),
  kind: kindField(SITE_SPEC_KIND),
  metadata: strictMapping({ name: checkedString(siteNameProblem) }),
  spec: strictMapping({
    agentPort: z
      .number({ error: typeMessage("a port number") })
      .int({ error: "must be a whole number from 1 to 65535" })
      .min(1, { error: "must be a whole number from 1 to 65535" })
      .max(65535, { error: "must be a whole number from 1 to 65535" })
      .default(DEFAULT_AGENT_PORT),
    hosts: HostsSchema,
  }),
});

/** A valid site spec, as `SiteSpecSchema` returns it. */
export type SiteSpec = z.output<typeof SiteSpecSchema>;
/** One host of a site spec. */
export type SiteSpecHost = z.output<typeof SiteSpecHostSchema>;
/** What `SiteSpecSchema` accepts: `spec.agentPort` may be left out. */
export type SiteSpecInput = z.input<typeof SiteSpecSchema>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
