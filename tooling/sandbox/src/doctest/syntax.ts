import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Problem } from "@nodekit/errors";
import { parse } from "shell-quote";
import { SANDBOX_COMMANDS } from "../layout.ts";

// Syntax-only checks of shell commands in the docs: bash parses the block, and every
// nvkectl / nr command it runs exists with the flags it passes (from the CLIs' oclif
// manifests), every ./run task and pnpm script it names exists.

interface FlagSpec {
  name: string;
  type: "boolean" | "option";
  allowNo: boolean;
}

interface CommandSpec {
  id: string;
  /** `--name`, `-c` and aliases, each to its flag. */
  flags: Map<string, FlagSpec>;
  requiredFlags: string[];
  args: number;
  strict: boolean;
}

export interface CommandCatalogue {
  /** Per CLI (`nvkectl`, `nr`): command id and alias (`get:clusters`, `get:cluster`) → command. */
  clis: Map<string, Map<string, CommandSpec>>;
  runTasks: Set<string>;
  scripts: Set<string>;
}

interface ManifestFlag {
  name: string;
  char?: string;
  aliases?: string[];
  type: "boolean" | "option";
  allowNo?: boolean;
  required?: boolean;
}

interface Manifest {
  commands: Record<
    string,
    {
      id: string;
      aliases?: string[];
      flags?: Record<string, ManifestFlag>;
      args?: Record<string, unknown>;
      strict?: boolean;
    }
  >;
}

function readManifest(path: string): Manifest {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Manifest;
  } catch (error) {
    throw new Error(
      `cannot read ${path} (${(error as Error).message}): the doc-tests check commands against the built CLIs; build them with ./run setup`,
    );
  }
}

function addCommands(into: Map<string, CommandSpec>, manifest: Manifest): void {
  for (const command of Object.values(manifest.commands)) {
    const flags = new Map<string, FlagSpec>();
    const requiredFlags: string[] = [];
    for (const flag of Object.values(command.flags ?? {})) {
      const spec: FlagSpec = { name: flag.name, type: flag.type, allowNo: flag.allowNo === true };
      flags.set(`--${flag.name}`, spec);
      if (flag.char) flags.set(`-${flag.char}`, spec);
      for (const alias of flag.aliases ?? []) flags.set(alias.length === 1 ? `-${alias}` : `--${alias}`, spec);
      if (flag.required) requiredFlags.push(flag.name);
    }
    const spec: CommandSpec = {
      id: command.id,
      flags,
      requiredFlags,
      args: Object.keys(command.args ?? {}).length,
      strict: command.strict !== false,
    };
    for (const id of [command.id, ...(command.aliases ?? [])]) into.set(id, spec);
  }
}

