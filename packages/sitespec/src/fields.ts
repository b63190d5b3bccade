import { isIP } from "node:net";
import { DNS_LABEL_RULE, dnsLabelFault } from "@nodekit/documents";

// The rules for one host's fields, shared by the CSV parser and the YAML schema so that
// both say the same thing about the same value. Each check returns the reason a value is
// wrong (completing the sentence `"<value>" <reason>`), or undefined when it is fine.

export function hostNameProblem(value: string): string | undefined {
  if (value === "") return "is empty; every host needs a name";
  const fault = dnsLabelFault(value);
  if (fault === undefined) return undefined;
  return `is not a valid host name: it ${fault}; a host name becomes the Kubernetes node name, so it must be ${DNS_LABEL_RULE}`;
}

export function siteNameProblem(value: string): string | undefined {
  if (value === "") return "is empty; the site needs a name";
  const fault = dnsLabelFault(value);
  if (fault === undefined) return undefined;
  return `is not a valid site name: it ${fault}; a site name names the site cluster and its kubeconfig, so it must be ${DNS_LABEL_RULE}`;
}

export function ipProblem(value: string): string | undefined {
  if (value === "") return "is empty; every host needs an IP address";
  if (value.includes("%")) return "is not a valid IP address: a zone index (%…) only has meaning on one machine";
  if (isIP(value) === 0) return "is not a valid IPv4 or IPv6 address";
  return undefined;
}

const MAPPED_IPV4 = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/**
 * The canonical text of a valid address: IPv4 as written (node:net accepts only the
 * dotted-decimal form), IPv6 in RFC 5952 form (lowercase, longest zero run compressed),
 * with an IPv4-mapped address written `::ffff:a.b.c.d`.
 */
export function normalizeIp(value: string): string {
  if (isIP(value) !== 6) return value;
  const compressed = new URL(`http://[${value}]/`).hostname.slice(1, -1);
  const mapped = MAPPED_IPV4.exec(compressed);
  return mapped ? `::ffff:${mappedToIpv4(mapped[1] ?? "0", mapped[2] ?? "0")}` : compressed;
}

/**
 * The key two addresses share exactly when they name the same host: `::1` and
 * `0:0:0:0:0:0:0:1` share one, and so do `::ffff:10.0.0.1` and `10.0.0.1`.
 */
export function ipIdentity(normalized: string): string {
  return normalized.startsWith("::ffff:") && isIP(normalized.slice(7)) === 4 ? normalized.slice(7) : normalized;
}

function mappedToIpv4(high: string, low: string): string {
  const hi = Number.parseInt(high, 16);
  const lo = Number.parseInt(low, 16);
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join(".");
}

const THUMBPRINT_RULE =
  "expected the SHA-256 digest of the TPM endorsement key as 64 hex digits, optionally written as colon-separated pairs";
const PLAIN_THUMBPRINT = /^[0-9a-fA-F]{64}$/;
const PAIRED_THUMBPRINT = /^[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){31}$/;

export function ekThumbprintProblem(value: string): string | undefined {
  if (PLAIN_THUMBPRINT.test(value) || PAIRED_THUMBPRINT.test(value)) return undefined;
  const bad = /[^0-9a-fA-F:]/.exec(value);
  let found: string;
  if (bad) found = `found ${JSON.stringify(bad[0])}`;
  else if (value.includes(":")) {
    const digits = value.replaceAll(":", "").length;
    found = digits === 64 ? "colons must separate every pair of digits" : `found ${digits} hex digits`;
  } else found = `found ${value.length} hex digits`;
  return `is not a valid TPM EK thumbprint: ${THUMBPRINT_RULE} (${found})`;
}

/** Lowercase hex without colons. Only for values `ekThumbprintProblem` accepts. */
export function normalizeEkThumbprint(value: string): string {
  return value.replaceAll(":", "").toLowerCase();
}

/**
 * The first place each key was seen, so that a repeat can name it. A Map keeps the
 * check linear in the number of hosts.
 */
export class FirstSeen<Place> {
  readonly #seen = new Map<string, { place: Place; spelling: string }>();

  /** Records `key` at `place`; returns the earlier place and spelling when it was already seen. */
  claim(key: string, spelling: string, place: Place): { place: Place; spelling: string } | undefined {
    const earlier = this.#seen.get(key);
    if (earlier) return earlier;
    this.#seen.set(key, { place, spelling });
    return undefined;
  }
}
