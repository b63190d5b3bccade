import { errorCodes } from "@nodekit/errors";
import type { Hook } from "@oclif/core/hooks";
import { distance } from "fastest-levenshtein";
import { createLogger } from "./logger.ts";

/**
 * The commands closest to what was typed, as kubectl and git suggest them: of those within a
 * few edits (a third of the typed length, at least two) or that the typed words begin, the
 * closest ones. An alias and the command it names count once, as whichever is closer (the
 * command itself when they are as close).
 */
export function suggestCommands(
  typed: string,
  commands: ReadonlyArray<{ id: string; aliases?: readonly string[] }>,
  max = 3,
): string[] {
  const words = typed.trim().replace(/\s+/g, " ");
  if (words === "") return [];
  const limit = Math.max(2, Math.floor(words.length / 3));
  // oclif also lists each alias as a command of its own: keep the command that names it.
  const aliases = new Set(
    commands.flatMap((command) => (command.aliases ?? []).filter((alias) => alias !== command.id)),
  );
  const scored: Array<{ id: string; command: number; alias: boolean; score: number }> = [];
  commands.forEach((command, index) => {
    if (aliases.has(command.id)) return;
    for (const id of [command.id, ...(command.aliases ?? [])]) {
      const spaced = id.replaceAll(":", " ");
      const score = spaced.startsWith(words) ? 0 : distance(words, spaced);
      if (score <= limit) scored.push({ id: spaced, command: index, alias: id !== command.id, score });
    }
  });
  scored.sort(
    (a, b) =>
      a.score - b.score || Number(a.alias) - Number(b.alias) || a.id.length - b.id.length || (a.id < b.id ? -1 : 1),
  );
  // Only the closest: a near miss of one command does not drag in another that is further off.
  const best = scored[0]?.score ?? 0;
  const seen = new Set<number>();
  const suggestions: string[] = [];
  for (const candidate of scored) {
    if (candidate.score > best) break;
    if (seen.has(candidate.command)) continue;
    seen.add(candidate.command);
    suggestions.push(candidate.id);
    if (suggestions.length === max) break;
  }
  return suggestions;
}

/**
 * oclif's `command_not_found` hook for both CLIs: says the command does not exist, names
 * the closest ones (on any stderr, not only a terminal, and without a prompt: a script's
 * typo must fail, not wait), and exits 127 (UnknownCommand).
 */
export const commandNotFound: Hook<"command_not_found"> = async function (options) {
  const { config } = options;
  const json = process.argv.includes("--json-logs");
  const logger = createLogger({ json });
  const typed = options.id.replaceAll(":", " ");
  const visible = config.commands.filter((command) => !command.hidden);
  const suggestions = suggestCommands(typed, visible);
  const topic = options.id.split(":")[0] ?? "";
  const next =
    topic !== options.id && config.findTopic(topic) !== undefined
      ? `run ${config.bin} ${topic} --help for the commands of ${topic}`
      : `run ${config.bin} --help for the list of commands`;
  const details = [
    ...(suggestions.length === 0
      ? []
      : [`did you mean: ${suggestions.map((id) => `${config.bin} ${id}`).join(", or ")}`]),
    `next: ${next}`,
  ];
  const code = errorCodes.UNKNOWN_COMMAND;
  logger.error(
    `"${typed}" is not a ${config.bin} command`,
    { code: code.code, exitCode: code.exitCode, ...(json ? { suggestions, next: [next] } : {}) },
    details,
  );
  this.exit(code.exitCode);
};
