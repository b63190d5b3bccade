#!/usr/bin/env node
// `pnpm emulator:noderings [--port N] [--host H] [--state FILE] [--tokens-file FILE]
//   [--admin-token-file FILE] [--inbound-ms N]`
// One process in the foreground (the kit's main): prints its base URL as one line on stdout
// once it is ready, logs to stderr, and stops (writing its state) on SIGINT, SIGTERM, or when
// the process that started it goes away.
import { resolve } from "node:path";
import { readTokenLines, runEmulatorMain } from "@nodekit/emulator-kit/main";

await runEmulatorMain(import.meta.url, {
  name: "noderings-emulator",
  usage:
    "usage: pnpm emulator:noderings [--port N] [--host ADDRESS] [--state FILE] [--tokens-file FILE] [--admin-token-file FILE] [--inbound-ms N]",
  options: {
    port: { type: "string" },
    host: { type: "string" },
    state: { type: "string" },
    "tokens-file": { type: "string" },
    "admin-token-file": { type: "string" },
    "inbound-ms": { type: "string" },
  },
  numbers: ["port", "inbound-ms"],
  async start(flags, log) {
    // Loaded once the command line is known to be good (and under the "source" condition).
    const { startNodeRingsEmulator } = await import("./index.ts");
    const tokensFile = flags.string("tokens-file");
    // One token per line: "<token>" (account "default") or "<account> <token>".
    const tokens =
      tokensFile === undefined ? undefined : parseTokens(await readTokenLines(tokensFile, "--tokens-file"));
    const adminTokenFile = flags.string("admin-token-file");
    const adminToken =
      adminTokenFile === undefined ? undefined : (await readTokenLines(adminTokenFile, "--admin-token-file"))[0];
    const state = flags.string("state");
    const port = flags.number("port");
    const inboundMs = flags.number("inbound-ms");
    const host = flags.string("host");
    const emulator = await startNodeRingsEmulator({
      ...(port === undefined ? {} : { port }),
      ...(host === undefined ? {} : { host }),
      ...(state === undefined ? {} : { stateFile: resolve(state) }),
      ...(tokens === undefined ? {} : { tokens }),
      ...(adminToken === undefined ? {} : { adminToken }),
      ...(inboundMs === undefined ? {} : { timing: { inboundMs } }),
      log,
    });
    log(
      `pid ${process.pid}; state file ${emulator.stateFile}${state === undefined ? " (fresh for this run; --state FILE keeps it)" : ""}`,
    );
    log(
      tokens === undefined
        ? 'accepting the development token (account "default"; see the README)'
        : `accepting ${tokens.length} token(s) from ${tokensFile}`,
    );
    // The control routes take only the admin token; without a file naming one, it is random and known to nobody.
    log(
      adminTokenFile === undefined
        ? "the control routes (/_emulator/*) are closed: --admin-token-file FILE opens them to the token in FILE"
        : `the control routes (/_emulator/*) take the admin token in ${adminTokenFile}`,
    );
    return emulator;
  },
  exitCodeOf: (error) => ((error as Error).name === "StateFileError" ? 3 : 1),
});

function parseTokens(lines: readonly string[]): Array<{ token: string; account: string }> {
  return lines.map((line) => {
    const [first = "", second] = line.split(/\s+/);
    return second === undefined ? { token: first, account: "default" } : { token: second, account: first };
  });
}
