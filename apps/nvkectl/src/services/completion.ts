/**
 * Shell completion as kubectl does it (cobra's hidden `__complete`): the shell hands the
 * words typed so far to `nvkectl __complete`, which answers with the candidates for the last
 * one, one per line: a command's next word, its flags, a flag's values (`-o json|yaml|…`
 * from the flag's own list), and the names of what the site holds (clusters, node pools,
 * sites). oclif's autocomplete plugin writes static scripts (no values the CLI must look
 * up: oclif/plugin-autocomplete#426), so the lookups are ours.
 */

/** What completion needs of a command: its id (`get:clusters`), aliases, flags and whether it takes arguments. */
export interface CompletableCommand {
  id: string;
  aliases?: readonly string[];
  hidden?: boolean;
  flags: Readonly<Record<string, CompletableFlag>>;
  /** Whether the command takes positional arguments (a name to complete). */
  takesArgs: boolean;
}

interface CompletableFlag {
  type: "boolean" | "option";
  char?: string | undefined;
  hidden?: boolean | undefined;
  options?: readonly string[] | undefined;
  /** `table|wide|json|yaml|name|jsonpath=TEMPLATE`: the values a custom flag takes, as its help shows them. */
  helpValue?: string | undefined;
}

/** The names completion asks the site for; each answers [] when it cannot (completion never fails aloud). */
export interface CompletionLookups {
  sites(): Promise<string[]>;
  clusters(): Promise<string[]>;
  nodePools(cluster: string): Promise<string[]>;
}

/** Which names a command's arguments are, by command id. */
const ARGUMENT_NAMES: Readonly<Record<string, "clusters" | "nodepools" | "sites">> = {
  "get:clusters": "clusters",
  "describe:cluster": "clusters",
  "patch:cluster": "clusters",
  "delete:cluster": "clusters",
  "get:kubeconfig": "clusters",
  "get:nodepools": "nodepools",
  "patch:nodepool": "nodepools",
  "scale:nodepool": "nodepools",
  "delete:nodepool": "nodepools",
  "config:use-site": "sites",
  "config:delete-site": "sites",
};

/** Flags whose values are names the site holds. */
const FLAG_NAMES: Readonly<Record<string, "clusters" | "sites">> = { site: "sites", cluster: "clusters" };

/** The values a flag lists: its options, else its help value's alternatives (`jsonpath=TEMPLATE` → `jsonpath=`). */
function flagValues(flag: CompletableFlag): string[] {
  if (flag.options !== undefined) return [...flag.options];
  if (flag.helpValue === undefined || !flag.helpValue.includes("|")) return [];
  return flag.helpValue.split("|").map((value) => value.replace(/=[A-Z_]+$/, "="));
}

/**
 * bash splits `--output=json` at `=` (COMP_WORDBREAKS): `--output`, `=`, `json`. Joined back
 * here, so the words read as the user typed them.
 */
function joinAssignments(words: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? "";
    const previous = joined.at(-1);
    if (word === "=" && previous?.startsWith("-")) {
      joined[joined.length - 1] = `${previous}=${words[i + 1] ?? ""}`;
      i++;
    } else joined.push(word);
  }
  return joined;
}

interface Parsed {
  command?: CompletableCommand;
  /** The words that are neither flags nor flag values, in order. */
  positional: string[];
  /** Flag values given, by flag name (the last one wins). */
  values: Map<string, string>;
}

function findFlag(
  word: string,
  flags: Readonly<Record<string, CompletableFlag>>,
): [string, CompletableFlag] | undefined {
  if (word.startsWith("--")) {
    const name = word.slice(2).split("=")[0] ?? "";
    const flag = flags[name];
    return flag === undefined ? undefined : [name, flag];
  }
  const char = word.slice(1, 2);
  return Object.entries(flags).find(([, flag]) => flag.char === char);
}

/** Reads the words before the one being completed: the command they name, its positional words and flag values. */
function parseWords(
  words: readonly string[],
  commands: readonly CompletableCommand[],
  allFlags: Readonly<Record<string, CompletableFlag>>,
): Parsed {
  const byId = new Map<string, CompletableCommand>();
  for (const command of commands) {
    for (const id of [command.id, ...(command.aliases ?? [])]) byId.set(id, command);
  }
  const parsed: Parsed = { positional: [], values: new Map() };
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? "";
    if (word.startsWith("-") && word !== "-") {
      const found = findFlag(word, parsed.command?.flags ?? allFlags);
      if (found === undefined || found[1].type !== "option") continue;
      const inline = word.startsWith("--") ? word.indexOf("=") : word.length > 2 ? 1 : -1;
      if (inline !== -1) parsed.values.set(found[0], word.slice(inline + 1));
      else {
        parsed.values.set(found[0], words[i + 1] ?? "");
        i++;
      }
      continue;
    }
    parsed.positional.push(word);
    const command = parsed.command === undefined ? byId.get(parsed.positional.join(":")) : undefined;
    if (command !== undefined) {
      parsed.command = command;
      parsed.positional = [];
    }
  }
  return parsed;
}

