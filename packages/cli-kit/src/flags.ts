import { Flags } from "./oclif.ts";
import { jsonPathTemplate, OUTPUT_FORMATS, type OutputFormat } from "./output.ts";

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

const FORMAT_LIST = `${OUTPUT_FORMATS.join(", ")} or jsonpath=TEMPLATE`;

/** `-o table|wide|json|yaml`, without the formats that need a kind and a name. */
const PLAIN_FORMATS: readonly OutputFormat[] = ["table", "wide", "json", "yaml"];

/**
 * The output flag of every read command: `-o table|wide|json|yaml|name|jsonpath=TEMPLATE`.
 * A jsonpath template is checked when the flag is parsed, so a broken one is a usage error
 * (exit 2) before anything is read. `{ name: false }` leaves out the formats that print
 * objects by kind and name (name, jsonpath) for commands whose rows have none.
 */
export const outputFlag = (options: { name?: boolean } = {}) => {
  const kinds = options.name === false;
  return Flags.custom<OutputFormat>({
    char: "o",
    description: kinds
      ? "Output format: table, wide, json or yaml."
      : "Output format: table, wide, json, yaml, name (kind/name per line), or jsonpath=TEMPLATE (kubectl's JSONPath template: '{.items[*].name}', '{range .items[*]}{.name}{\"\\n\"}{end}').",
    helpValue: kinds ? "table|wide|json|yaml" : "table|wide|json|yaml|name|jsonpath=TEMPLATE",
    default: "table",
    async parse(input) {
      const format = input.trim();
      const template = jsonPathTemplate(format as OutputFormat);
      if (template !== undefined && !kinds) {
        const { compileTemplate } = await import("./jsonpath.ts");
        try {
          compileTemplate(template);
        } catch (error) {
          throw new Error(`-o jsonpath=${template}: the template ${(error as Error).message}`);
        }
        return format as OutputFormat;
      }
      const allowed: readonly string[] = kinds ? PLAIN_FORMATS : OUTPUT_FORMATS;
      if (allowed.includes(format)) return format as OutputFormat;
      throw new Error(
        `-o ${JSON.stringify(input)} is not an output format; use ${kinds ? PLAIN_FORMATS.join(", ") : FORMAT_LIST}`,
      );
    },
  })();
};

/** `--no-headers`, `--show-labels`, `--sort-by`: the table and list habits of kubectl get. */
export const listFlags = {
  "no-headers": Flags.boolean({ description: "Print table rows without the header line (table and wide)." }),
  "sort-by": Flags.string({
    description:
      "Order the list by this field, a JSONPath expression such as .name or .status.phase (numbers by value, text as text).",
    helpValue: "FIELD",
  }),
  "show-labels": Flags.boolean({ description: "Add a LABELS column with each object's labels (table and wide)." }),
};

/** `--dry-run`: print the plan (every call a real run makes, in order) and change nothing. */
export const dryRunFlag = Flags.boolean({
  description:
    "Print the plan and change nothing: every call a real run would make, in order, one copy-pasteable line each (-o json: the plan document).",
});
