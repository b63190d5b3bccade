import { errorCodes, UserError } from "@nodekit/errors";
import { createLogger } from "../logger.ts";
import { describeFailure } from "../render-error.ts";

/**
 * `nvkectl get` names a topic but no command of it: an error (exit 2) that lists what the
 * topic holds, as kubectl does for `kubectl get`; never the topic's help with exit 0, which
 * a script would take for success.
 */
export async function topicWithoutCommand(options: {
  bin: string;
  version: string;
  topic: string;
  commands: ReadonlyArray<{ id: string; aliases: readonly string[] }>;
  argv: readonly string[];
}): Promise<void> {
  const { bin, topic } = options;
  const aliases = new Set(options.commands.flatMap((command) => command.aliases));
  const depth = topic.split(":").length;
  const names = [
    ...new Set(
      options.commands
        .filter((command) => !aliases.has(command.id))
        .map((command) => command.id.split(":")[depth])
        .filter((name): name is string => name !== undefined),
    ),
  ].sort();
  const words = topic.split(":").join(" ");
  const error = new UserError(errorCodes.USAGE, `${bin} ${words} needs one of: ${names.join(", ")}`, {
    why: `"${words}" is a group of commands, not a command`,
    next: [
      `name one, e.g. ${bin} ${words} ${names[0] ?? "<command>"}`,
      `see what each does with ${bin} ${words} --help`,
    ],
  });
  const failure = describeFailure(error, { bin, version: options.version });
  createLogger({ json: options.argv.includes("--json-logs") }).error(failure.message, failure.fields, failure.details);
  process.exitCode = failure.exitCode;
}