/** The commands of the built CLIs (and their oclif plugins), the ./run tasks and the root scripts. */
export function loadCommandCatalogue(root: string): CommandCatalogue {
  const clis = new Map<string, Map<string, CommandSpec>>();
  for (const cli of ["nvkectl", "nr"]) {
    const appDir = join(root, "apps", cli);
    const commands = new Map<string, CommandSpec>();
    addCommands(commands, readManifest(join(appDir, "oclif.manifest.json")));
    const pkg = JSON.parse(readFileSync(join(appDir, "package.json"), "utf8")) as { oclif?: { plugins?: string[] } };
    // pnpm links each dependency into the app's own node_modules.
    for (const plugin of pkg.oclif?.plugins ?? []) {
      addCommands(commands, readManifest(join(appDir, "node_modules", plugin, "oclif.manifest.json")));
    }
    clis.set(cli, commands);
  }
  const runScript = readFileSync(join(root, "run"), "utf8");
  const runTasks = new Set(
    [...runScript.matchAll(/^ {2}([a-z|"-]+)\)/gm)]
      .flatMap((m) => (m[1] ?? "").split("|"))
      .filter((t) => /^[a-z]/.test(t)),
  );
  const scripts = new Set(
    Object.keys((JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: object }).scripts),
  );
  return { clis, runTasks, scripts };
}

const PNPM_BUILTINS = new Set(["exec", "install", "i", "add", "remove", "run", "dlx", "why", "list", "ls", "update"]);

interface Where {
  source: string;
  /** The doc line of the block's first line of code. */
  line: number;
}

/** The command lines of a block, continuations joined, each with its line offset in the block. */
function logicalLines(code: string): Array<{ text: string; offset: number }> {
  const out: Array<{ text: string; offset: number }> = [];
  let current = "";
  let start = 0;
  code.split("\n").forEach((line, i) => {
    if (current === "") start = i;
    if (line.endsWith("\\")) {
      current += `${line.slice(0, -1)} `;
      return;
    }
    current += line;
    if (current.trim() !== "") out.push({ text: current, offset: start });
    current = "";
  });
  if (current.trim() !== "") out.push({ text: current, offset: start });
  return out;
}

/** The `$(…)` inside a word, balanced. */
function substitutions(word: string): string[] {
  const found: string[] = [];
  for (let i = word.indexOf("$("); i !== -1; i = word.indexOf("$(", i + 2)) {
    let depth = 0;
    for (let j = i + 1; j < word.length; j++) {
      if (word[j] === "(") depth++;
      else if (word[j] === ")" && --depth === 0) {
        found.push(word.slice(i + 2, j));
        break;
      }
    }
  }
  return found;
}

type Token = ReturnType<typeof parse>[number];

/** Simple commands (argv) of one line: split at pipes, lists and subshells; `$(…)` looked into. */
function simpleCommands(text: string): string[][] {
  // Keep $VAR as written: a placeholder is as good as a value for the check. A descriptor number
  // written against its redirection (`2> file`, `2>&1`) is bash's, not an argument: shell-quote
  // would give it as a word of its own.
  const tokens: Token[] = parse(text.replace(/(^|[\s;|&(])\d+(?=[<>])/g, "$1"), (name) => `$${name}`);
  const commands: string[][] = [];
  let current: string[] = [];
  const end = () => {
    if (current.length > 0) commands.push(current);
    current = [];
  };
  for (const token of tokens) {
    if (typeof token === "string") {
      for (const inner of substitutions(token)) commands.push(...simpleCommands(inner));
      current.push(token);
    } else if ("comment" in token) {
      break;
    } else if ("op" in token && token.op !== "glob") {
      end();
    } else if ("pattern" in token) {
      current.push(token.pattern);
    }
  }
  end();
  return commands;
}

function checkCli(cli: string, argv: string[], catalogue: CommandCatalogue): string[] {
  const commands = catalogue.clis.get(cli);
  if (commands === undefined) return [];
  const words: string[] = [];
  for (const word of argv) {
    if (word.startsWith("-")) break;
    words.push(word);
  }
  if (words.length === 0) return [];
  let spec: CommandSpec | undefined;
  let used = 0;
  for (let n = words.length; n > 0 && spec === undefined; n--) {
    spec = commands.get(words.slice(0, n).join(":"));
    used = n;
  }
  if (spec === undefined) return [`${cli} ${words.join(" ")}: no such command (see docs/commands/${cli}.md)`];
  const problems: string[] = [];
  const name = `${cli} ${spec.id.split(":").join(" ")}`;
  const rest = argv.slice(used);
  const seen = new Set<string>();
  let positional = 0;
  let help = false;
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i] ?? "";
    if (token === "--") {
      positional += rest.length - i - 1;
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      positional++;
      continue;
    }
    if (token === "-h" || token === "--help") {
      help = true;
      continue;
    }
    const [flagText = "", inline] = token.startsWith("--")
      ? token.split(/=(.*)/s, 2)
      : [token.slice(0, 2), token.slice(2) || undefined];
    let flag = spec.flags.get(flagText);
    if (flag === undefined && flagText.startsWith("--no-")) {
      const negated = spec.flags.get(`--${flagText.slice(5)}`);
      if (negated?.allowNo) flag = negated;
    }
    if (flag === undefined) {
      problems.push(`${name}: unknown flag ${flagText}`);
      continue;
    }
    seen.add(flag.name);
    if (flag.type === "option" && inline === undefined) i++;
  }
  if (!help) {
    for (const required of spec.requiredFlags) {
      if (!seen.has(required)) problems.push(`${name}: needs --${required}`);
    }
    if (spec.strict && positional > spec.args) {
      problems.push(
        `${name}: takes ${spec.args === 0 ? "no" : `at most ${spec.args}`} argument${spec.args === 1 ? "" : "s"}, got ${positional}`,
      );
    }
  }
  return problems;
}

function checkCommand(argv: string[], catalogue: CommandCatalogue): string[] {
  let words = argv;
  while (words[0] !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0])) words = words.slice(1);
  while (words[0] === "exec" || words[0] === "time" || words[0] === "command") words = words.slice(1);
  const [program = "", ...args] = words;
  if (catalogue.clis.has(program)) return checkCli(program, args, catalogue);
  if (program === "./run") {
    const [task = "", ...more] = args;
    if (task === "") return [];
    if (!catalogue.runTasks.has(task)) return [`./run ${task}: no such task (./run --help lists them)`];
    if (catalogue.clis.has(task)) return checkCli(task, more, catalogue);
    if (task === "sandbox") return checkSandbox(`./run sandbox`, more);
    return [];
  }
  if (program === "pnpm") {
    const [script = "", ...more] = args;
    if (script === "" || script.startsWith("-") || PNPM_BUILTINS.has(script)) return [];
    if (!catalogue.scripts.has(script)) return [`pnpm ${script}: the root package.json has no such script`];
    if (script === "sandbox") return checkSandbox("pnpm sandbox", more);
    return [];
  }
  return [];
}

function checkSandbox(prefix: string, args: string[]): string[] {
  const [command] = args;
  if (command === undefined || command.startsWith("-")) return [];
  return (SANDBOX_COMMANDS as readonly string[]).includes(command)
    ? []
    : [`${prefix} ${command}: no such command; it has ${SANDBOX_COMMANDS.join(", ")}`];
}

/**
 * Problems of one block, checked for syntax only: what bash says of it (unless it is a
 * console block's `$ ` lines), and each command that names a CLI, ./run task or pnpm script
 * that does not exist, or passes a flag the command does not have.
 */
export function checkSyntax(
  code: string,
  where: Where,
  catalogue: CommandCatalogue,
  options: { bash: boolean },
): Problem[] {
  const problems: Problem[] = [];
  const at = (offset: number, message: string): Problem => ({
    severity: "error",
    source: where.source,
    line: where.line + offset,
    message,
  });
  if (options.bash) {
    const result = spawnSync("bash", ["-n"], { input: code, encoding: "utf8" });
    if (result.status !== 0) {
      for (const line of result.stderr.trim().split("\n")) {
        const match = /line (\d+): (.*)$/.exec(line);
        problems.push(at(match ? Number(match[1]) - 1 : 0, `bash: ${match ? match[2] : line}`));
      }
      return problems;
    }
  }
  for (const { text, offset } of logicalLines(code)) {
    for (const argv of simpleCommands(text)) {
      for (const message of checkCommand(argv, catalogue)) problems.push(at(offset, message));
    }
  }
  return problems;
}
