// Generated from packages/errors/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { defineErrorCodes, ExitCode, formatUserError, invalidInput, UserError } from "@nodekit/errors";

// Each package keeps its codes in one table; the exit code comes from the table.
const errorCodes = defineErrorCodes("example", {
  SITESPEC_INVALID: { exitCode: ExitCode.InvalidInput, meaning: "The hosts CSV has problems; each is listed." },
  SITE_NOT_FOUND: { exitCode: ExitCode.NotFound, meaning: "No site has that name." },
});

const problems = [
  {
    severity: "error" as const,
    source: "hosts.csv",
    line: 4,
    row: 3,
    column: "ip",
    value: "10.0.0.300",
    message: "is not a valid IPv4 or IPv6 address",
  },
];
console.log(formatUserError(invalidInput(errorCodes.SITESPEC_INVALID, "hosts.csv", problems)));
// error: hosts.csv has 1 problem; nothing was written
//   hosts.csv:4: row 3, column ip: "10.0.0.300" is not a valid IPv4 or IPv6 address

throw new UserError(errorCodes.SITE_NOT_FOUND, 'no site named "lab"', { next: "name a site the configuration lists, or add one named lab" });

export {};
