import type { Redactor } from "./redactor.ts";

/** One invocation of an external program, exactly as it will be (or would be) executed. */
export interface CommandCall {
  command: string;
  args: readonly string[];
  cwd?: string;
  /**
   * Environment values the call sets (shown in its echoed line). The child gets these over
   * the few variables of the parent's every call receives (see INHERITED_ENV), never the
   * parent's whole environment.
   */
  env?: Readonly<Record<string, string>>;
  /**
   * Names of further variables of the parent's this call receives when they are set (not
   * shown: they are the user's own settings, as PATH is); `PREFIX*` names a prefix.
   */
  inheritEnv?: readonly string[];
  /** Names in `env` whose values are secrets: echoed as `NAME=[REDACTED]`. */
  secretEnv?: readonly string[];
  /** Text written to the child's stdin (secrets go here or in env, never in args). */
  input?: string;
}

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * The shell-quoted form of a call, as a user could paste it: `KUBECONFIG=/k kubectl apply -f x.yaml`.
 * Secret environment values and every registered secret are redacted. Stdin is shown as
 * `<<<(stdin: N bytes)` so a dry run says that input is passed without showing it.
 */
export function formatCall(call: CommandCall, redactor?: Redactor): string {
  const envParts = Object.entries(call.env ?? {}).map(([name, value]) =>
    call.secretEnv?.includes(name) ? `${name}=[REDACTED]` : `${name}=${shellQuote(value)}`,
  );
  const line = [...envParts, ...[call.command, ...call.args].map(shellQuote)].join(" ");
  const withInput = call.input === undefined ? line : `${line} <<<(stdin: ${Buffer.byteLength(call.input)} bytes)`;
  return redactor ? redactor.redact(withInput) : withInput;
}

const SAFE = /^[A-Za-z0-9_\-+=/.,:@%^]+$/;

/**
 * POSIX single-quoting, only where needed, so echoed lines stay readable
 * (`--set token=x` rather than shell-quote's `--set token\=x`) and paste back into a shell.
 */
export function shellQuote(arg: string): string {
  if (SAFE.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}
