/** A global flag as the launcher needs to know it: its names and whether it takes a value. */
export interface GlobalFlag {
  name: string;
  char?: string | undefined;
  /** An option (`--site lab`), not a boolean (`-v`). */
  takesValue: boolean;
}

/** What the launcher knows of a CLI's commands: enough to find where a command's id ends. */
export interface CommandTable {
  isCommand(id: string): boolean;
  isTopic(id: string): boolean;
  globalFlags: readonly GlobalFlag[];
}

export interface ArrangedArgv {
  /** The command named (`get:clusters`), when the words before the first other token name one. */
  id?: string;
  /** A topic named without a command of it (`nvkectl get`, `nvkectl get -o json`), when no command is named. */
  topic?: string;
  /** The word that named no command where one was expected (`clusterz` in `get clusterz`): oclif suggests one. */
  unknown?: string;
  /** How many leading entries of `argv` are the command's (or topic's) words. */
  words: number;
  /** The arguments with every global flag given before the command's id moved right after it. */
  argv: string[];
  /** The global flags (with their values) that were moved. */
  moved: string[];
}

/** The global flag `token` is, and whether its value is inline (`--site=lab`). */
function globalFlagOf(token: string, flags: readonly GlobalFlag[]): { flag: GlobalFlag; inline: boolean } | undefined {
  if (token.startsWith("--")) {
    const [name, ...value] = token.slice(2).split("=");
    const flag = flags.find((f) => f.name === name);
    return flag === undefined ? undefined : { flag, inline: value.length > 0 };
  }
  if (token.length >= 2 && token[0] === "-") {
    const flag = flags.find((f) => f.char !== undefined && f.char === token[1]);
    if (flag === undefined) return undefined;
    if (token.length === 2) return { flag, inline: false };
    // `-v` is a boolean: `-vx` is something else; an option's value may follow its letter (`-ojson`, `-o=json`).
    return flag.takesValue ? { flag, inline: true } : undefined;
  }
  return undefined;
}

/**
 * kubectl users put global flags first (`nvkectl --site lab get clusters`, `nvkectl get -v
 * clusters`); oclif finds a command only when its words come first. This moves every
 * global flag (with its value) that comes before the end of the command's id to right after
 * it, and says which command or topic the words name. Pure: the same for the launcher's
 * fast path (the shipped manifest) and oclif's full start (every plugin's commands).
 */
export function arrangeArgv(argv: readonly string[], table: CommandTable): ArrangedArgv {
  const kept: string[] = [];
  const moved: string[] = [];
  const words: string[] = [];
  let commandWords = 0;
  let unknown: string | undefined;
  let i = 0;
  for (; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === "--") break;
    if (token.startsWith("-")) {
      const global = globalFlagOf(token, table.globalFlags);
      if (global === undefined) break;
      moved.push(token);
      if (global.flag.takesValue && !global.inline && i + 1 < argv.length) moved.push(argv[++i] as string);
      continue;
    }
    const candidate = [...words, token].join(":");
    const isCommand = table.isCommand(candidate);
    if (!isCommand && !table.isTopic(candidate)) {
      if (commandWords === 0) unknown = token;
      break;
    }
    words.push(token);
    kept.push(token);
    if (isCommand) commandWords = words.length;
  }
  const rest = argv.slice(i);
  // Words past the longest command id are its arguments, in place; the moved flags go before them.
  const idWords = commandWords > 0 ? commandWords : words.length;
  const arranged = [...kept.slice(0, idWords), ...moved, ...kept.slice(idWords), ...rest];
  const result: ArrangedArgv = { words: idWords, argv: arranged, moved };
  if (commandWords > 0) result.id = words.slice(0, commandWords).join(":");
  else if (unknown !== undefined) result.unknown = unknown;
  else if (words.length > 0) result.topic = words.join(":");
  return result;
}

/** Whether the command line asks for help: `-h` or `--help` before any `--`. */
export function asksForHelp(argv: readonly string[], helpFlags: readonly string[] = ["--help", "-h"]): boolean {
  for (const token of argv) {
    if (token === "--") return false;
    if (helpFlags.includes(token)) return true;
  }
  return false;
}
