import { decodeUtf8, readInputFile, readYamlDocuments, validateDocument } from "@nodekit/documents";
import { BugError, invalidInput, type Problem, UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";
import { PLACEHOLDER_PREFIX, type StackConfig, StackConfigSchema } from "./schema.ts";

export interface ParsedStackConfig {
  /** Present exactly when there is no problem and no placeholder left. */
  config?: StackConfig;
  /** Every problem with the file: syntax, unknown keys, malformed values. */
  problems: Problem[];
  /** Every REPLACE_* value still in the file, with its key path and line. */
  unfilled: Problem[];
}

/** Every string value holding REPLACE_ (at its start or inside it: https://REPLACE_HOST/api), with its path. */
function placeholders(
  value: unknown,
  path: Array<string | number> = [],
): Array<{ path: Array<string | number>; value: string }> {
  if (typeof value === "string") return value.includes(PLACEHOLDER_PREFIX) ? [{ path, value }] : [];
  if (Array.isArray(value)) return value.flatMap((entry, index) => placeholders(entry, [...path, index]));
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([key, entry]) => placeholders(entry, [...path, key]));
  }
  return [];
}

/**
 * Validates a stack config (one YAML document) in one pass: every problem with its line
 * and key path, and, separately, every REPLACE_* placeholder left unfilled. Never throws.
 */
export function parseStackConfig(text: string, options: { source: string }): ParsedStackConfig {
  const { source } = options;
  const read = readYamlDocuments(text, { source, maxDocuments: 1, fileKind: "a stack config" });
  const document = read.documents[0];
  if (read.problems.length > 0) return { problems: read.problems, unfilled: [] };
  if (document === undefined || document.value === null) {
    return {
      problems: [{ severity: "error", source, message: "is empty; expected a StackConfig document" }],
      unfilled: [],
    };
  }
  const validated = validateDocument(StackConfigSchema, document, { source });
  const unfilled = placeholders(document.value).map(
    ({ path, value }): Problem => ({
      severity: "error",
      source,
      path,
      value,
      line: document.lineOf(path) ?? 1,
      message: "is still a placeholder: fill it in",
    }),
  );
  if (validated.value === undefined || unfilled.length > 0) return { problems: validated.problems, unfilled };
  return { config: validated.value, problems: [], unfilled: [] };
}

/**
 * Reads and validates the stack config file: STACK_CONFIG_NOT_FOUND, STACK_CONFIG_INVALID
 * with every problem, or STACK_CONFIG_UNFILLED listing every REPLACE_* left.
 */
export async function readStackConfig(path: string, options: { source?: string } = {}): Promise<StackConfig> {
  const source = options.source ?? path;
  let bytes: Uint8Array;
  try {
    bytes = await readInputFile(path, { source, what: "stack config" });
  } catch (error) {
    if (error instanceof UserError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UserError(errorCodes.STACK_CONFIG_NOT_FOUND, `stack config ${source} cannot be read`, {
      why: code === "ENOENT" ? "there is no such file" : `reading it failed (${code ?? String(error)})`,
      next: "name the stack config that sits beside the site spec (examples/stack.yaml is a complete example)",
      facts: { file: source },
    });
  }
  // A file in another encoding is named as such, not read as garbled YAML (issue 9, item 11).
  const decoded = decodeUtf8(bytes, { source });
  if (decoded.text === undefined) {
    throw invalidInput(
      errorCodes.STACK_CONFIG_INVALID,
      `stack config ${source}`,
      decoded.problems,
      undefined,
      "nothing was changed",
    );
  }
  const parsed = parseStackConfig(decoded.text, { source });
  if (parsed.problems.length > 0) {
    throw invalidInput(
      errorCodes.STACK_CONFIG_INVALID,
      `stack config ${source}`,
      [...parsed.problems, ...parsed.unfilled],
      undefined,
      "nothing was changed",
    );
  }
  if (parsed.unfilled.length > 0) {
    const count = parsed.unfilled.length;
    throw new UserError(
      errorCodes.STACK_CONFIG_UNFILLED,
      `stack config ${source} has ${count} REPLACE_* value${count === 1 ? "" : "s"} left unfilled; nothing was changed`,
      {
        problems: parsed.unfilled,
        next: "fill in every value listed (deploy/README.md says what each key means)",
        facts: { file: source },
      },
    );
  }
  if (parsed.config === undefined) throw new BugError("a stack config without problems has no value");
  return parsed.config;
}

/**
 * The NICo API key from the environment variable the config names: STACK_CREDENTIAL_MISSING
 * when it is unset or empty. The value is the caller's to register with its redactor.
 */
export function stackCredentials(config: StackConfig, env: NodeJS.ProcessEnv = process.env): { nicoApiKey: string } {
  const name = config.nico.apiKeyFromEnv;
  const value = env[name];
  if (value === undefined || value === "") {
    throw new UserError(errorCodes.STACK_CREDENTIAL_MISSING, `the environment variable ${name} is not set`, {
      why: "the NICo API key comes from the environment (the stack config's nico.apiKeyFromEnv names the variable), never from a file",
      next: `export ${name} with the NICo API key, then run again`,
      facts: { variable: name },
    });
  }
  return { nicoApiKey: value };
}