async function names(kind: "clusters" | "nodepools" | "sites", parsed: Parsed, lookups: CompletionLookups) {
  if (kind === "sites") return lookups.sites();
  if (kind === "clusters") return lookups.clusters();
  const cluster = parsed.values.get("cluster");
  return cluster === undefined || cluster === "" ? [] : lookups.nodePools(cluster);
}

/**
 * The candidates for the last of `words` (the words after `nvkectl`; the last one is what is
 * being typed, "" for a new word), each starting with it, sorted, without repeats.
 */
export async function completionCandidates(
  typed: readonly string[],
  commands: readonly CompletableCommand[],
  lookups: CompletionLookups,
): Promise<string[]> {
  const words = joinAssignments(typed);
  const current = words.at(-1) ?? "";
  const before = words.slice(0, -1);
  const visible = commands.filter((command) => command.hidden !== true);
  const allFlags: Record<string, CompletableFlag> = Object.assign({}, ...visible.map((command) => command.flags));
  const parsed = parseWords(before, visible, allFlags);
  const flags = parsed.command?.flags ?? {};
  const startingWith = (prefix: string, list: readonly string[]) =>
    [...new Set(list.filter((value) => value.startsWith(prefix)))].sort();

  // A flag's value: `-o <TAB>`, `--output=<TAB>`, `--site <TAB>`, `--cluster <TAB>`.
  const previous = before.at(-1);
  const valuesFor = (flag: [string, CompletableFlag]) => {
    const kind = FLAG_NAMES[flag[0]];
    return kind === undefined ? Promise.resolve(flagValues(flag[1])) : names(kind, parsed, lookups);
  };
  if (current.startsWith("--") && current.includes("=")) {
    const found = findFlag(current, flags);
    if (found === undefined || found[1].type !== "option") return [];
    const head = current.slice(0, current.indexOf("=") + 1);
    return startingWith(
      current,
      (await valuesFor(found)).map((value) => head + value),
    );
  }
  if (previous !== undefined && /^-[^-]$|^--[^=]+$/.test(previous)) {
    const found = findFlag(previous, flags);
    if (found !== undefined && found[1].type === "option") return startingWith(current, await valuesFor(found));
  }
  if (current.startsWith("-")) {
    const offered = Object.entries(flags)
      .filter(([, flag]) => flag.hidden !== true)
      .map(([name]) => `--${name}`);
    return startingWith(current, offered);
  }
  if (parsed.command === undefined) {
    // The next word of a command id: `get <TAB>` → clusters, nodepools, …
    const prefix = parsed.positional.length === 0 ? "" : `${parsed.positional.join(":")}:`;
    const next = visible.flatMap((command) =>
      [command.id, ...(command.aliases ?? [])]
        .filter((id) => id.startsWith(prefix))
        .map((id) => id.slice(prefix.length).split(":")[0] ?? ""),
    );
    return startingWith(current, next.filter(Boolean));
  }
  const kind = parsed.command.takesArgs ? ARGUMENT_NAMES[parsed.command.id] : undefined;
  if (kind === undefined) return [];
  // A name already given is not offered again (get clusters a b <TAB>).
  const given = new Set(parsed.positional);
  return startingWith(
    current,
    (await names(kind, parsed, lookups)).filter((name) => !given.has(name)),
  );
}

/** The script `nvkectl completion SHELL` prints: the shell asks `nvkectl __complete` for every completion. */
export function completionScript(shell: "bash" | "zsh", bin: string): string {
  const fn = `_${bin.replace(/[^A-Za-z0-9_]/g, "_")}_complete`;
  if (shell === "bash") {
    return `# ${bin} completion for bash: source <(${bin} completion bash)
${fn}() {
  local IFS=$'\\n'
  COMPREPLY=( $(${bin} __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) )
  # Nothing to offer (a file argument): the shell's own file completion.
  if [[ \${#COMPREPLY[@]} -eq 0 ]]; then compopt -o default 2>/dev/null; fi
  return 0
}
complete -F ${fn} ${bin}
`;
  }
  return `#compdef ${bin}
# ${bin} completion for zsh: source <(${bin} completion zsh)
${fn}() {
  local -a candidates
  candidates=("\${(@f)$(${bin} __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  candidates=("\${(@)candidates:#}")
  if (( \${#candidates} )); then compadd -- "\${candidates[@]}"; else _files; fi
}
compdef ${fn} ${bin}
`;
}
