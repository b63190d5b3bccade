import type { Problem } from "@nodekit/errors";
import { constructFromEvents, dump, type Event, parseEvents, YAMLException } from "js-yaml";
import type { z } from "zod";
import { type FieldPath, type Locator, locateFields } from "./locate.ts";
import { emptyConfig, type SiteConfig, siteConfigSchema } from "./schema.ts";

export interface ParseOptions {
  /** How problems name the input: the file path as the user would recognise it. */
  source: string;
}

export interface ParseResult {
  /** The configuration, when there is no error problem. */
  config?: SiteConfig;
  /** Every problem found, each with its line and field path. */
  problems: Problem[];
}

/**
 * Parse the text of nvkectl's config file. An empty document (or one holding only
 * comments) is an empty configuration. Never throws: YAML syntax errors, schema
 * violations, duplicate site names and an `activeSite` that names no site all come
 * back as problems, every one of them in a single pass.
 */
export function parseConfig(text: string, options: ParseOptions): ParseResult {
  const { source } = options;
  let events: Event[];
  let documents: unknown[];
  try {
    events = parseEvents(text, { filename: source });
    documents = constructFromEvents(events, { source: text, filename: source });
  } catch (error) {
    return { problems: [yamlProblem(error, source)] };
  }
  if (documents.length > 1) {
    return {
      problems: [
        {
          severity: "error",
          source,
          message: `holds ${documents.length} YAML documents; the config file holds exactly one`,
        },
      ],
    };
  }
  const document = documents[0];
  if (document === undefined || document === null) return { config: emptyConfig(), problems: [] };
  const locator = locateFields(text, events);
  const problems = checkConfig(document, source, locator);
  if (problems.length > 0) return { problems };
  return { config: siteConfigSchema.parse(document) as SiteConfig, problems: [] };
}

/**
 * Check a configuration value (parsed from YAML, or built in code before saving) against
 * the schema and the cross-field rules. Returns every problem; none means it is valid.
 */
export function validateConfig(value: unknown, options: ParseOptions): Problem[] {
  return checkConfig(value, options.source, undefined);
}

function checkConfig(value: unknown, source: string, locator: Locator | undefined): Problem[] {
  const at = (path: FieldPath, message: string, found?: unknown): Problem => {
    const line = locator?.lineOf(path);
    const problem: Problem = { severity: "error", source, path, message };
    if (line !== undefined) problem.line = line;
    if (typeof found === "string" || typeof found === "number" || typeof found === "boolean") {
      problem.value = String(found);
    }
    return problem;
  };

  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return [at([], "must be a mapping with apiVersion, kind and sites")];
  }
  const result = siteConfigSchema.safeParse(value, { reportInput: true });
  const problems = result.success ? [] : result.error.issues.flatMap((issue) => issueProblems(issue, at));
  // The cross-field rules run on whatever parts are well-formed, so one pass reports everything.
  const raw = value as { activeSite?: unknown; sites?: unknown };
  const sites: unknown[] = Array.isArray(raw.sites) ? raw.sites : [];
  const seen = new Map<string, number>();
  sites.forEach((site, index) => {
    const name = typeof site === "object" && site !== null ? (site as { name?: unknown }).name : undefined;
    if (typeof name !== "string") return;
    const first = seen.get(name);
    if (first === undefined) seen.set(name, index);
    else
      problems.push(
        at(["sites", index, "name"], `is already the name of sites[${first}]; site names are unique`, name),
      );
  });
  if (typeof raw.activeSite === "string" && !seen.has(raw.activeSite)) {
    const known = [...seen.keys()];
    problems.push(
      at(
        ["activeSite"],
        known.length === 0
          ? "names a site, but no site is configured"
          : `is not the name of a configured site (${known.join(", ")})`,
        raw.activeSite,
      ),
    );
  }
  return problems.sort(byLine);
}

type At = (path: FieldPath, message: string, found?: unknown) => Problem;

function issueProblems(issue: z.core.$ZodIssue, at: At): Problem[] {
  const path = issue.path.map((segment) => (typeof segment === "symbol" ? String(segment) : segment));
  switch (issue.code) {
    case "unrecognized_keys":
      return issue.keys.map((key) => at([...path, key], "is not a known field"));
    case "invalid_type":
      if (issue.input === undefined) return [at(path, "is required")];
      return [at(path, `must be ${article(issue.expected)}, not ${describe(issue.input)}`, issue.input)];
    case "invalid_value":
      return [at(path, `must be ${issue.values.map((v) => JSON.stringify(v)).join(" or ")}`, issue.input)];
    default:
      return [at(path, issue.message, issue.input)];
  }
}

function article(expected: string): string {
  if (expected === "array") return "a list";
  if (expected === "object") return "a mapping";
  return `a ${expected}`;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return `a ${typeof value}`;
}

function byLine(a: Problem, b: Problem): number {
  return (a.line ?? 0) - (b.line ?? 0);
}

function yamlProblem(error: unknown, source: string): Problem {
  if (error instanceof YAMLException) {
    const problem: Problem = { severity: "error", source, message: `is not valid YAML: ${error.reason}` };
    if (error.mark) {
      problem.line = error.mark.line + 1;
      problem.column = error.mark.column + 1;
    }
    return problem;
  }
  return {
    severity: "error",
    source,
    message: `is not valid YAML: ${error instanceof Error ? error.message : String(error)}`,
  };
}

/** The text nvkectl writes: the same fields in a fixed order, YAML that parses back to the same value. */
export function formatConfig(config: SiteConfig): string {
  const ordered: Record<string, unknown> = { apiVersion: config.apiVersion, kind: config.kind };
  if (config.activeSite !== undefined) ordered.activeSite = config.activeSite;
  ordered.sites = config.sites.map((site) => ({ name: site.name, url: site.url, kubeconfig: site.kubeconfig }));
  return `# nvkectl site configuration; change it with \`nvkectl config\` (see docs/sites.md).\n${dump(ordered, { noRefs: true, lineWidth: -1 })}`;
}
