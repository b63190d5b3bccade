import { parseYamlWith, validateDocument } from "@nodekit/documents";
import type { Problem } from "@nodekit/errors";
import { emptyConfig, orderedConfig, type SiteConfig } from "./rules.ts";
import { siteConfigSchema } from "./schema.ts";

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
  const { value, problems } = parseYamlWith(siteConfigSchema, text, {
    source: options.source,
    fileKind: "the config file",
    empty: { value: emptyConfig() },
  });
  return value === undefined ? { problems } : { config: value as SiteConfig, problems };
}

/**
 * Check a configuration value (parsed from YAML, or built in code before saving) against
 * the schema and the cross-field rules. Returns every problem; none means it is valid.
 */
export function validateConfig(value: unknown, options: ParseOptions): Problem[] {
  return validateDocument(siteConfigSchema, { value }, { source: options.source }).problems;
}

/**
 * The text nvkectl writes: JSON (which is YAML too, so the file reads as it always did), the
 * same fields in a fixed order. A person may rewrite it as YAML: it is read either way.
 */
export function formatConfig(config: SiteConfig): string {
  return `${JSON.stringify(orderedConfig(config), null, 2)}\n`;
}
