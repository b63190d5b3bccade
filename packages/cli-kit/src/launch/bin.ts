// The body of every nodekit CLI's bin/run.js (issue 8 item 5: one launcher body for both
// CLIs). This module imports nothing, so that it runs (and says what is wrong) on an older
// Node.js too: the CLI itself is loaded only after the engine check.

/**
 * The oldest Node.js the CLIs run on: every published package.json's engines says
 * `>=` this (tooling/packaging's manifest test holds them to it); @sigstore/* need 22.22.2.
 */
export const MINIMUM_NODE = "22.22.2";

/** What is wrong with running on Node.js `version` ("20.11.1"), or undefined when nothing is. */
export function engineProblem(version: string): string | undefined {
  const have = version.split(".").map(Number);
  const want = MINIMUM_NODE.split(".").map(Number);
  for (let i = 0; i < want.length; i++) {
    const a = have[i] ?? 0;
    const b = want[i] ?? 0;
    if (a > b) return undefined;
    if (a < b) {
      return `error: this CLI needs Node.js ${MINIMUM_NODE} or newer; this is v${version}\nnext: install Node.js 22 LTS (${MINIMUM_NODE} or newer) and run it again\n`;
    }
  }
  return undefined;
}

/** A CLI's bundled entry (its dist/run.js), which re-exports @nodekit/cli-kit's `run`. */
export interface CliEntry {
  run(binUrl: string, argv?: string[], options?: { ownProcess?: boolean }): Promise<void>;
}

/**
 * Starts a CLI from its bin script: the engine check (exit 9 on an old Node.js; oclif's
 * own check would load semver, 47 modules, on every start), then the CLI's entry, loaded by
 * the bin itself so that the path stays relative to the CLI's package. Node's compile cache
 * is not turned on here: `module.enableCompileCache()` without a directory would put it in
 * $TMPDIR/node-compile-cache, which another user can create first and fill with code; the
 * entry turns it on in the CLI's own private cache directory (launch/code-cache.ts).
 */
export async function launch(binUrl: string, load: () => Promise<CliEntry>): Promise<void> {
  // The first start-up mark (see trace.ts; inlined: this module imports nothing).
  if (process.env.NODEKIT_TRACE_STARTUP === "1") {
    process.stderr.write(`startup ${(process.uptime() * 1000).toFixed(1)} bin (Node.js started)\n`);
  }
  const problem = engineProblem(process.versions.node);
  if (problem !== undefined) {
    process.stderr.write(problem);
    process.exit(9); // ExitCode.Precondition (@nodekit/errors is not loaded this early)
  }
  process.env.OCLIF_DISABLE_ENGINE_WARNING ??= "1";
  const { run } = await load();
  // The bin's process is the CLI's own (a test may run `run` in a process of its own instead).
  await run(binUrl, process.argv.slice(2), { ownProcess: true });
}
