import { Flags } from "./oclif.ts";
import { OUTPUT_FORMATS, type OutputFormat } from "./output.ts";

/** Flags every command of both CLIs takes. */
export const globalFlags = {
  verbose: Flags.boolean({
    char: "v",
    description: "Show debug logs on stderr (each external command, each HTTP request).",
    helpGroup: "GLOBAL",
  }),
  "json-logs": Flags.boolean({
    description: "Write logs to stderr as JSON lines (NDJSON) instead of text.",
    helpGroup: "GLOBAL",
  }),
};

/** `-o table|wide|json|yaml`, the output flag of every read command. */
export const outputFlag = Flags.custom<OutputFormat>({
  char: "o",
  description: "Output format.",
  options: [...OUTPUT_FORMATS],
  default: "table",
});

/** `--dry-run`: print the plan (every call a real run makes, in order) and change nothing. */
export const dryRunFlag = Flags.boolean({
  description:
    "Print the plan and change nothing: every call a real run would make, in order, one copy-pasteable line each (-o json: the plan document).",
});
