// oclif's flag and argument parser (lib/parser/parse.js and validate.js of @oclif/core 5.1.9)
// for plain command lines only. On a cached read, oclif's parser, run once per process, is
// compiled by V8 on first call (the compile cache keeps only what was compiled eagerly):
// ≈ 6 ms of a 70 ms read. This one does what that parser does for `{ flags, args }`, in the
// same order and with the same calls of each definition's `parse` and `default`, and returns
// undefined (declines) for anything it is not certain of: oclif's full parse then runs and
// gives its own messages. The property tests (parse-fast.test.ts, and the CLIs' over every
// command) compare the two on random command lines.
//
// What it compiles on first call is kept by the launcher's code cache, made after a command ran
// (code-cache.ts), as the rest of the hot file's code is.

/** A flag definition as oclif keeps it (Flags.boolean, Flags.string, Flags.custom, …). */
interface FlagDefinition {
  name?: string;
  type?: string;
  char?: string;
  aliases?: readonly string[];
  charAliases?: readonly string[];
  allowNo?: boolean;
  multiple?: boolean;
  multipleNonGreedy?: boolean;
  delimiter?: string;
  allowStdin?: boolean | "only";
  options?: readonly string[];
  env?: string;
  required?: boolean;
  default?: unknown;
  deprecated?: unknown;
  deprecateAliases?: unknown;
  relationships?: unknown;
  dependsOn?: unknown;
  exclusive?: unknown;
  combinable?: unknown;
  exactlyOne?: readonly string[];
  atLeastOne?: readonly string[];
  parse?: (input: unknown, context: unknown, flag: unknown) => unknown;
}

/** An argument definition as oclif keeps it (Args.string, Args.custom, …). */
interface ArgDefinition {
  name?: string;
  required?: boolean;
  multiple?: boolean;
  options?: readonly string[];
  ignoreStdin?: boolean;
  default?: unknown;
  parse?: (input: string, context: unknown, arg: unknown) => unknown;
}

