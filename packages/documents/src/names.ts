// The one rule for names that become Kubernetes object names (RFC 1123 labels): site,
// host, cluster and pool names. No dependencies, so start-up paths can use it freely.

export const DNS_LABEL_MAX_LENGTH = 63;
export const DNS_LABEL_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The rule in words, to complete "… so it must be <rule>". */
export const DNS_LABEL_RULE =
  'a DNS-1123 label: lowercase letters, digits and "-", at most 63 characters, starting and ending with a letter or digit';

export function isDnsLabel(value: string): boolean {
  return value.length <= DNS_LABEL_MAX_LENGTH && DNS_LABEL_PATTERN.test(value);
}

/** Why `value` is not a DNS-1123 label, in words ("contains uppercase letters"); undefined when it is one. */
export function dnsLabelFault(value: string): string | undefined {
  if (value === "") return "is empty";
  if (value.length > DNS_LABEL_MAX_LENGTH) return `is ${value.length} characters long`;
  if (/[A-Z]/.test(value)) return "contains uppercase letters";
  const bad = /[^a-z0-9-]/.exec(value);
  if (bad) return `contains ${JSON.stringify(bad[0])}`;
  if (value.startsWith("-")) return 'starts with "-"';
  if (value.endsWith("-")) return 'ends with "-"';
  return undefined;
}
