#!/usr/bin/env node
// `pnpm emulator:nvke --kubeconfig FILE [--port N] [--host H] [--state FILE]
//   [--control-plane-controller=on|off] [--provision-ms N] [--delete-ms N] [--node-ms N]
//   [--tenant-api-servers [--tenant-bin-dir DIR]] [--admin-token-file FILE]`
// One process in the foreground (the kit's main): prints its base URL as one line on stdout
// once it is ready; logs to stderr. SIGINT/SIGTERM stop it after writing the state file; so
// does the death of the process that started it (kill -9 included). A state file of the wrong
// shape is refused, with its problems' lines, before anything starts.
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readTokenLines, runEmulatorMain, UsageError } from "@nodekit/emulator-kit/main";

await runEmulatorMain(import.meta.url, {
  name: "nvke-emulator",
  usage: `usage: pnpm emulator:nvke --kubeconfig FILE [--port N] [--host ADDRESS] [--state FILE]
                          [--control-plane-controller=on|off]
                          [--provision-ms N] [--delete-ms N] [--node-ms N]
                          [--tenant-api-servers [--tenant-bin-dir DIR]] [--admin-token-file FILE]`,
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
    "admin-token-file": { type: "string" },
  },
  numbers: ["port", "provision-ms", "delete-ms", "node-ms"],
  async start(flags, log) {
    const kubeconfig = flags.string("kubeconfig");
    if (kubeconfig === undefined) throw new UsageError("--kubeconfig is required: the site cluster's kubeconfig");
    const cpc = flags.string("control-plane-controller") ?? "on";
    if (!["on", "off"].includes(cpc))
      throw new UsageError(`--control-plane-controller must be on or off; got "${cpc}"`);
    const tenantBinDir = flags.string("tenant-bin-dir");
    if (tenantBinDir !== undefined && !flags.boolean("tenant-api-servers")) {
      throw new UsageError("--tenant-bin-dir goes with --tenant-api-servers");
    }
    const timing: Record<string, number> = {};
    for (const [flag, key] of [
      ["provision-ms", "provisionMs"],
      ["delete-ms", "deleteMs"],
      ["node-ms", "nodeMs"],
    ] as const) {
      const value = flags.number(flag);
      if (value !== undefined) timing[key] = value;
    }
    const adminTokenFile = flags.string("admin-token-file");
    const adminToken =
      adminTokenFile === undefined ? undefined : (await readTokenLines(adminTokenFile, "--admin-token-file"))[0];
    const { startEmulator } = await import("./emulator.ts");
    const { testenvTenantApiServers } = await import("./tenants.ts");
    // Without --state, a state of this run's own: one shared default path would resume whatever
    // another run on this machine left behind (its clusters, its releases).
    const stateFile = resolve(
      flags.string("state") ?? join(await mkdtemp(join(tmpdir(), "nvke-emulator-")), "state.json"),
    );
    const port = flags.number("port");
    const host = flags.string("host");
    const emulator = await startEmulator({
      kubeconfigPath: resolve(kubeconfig),
      stateFile,
      ...(port === undefined ? {} : { port }),
      ...(host === undefined ? {} : { host }),
      timing,
      controlPlaneController: cpc === "on",
      ...(flags.boolean("tenant-api-servers")
        ? {
            tenantApiServers: testenvTenantApiServers({
              ...(tenantBinDir === undefined ? {} : { binDir: tenantBinDir }),
              log,
            }),
          }
        : {}),
      ...(adminToken === undefined ? {} : { adminToken }),
      log,
    });
    log(`state file ${stateFile}`);
    return emulator;
  },
});
