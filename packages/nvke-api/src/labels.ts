// Kubernetes' rules for label (and taint) keys and values, and its label selectors, as
// apimachinery's validation.IsQualifiedName / IsValidLabelValue and labels.Parse have them.
// No dependencies: the CLI filters with the same code the controller validates with.

const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const NAME_PART_MAX = 63;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_SUBDOMAIN_MAX = 253;
const LABEL_VALUE_MAX = 63;

const NAME_PART_RULE =
  "must consist of letters, digits, '-', '_' or '.', and start and end with a letter or digit (e.g. 'MyName', 'my.name' or '123-abc')";

/**
 * Why `key` is not a valid label key (a Kubernetes qualified name: an optional DNS
 * subdomain prefix and `/`, then a name of at most 63 characters); undefined when it is one.
 */
export function labelKeyFault(key: string): string | undefined {
  const parts = key.split("/");
  if (parts.length > 2) {
    return "may hold one '/' at most: an optional prefix (a DNS subdomain such as example.com), '/', and a name";
  }
  const name = parts.at(-1) ?? "";
  if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    if (prefix === "") return "has an empty prefix before '/'";
    if (prefix.length > DNS_SUBDOMAIN_MAX) return `has a prefix longer than ${DNS_SUBDOMAIN_MAX} characters`;
    if (!DNS_SUBDOMAIN.test(prefix)) {
      return "has a prefix that is not a DNS subdomain (lowercase letters, digits, '-' and '.', such as example.com)";
    }
  }
  if (name === "") return "has an empty name";
  if (name.length > NAME_PART_MAX) return `has a name longer than ${NAME_PART_MAX} characters`;
  if (!NAME_PART.test(name)) return `has a name that ${NAME_PART_RULE}`;
  return undefined;
}

/** Why `value` is not a valid label (or taint) value; undefined when it is one. Empty is allowed. */
export function labelValueFault(value: string): string | undefined {
  if (value === "") return undefined;
  if (value.length > LABEL_VALUE_MAX) return `must be at most ${LABEL_VALUE_MAX} characters long`;
  if (!NAME_PART.test(value)) return `must be empty, or it ${NAME_PART_RULE}`;
  return undefined;
}

// ---------------------------------------------------------------------------------------
// Selectors: `-l env=prod,tier!=db,gpu,!legacy,zone in (a,b),team notin (x)`

export type Requirement =
  | { key: string; operator: "=" | "!="; value: string }
  | { key: string; operator: "in" | "notin"; values: string[] }
  | { key: string; operator: "exists" | "!exists" };

export type SelectorResult = { requirements: Requirement[]; problem?: undefined } | { problem: string };

/**
 * Parses a label selector as kubectl's `-l` takes it: requirements joined by commas, each
 * `key=value` (or `==`), `key!=value`, `key`, `!key`, `key in (v1,v2)` or `key notin (v1,v2)`.
 * An empty selector selects everything. Returns the first problem in words otherwise.
 */
export function parseSelector(text: string): SelectorResult {
  const requirements: Requirement[] = [];
  const source = text.trim();
  if (source === "") return { requirements };
  for (const part of splitRequirements(source)) {
    const parsed = parseRequirement(part.trim());
    if (typeof parsed === "string") return { problem: parsed };
    requirements.push(parsed);
  }
  return { requirements };
}

/** Commas separate requirements, except inside `( … )`. */
function splitRequirements(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")") depth--;
    else if (text[i] === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function parseRequirement(text: string): Requirement | string {
  if (text === "") return "has an empty requirement (two commas in a row, or one at an end)";
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(text);
  if (set !== null) {
    const [, key = "", operator, list = ""] = set;
    const values = list.split(",").map((value) => value.trim());
    const keyFault = checkKey(key);
    if (keyFault !== undefined) return keyFault;
    for (const value of values) {
      const fault = labelValueFault(value);
      if (fault !== undefined) return `has a value ${JSON.stringify(value)} for ${key} that ${fault}`;
    }
    return { key, operator: operator as "in" | "notin", values };
  }
  const comparison = /^(.+?)\s*(==|=|!=)\s*(.*)$/.exec(text);
  if (comparison !== null) {
    const [, key = "", operator, value = ""] = comparison;
    const keyFault = checkKey(key);
    if (keyFault !== undefined) return keyFault;
    const fault = labelValueFault(value);
    if (fault !== undefined) return `has a value ${JSON.stringify(value)} for ${key} that ${fault}`;
    return { key, operator: operator === "!=" ? "!=" : "=", value };
  }
  const negated = text.startsWith("!");
  const key = negated ? text.slice(1).trim() : text;
  const keyFault = checkKey(key);
  if (keyFault !== undefined) return keyFault;
  return { key, operator: negated ? "!exists" : "exists" };
}

function checkKey(key: string): string | undefined {
  const fault = labelKeyFault(key);
  return fault === undefined ? undefined : `has a key ${JSON.stringify(key)} that ${fault}`;
}

/** Whether labels satisfy every requirement (as Kubernetes: `!=` and `notin` also match when the key is absent). */
export function matchesSelector(
  labels: Readonly<Record<string, string>>,
  requirements: readonly Requirement[],
): boolean {
  return requirements.every((requirement) => {
    const has = Object.hasOwn(labels, requirement.key);
    const value = labels[requirement.key];
    switch (requirement.operator) {
      case "=":
        return has && value === requirement.value;
      case "!=":
        return !has || value !== requirement.value;
      case "in":
        return has && requirement.values.includes(value ?? "");
      case "notin":
        return !has || !requirement.values.includes(value ?? "");
      case "exists":
        return has;
      default:
        return !has;
    }
  });
}
