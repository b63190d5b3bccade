/**
 * Stable exit codes shared by nr and nvkectl. They are part of the CLIs' contract
 * (documented in docs/exit-codes.md, generated from this table): scripts branch on them,
 * so a code never changes meaning once released.
 */
export const ExitCode = {
  /** The command did what was asked. */
  Ok: 0,
  /** A check the command ran did not pass (a verify gate, a health check). */
  CheckFailed: 1,
  /** The command line itself is wrong: unknown flag, missing argument, bad flag value. */
  Usage: 2,
  /** A file or value the user gave is invalid (CSV, YAML, JSON, config file); nothing was changed. */
  InvalidInput: 3,
  /** Something the command was told to act on does not exist (a site, a cluster, a file). */
  NotFound: 4,
  /** The action conflicts with current state (already exists, another run holds the lock). */
  Conflict: 5,
  /** A service or cluster could not be reached, did not answer in time, or asked to be called again later. */
  Unreachable: 6,
  /** Authentication or authorization failed (no credentials, token rejected, RBAC denial). */
  Unauthorized: 7,
  /** The remote service refused the request (invalid, not allowed); its own message is shown verbatim. A conflict with its state (HTTP 409) is Conflict. */
  Rejected: 8,
  /** The machine lacks something the command needs (a tool on PATH, OS, ports, disk). */
  Precondition: 9,
  /** An unexpected failure inside the tool: a bug. */
  Internal: 70,
  /** No such command; the CLI suggests the closest one (as shells do, 127). */
  UnknownCommand: 127,
  /** The run was interrupted (SIGINT, Ctrl-C); a later run can resume. 128 + 2, as a shell reports it. */
  Interrupted: 130,
  /** The reader closed standard output (`| head`): the status of a process killed by SIGPIPE, as kubectl's. */
  BrokenPipe: 141,
  /** The run was asked to stop (SIGTERM: systemd, kill, a CI timeout); a later run can resume. 128 + 15. */
  Terminated: 143,
} as const;

export type ExitCodeName = keyof typeof ExitCode;
export type ExitCodeValue = (typeof ExitCode)[ExitCodeName];

export const exitCodeDescriptions: Record<ExitCodeName, string> = {
  Ok: "Success.",
  CheckFailed: "A check the command ran did not pass (for example a verify gate).",
  Usage: "The command line is wrong: unknown command or flag, missing argument, invalid flag value.",
  InvalidInput: "A file or value you gave is invalid. Nothing was written or changed.",
  NotFound: "What the command was told to act on does not exist.",
  Conflict:
    "The action conflicts with current state (already exists, being deleted, another run holds the lock); a remote service's 409 Conflict is this code, with its message as it sent it.",
  Unreachable:
    "A service or cluster could not be reached, did not answer in time, or is too busy: try again (a busy service's message says when).",
  Unauthorized: "Authentication or authorization failed.",
  Rejected:
    "The remote service refused the request (invalid or not allowed); its message is shown as it sent it. When it refused because of a conflict with its current state (HTTP 409: already exists, being deleted), the code is 5.",
  Precondition: "The machine lacks something the command needs (a tool, OS, free port, disk, memory).",
  Internal: "An unexpected failure inside the tool. This is a bug: please report it with the output of -v.",
  UnknownCommand: "No such command. The closest command is suggested.",
  Interrupted: "The run was interrupted (SIGINT, Ctrl-C). Re-run (with --resume where the command has it) to continue.",
  BrokenPipe:
    "The program reading the output (for example head) closed it early. The command stopped writing and printed nothing more, as kubectl does.",
  Terminated: "The run was asked to stop (SIGTERM). Re-run (with --resume where the command has it) to continue.",
};