/** What a command passes to oclif's `this.parse` (without `--` or constraints). */
export interface FastParseInput {
  flags?: object | undefined;
  baseFlags?: object | undefined;
  args?: object | undefined;
  strict?: boolean | undefined;
  /** oclif's --json flag: not taken (declines when true). */
  enableJsonFlag?: boolean | undefined;
  /** What oclif passes as `context` (the command): its fields reach `flag.parse` as oclif spreads them. */
  context?: object | undefined;
  /** Where `env` flags are read (oclif reads process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface FastParseOutput {
  flags: Record<string, unknown>;
  args: Record<string, unknown>;
}

/** Thrown inside, caught at the top: the command line is one to leave to oclif. */
class Decline {}

const NEGATION = "--no-";

const decline: () => never = function decline(): never {
  throw new Decline();
};

/** `object[key]` for an own key only; an inherited one (`--constructor`) is oclif's to refuse. */
function own<V>(object: Record<string, V>, key: string): V | undefined {
  if (Object.hasOwn(object, key)) return object[key];
  if (key in object) decline();
  return undefined;
}

interface FlagToken {
  flag: string;
  input: string;
}

interface ArgToken {
  arg: string | undefined;
  input: string;
}

/**
 * `{ flags, args }` exactly as oclif's `Parser.parse(argv, input)` (after its validation) returns
 * them, or undefined when the command line has anything this parser leaves to oclif: `--`,
 * grouped short flags, `--no-…`, an unknown flag, a missing value or one starting with `-`,
 * stdin, a repeated single-value flag, a flag's failing `parse` or `options`, a boolean from the
 * environment, relationship flags with a value, a missing required flag or argument, too many
 * arguments, a deprecated flag.
 */
export async function parseFast(argv: readonly string[], input: FastParseInput): Promise<FastParseOutput | undefined> {
  try {
    return await parse(argv, input);
  } catch {
    // A Decline, or a definition's parse or default that failed: oclif calls it again and
    // reports the failure in its words.
    return undefined;
  }
}

async function parse(argv: readonly string[], input: FastParseInput): Promise<FastParseOutput> {
  if (input.enableJsonFlag) decline();
  const flags = { ...input.baseFlags, ...input.flags } as Record<string, FlagDefinition>;
  const args = (input.args ?? {}) as Record<string, ArgDefinition>;
  const strict = input.strict !== false;
  const context = (input.context ?? {}) as Record<string, unknown>;
  const env = input.env ?? process.env;
  // oclif names each definition after its key (Parser._setNames).
  for (const [name, flag] of Object.entries(flags)) {
    if (flag.type !== "boolean" && flag.type !== "option") decline();
    flag.name = name;
  }
  for (const [name, arg] of Object.entries(args)) arg.name = name;
  const aliases: Record<string, FlagDefinition> = Object.fromEntries(
    Object.values(flags).flatMap((flag) =>
      [...(flag.aliases ?? []), ...(flag.charAliases ?? [])].map((a) => [a, flag]),
    ),
  );

  /** oclif's findFlag; a `--no-` negation declines. */
  function findFlag(token: string): { isLong: boolean; name: string | undefined } {
    if (token.startsWith("--")) {
      const long = token.slice(2);
      if (own(flags, long)) return { isLong: true, name: long };
      const alias = own(aliases, long);
      if (alias) return { isLong: true, name: alias.name };
      if (token.startsWith(NEGATION)) {
        const negated = token.slice(NEGATION.length);
        const flag = own(flags, negated);
        const viaAlias = own(aliases, negated);
        if ((flag?.type === "boolean" && flag.allowNo) || (viaAlias?.type === "boolean" && viaAlias.allowNo)) decline();
      }
      return { isLong: true, name: undefined };
    }
    if (token.startsWith("-")) {
      const char = token[1];
      if (char === undefined) return { isLong: false, name: undefined };
      const alias = own(aliases, char);
      if (alias) return { isLong: false, name: alias.name };
      return { isLong: false, name: Object.keys(flags).find((key) => flags[key]?.char === char) };
    }
    return { isLong: false, name: undefined };
  }

  const raw: FlagToken[] = [];
  const argTokens: ArgToken[] = [];
  const argNames = Object.keys(args);
  let current: FlagDefinition | undefined;
  const queue = [...argv];

  /** oclif's parseFlag for a token naming a flag, with its value next in the queue or attached. */
  function takeFlag(token: string, isLong: boolean, name: string, attached: boolean) {
    const flag = own(flags, name) ?? decline();
    if (flag.type === "option") {
      if (!flag.multiple && raw.some((o) => o.flag === name)) decline();
      if (flag.allowStdin) decline();
      current = flag;
      const value = isLong || token.length < 3 ? queue.shift() : token.slice(token[2] === "=" ? 3 : 2);
      // A value oclif could take for a flag (or stdin's "-"), or none: its message.
      if (value === undefined || value.startsWith("-")) decline();
      raw.push({ flag: flag.name as string, input: value });
    } else {
      // `--verbose=x` leaves x to be an argument; `-vw` is a group of short flags.
      if (attached || (!isLong && token.length > 2)) decline();
      raw.push({ flag: flag.name as string, input: token });
    }
  }

  while (queue.length > 0) {
    const token = queue.shift() as string;
    if (token.startsWith("-") && token !== "-") {
      if (token === "--") decline();
      const found = findFlag(token);
      if (found.name !== undefined) {
        takeFlag(token, found.isLong, found.name, false);
        continue;
      }
      const equals = token.indexOf("=");
      if (equals === -1) decline();
      const head = token.slice(0, equals);
      const split = findFlag(head);
      if (split.name === undefined) decline();
      queue.unshift(token.slice(equals + 1));
      takeFlag(head, split.isLong, split.name, true);
      continue;
    }
    if (current?.multiple && !current.multipleNonGreedy) {
      raw.push({ flag: current.name as string, input: token });
      continue;
    }
    argTokens.push({ arg: argNames[argTokens.length], input: token });
  }

  const parsedArgs = await parseArgs(args, argTokens, context, strict);
  const parsedFlags = await parseFlags(flags, raw, context, env);
  return { flags: parsedFlags, args: parsedArgs };
}

/** oclif's Parser._args and the argument half of its validate. */
async function parseArgs(
  args: Record<string, ArgDefinition>,
  tokens: readonly ArgToken[],
  context: Record<string, unknown>,
  strict: boolean,
): Promise<Record<string, unknown>> {
  const argvOut: unknown[] = [];
  const out: Record<string, unknown> = {};
  async function parseArgInput(name: string, arg: ArgDefinition, value: string) {
    if (arg.options && !arg.options.includes(value)) decline();
    context.token = { arg: name, input: value, type: "arg" };
    if (arg.parse === undefined) decline();
    const parsed = await arg.parse(value, context, arg);
    argvOut.push(parsed);
    out[name] = parsed;
  }
  async function applyDefault(name: string, arg: ArgDefinition) {
    if (out[name] !== undefined) return;
    if (!arg.default && arg.default !== false) return;
    const value = typeof arg.default === "function" ? await (arg.default as () => unknown)() : arg.default;
    if (Array.isArray(value)) argvOut.push(...value);
    else argvOut.push(value);
    out[name] = value;
  }
  // oclif reads a missing argument from stdin unless the definition says not to.
  function noStdin(arg: ArgDefinition) {
    if (!arg.ignoreStdin) decline();
  }
  const entries = Object.entries(args);
  const variadicIndex = entries.findIndex(([, arg]) => arg.multiple);
  if (variadicIndex === -1) {
    for (const [name, arg] of entries) {
      const token = tokens.find((t) => t.arg === name);
      context.token = token;
      if (token) await parseArgInput(name, arg, token.input);
      else noStdin(arg);
      await applyDefault(name, arg);
    }
    for (const token of tokens) {
      if (out[String(token.arg)] !== undefined) continue;
      argvOut.push(token.input);
    }
  } else {
    // The definition checks of validate: one variadic argument, every other one required.
    entries.forEach(([, arg], i) => {
      if (i !== variadicIndex && (arg.multiple || !arg.required)) decline();
    });
    const inputs = tokens.map((t) => t.input);
    for (let i = 0; i < variadicIndex; i++) {
      const [name, arg] = entries[i] as [string, ArgDefinition];
      const value = inputs.shift();
      if (value === undefined) noStdin(arg);
      else await parseArgInput(name, arg, value);
      await applyDefault(name, arg);
    }
    const after: { arg: ArgDefinition; value: string; name: string }[] = [];
    for (let i = entries.length - 1; i > variadicIndex; i--) {
      const [name, arg] = entries[i] as [string, ArgDefinition];
      const value = inputs.pop();
      if (value !== undefined) after.unshift({ arg, value, name });
    }
    const [variadicName, variadicArg] = entries[variadicIndex] as [string, ArgDefinition];
    if (inputs.length > 0) {
      const values: unknown[] = [];
      for (const value of inputs) {
        await parseArgInput(variadicName, variadicArg, value);
        values.push(out[variadicName]);
      }
      out[variadicName] = values;
    }
    for (const { arg, value, name } of after) await parseArgInput(name, arg, value);
    await applyDefault(variadicName, variadicArg);
    for (let i = variadicIndex + 1; i < entries.length; i++) {
      const [name, arg] = entries[i] as [string, ArgDefinition];
      await applyDefault(name, arg);
    }
  }
  // validate: too many arguments, a required one after an optional one, a required one missing.
  const hasVariadic = variadicIndex !== -1;
  if (strict && !hasVariadic && argvOut.length > entries.length) decline();
  let hasOptional = false;
  for (const [name, arg] of entries) {
    if (!arg.required) hasOptional = true;
    else if (hasOptional && !hasVariadic) decline();
    if (arg.required && out[name] === undefined) decline();
  }
  return out;
}

/** oclif's Parser._flags and the flag half of its validate (declining where it would check). */
async function parseFlags(
  flags: Record<string, FlagDefinition>,
  raw: readonly FlagToken[],
  context: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Record<string, unknown>> {
  const byFlag = new Map<string, FlagToken[]>();
  for (const token of raw) {
    if (!Object.hasOwn(flags, token.flag)) decline();
    byFlag.set(token.flag, [...(byFlag.get(token.flag) ?? []), token]);
  }
  async function callParse(value: unknown, flag: FlagDefinition, token: FlagToken | undefined) {
    if (!flag.parse) return value;
    const ctx = {
      ...context,
      error: context.error,
      exit: context.exit,
      jsonEnabled: context.jsonEnabled,
      log: context.log,
      logToStderr: context.logToStderr,
      token: token === undefined ? undefined : { ...token, type: "flag" },
      warn: context.warn,
    };
    return await flag.parse(value, ctx, flag);
  }
  function checkOptions(flag: FlagDefinition, value: string) {
    if (flag.options && !flag.options.includes(value)) decline();
    return value;
  }

  type Resolved = { name: string; flag: FlagDefinition; value?: unknown; fromDefault?: true };
  const resolved: Resolved[] = [];
  for (const [name, flag] of Object.entries(flags)) {
    const tokens = byFlag.get(name);
    if (!(flag.type === "boolean" || flag.env || flag.default !== undefined || "defaultHelp" in flag || tokens)) {
      continue;
    }
    const last = tokens?.at(-1);
    if (last !== undefined) {
      if (flag.type === "boolean") {
        const negations = [name, ...(flag.aliases ?? [])].map((n) => `${NEGATION}${n}`);
        resolved.push({ name, flag, value: await callParse(!negations.includes(last.input), flag, last) });
      } else if (flag.multiple) {
        if (flag.delimiter) decline();
        const values: unknown[] = [];
        for (const token of tokens ?? []) values.push(await callParse(checkOptions(flag, token.input), flag, token));
        resolved.push({ name, flag, value: values });
      } else {
        resolved.push({ name, flag, value: await callParse(checkOptions(flag, last.input), flag, last) });
      }
      continue;
    }
    const fromEnv = flag.env ? env[flag.env] : undefined;
    if (fromEnv) {
      // oclif reads a boolean's variable its own way (isTruthy); leave it to oclif.
      if (flag.type !== "option") decline();
      resolved.push({ name, flag, value: await callParse(checkOptions(flag, fromEnv), flag, undefined) });
      continue;
    }
    resolved.push({ name, flag, fromDefault: true });
  }
  // A default may depend on the flags given (oclif passes those with a value).
  const given = Object.fromEntries(
    resolved.filter((r) => !r.fromDefault && r.value !== undefined).map((r) => [r.name, r.value]),
  );
  for (const r of resolved) {
    if (!r.fromDefault) continue;
    const { default: fallback } = r.flag;
    r.value =
      typeof fallback === "function"
        ? await (fallback as (context: object) => unknown)({ flags: given, options: r.flag })
        : fallback;
  }
  const out: Record<string, unknown> = {};
  for (const r of resolved) if (r.value !== undefined) out[r.name] = r.value;

  // validate (flags) and the command's deprecation warnings: whatever would check or warn is oclif's.
  for (const [name, flag] of Object.entries(flags)) {
    if (out[name] !== undefined) {
      if (flag.relationships || flag.dependsOn || flag.exclusive || flag.combinable || flag.exactlyOne) decline();
      if (flag.deprecated || flag.deprecateAliases) decline();
    } else if (flag.required || (flag.exactlyOne?.length ?? 0) > 0 || (flag.atLeastOne?.length ?? 0) > 0) {
      decline();
    }
  }
  return out;
}
