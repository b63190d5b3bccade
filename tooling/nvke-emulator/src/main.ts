#!/usr/bin/env node
// `pnpm emulator:nvke --kubeconfig FILE [--port N] [--host H] [--state FILE]
//   [--control-plane-controller=on|off] [--provision-ms N] [--delete-ms N] [--node-ms N]
//   [--tenant-api-servers [--tenant-bin-dir DIR]]`
// Runs in the foreground; prints its base URL as one line on stdout once it is ready;
// logs to stderr. SIGINT/SIGTERM stop it after writing the state file; so does the death of
// the wrapper process (kill -9 included), when it runs as one. A state file of the wrong
// shape is refused, with its problems' lines, before anything starts.
import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { constants, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const USAGE = `usage: pnpm emulator:nvke --kubeconfig FILE [--port N] [--host ADDRESS] [--state FILE]
                          [--control-plane-controller=on|off]
                          [--provision-ms N] [--delete-ms N] [--node-ms N]
                          [--tenant-api-servers [--tenant-bin-dir DIR]]`;

// The workspace packages resolve to their TypeScript sources only under the "source"
// condition; without it they would load whatever was last built into dist/.
if (!process.execArgv.some((arg) => arg === "--conditions=source" || arg === "-C=source")) {
  const child = spawn(
    process.execPath,
    ["--conditions=source", ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    // The IPC channel closes when this process dies, however it dies (kill -9 too): the child
    // stops then, and with it any tenant API servers, instead of living on as an orphan.
    { stdio: ["inherit", "inherit", "inherit", "ipc"] },
  );
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => {
    process.exitCode = code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0));
  });
} else {
  await main();
}

async function main(): Promise<void> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        kubeconfig: { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        state: { type: "string" },
        "control-plane-controller": { type: "string" },
        "provision-ms": { type: "string" },
        "delete-ms": { type: "string" },
        "node-ms": { type: "string" },
        "tenant-api-servers": { type: "boolean" },
        "tenant-bin-dir": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return usage((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const kubeconfig = values.kubeconfig as string | undefined;
  if (kubeconfig === undefined) return usage("--kubeconfig is required: the site cluster's kubeconfig");
  const number = (flag: string): number | undefined => {
    const text = values[flag] as string | undefined;
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${flag} must be a whole number; got "${text}"`);
    return n;
  };
  const cpc = (values["control-plane-controller"] as string | undefined) ?? "on";
  if (!["on", "off"].includes(cpc)) return usage(`--control-plane-controller must be on or off; got "${cpc}"`);

  if (values["tenant-bin-dir"] !== undefined && !values["tenant-api-servers"]) {
    return usage("--tenant-bin-dir goes with --tenant-api-servers");
  }
  const { startEmulator } = await import("./emulator.ts");
  const { testenvTenantApiServers } = await import("./tenants.ts");
  let port: number | undefined;
  const timing: Record<string, number> = {};
  try {
    port = number("port");
    for (const [flag, key] of [
      ["provision-ms", "provisionMs"],
      ["delete-ms", "deleteMs"],
      ["node-ms", "nodeMs"],
    ] as const) {
      const value = number(flag);
      if (value !== undefined) timing[key] = value;
    }
  } catch (error) {
    return usage((error as Error).message);
  }
  // Without --state, a state of this run's own: one shared default path would resume whatever
  // another run on this machine left behind (its clusters, its releases).
  const stateFile = resolve(
    (values.state as string | undefined) ?? join(await mkdtemp(join(tmpdir(), "nvke-emulator-")), "state.json"),
  );
  const log = (line: string) => process.stderr.write(`nvke-emulator: ${line}\n`);
  try {
    const emulator = await startEmulator({
      kubeconfigPath: resolve(kubeconfig),
      stateFile,
      ...(port === undefined ? {} : { port }),
      ...(values.host === undefined ? {} : { host: values.host as string }),
      timing,
      controlPlaneController: cpc === "on",
      ...(values["tenant-api-servers"]
        ? {
            tenantApiServers: testenvTenantApiServers({
              ...(values["tenant-bin-dir"] === undefined ? {} : { binDir: values["tenant-bin-dir"] as string }),
              log,
            }),
          }
        : {}),
      log,
    });
    log(`state file ${stateFile}`);
    process.stdout.write(`${emulator.url}\n`);
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      await emulator.stop();
      log("stopped; state written");
    };
    process.on("SIGINT", () => void stop());
    process.on("SIGTERM", () => void stop());
    // Started by the wrapper above: its death closes this channel.
    if (process.channel) {
      process.channel.unref();
      process.on("disconnect", () => void stop().finally(() => process.exit()));
    }
  } catch (error) {
    log(`error: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}

function usage(message: string): void {
  process.stderr.write(`nvke-emulator: ${message}\n${USAGE}\n`);
  process.exitCode = 2;
}
