import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runCli } from "./cli-main.ts";
import { TestenvError } from "./errors.ts";
import { defaultStateDir, down, kubeconfig, readState, serve, up } from "./sandbox.ts";

const usage = `usage: pnpm testenv <command>

  up [--bin-dir DIR]                     start kube-apiserver + etcd in the background;
                                         prints the admin kubeconfig path last on stdout
  kubeconfig --user NAME [--group G]...  print a kubeconfig path for that identity
  status [-o json]                       is it running? (exit 3 when not)
  down                                   stop it; no process, port or file is left

State: $NODEKIT_TESTENV_STATE_DIR, else \${XDG_STATE_HOME:-~/.local/state}/nodekit/testenv.
Binaries: tooling/k8s-testbin/ensure.sh (or --bin-dir, or KUBEBUILDER_ASSETS); see docs/testing.md.`;

const log = (line: string) => process.stderr.write(`testenv: ${line}\n`);

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "bin-dir": { type: "string" },
      user: { type: "string" },
      group: { type: "string", multiple: true },
      output: { type: "string", short: "o" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command || rest.length > 0) {
    process.stderr.write(`${usage}\n`);
    return values.help ? 0 : 2;
  }
  const stateDir = defaultStateDir();
  const binDir = values["bin-dir"] === undefined ? {} : { binDir: values["bin-dir"] };
  switch (command) {
    case "up": {
      const supervisor = [process.execPath, fileURLToPath(import.meta.url)];
      const state = await up({ stateDir, log, supervisor, ...binDir });
      process.stdout.write(`${state.info.adminKubeconfigPath}\n`);
      return 0;
    }
    case "serve": {
      const owner = Number(process.env.NODEKIT_TESTENV_OWNER_PID);
      await serve({ stateDir, log, ...binDir, ...(owner > 0 ? { ownerPid: owner } : {}) });
      return 0;
    }
    case "kubeconfig": {
      if (!values.user) {
        process.stderr.write("testenv kubeconfig needs --user NAME\n");
        return 2;
      }
      const path = await kubeconfig({ stateDir, log, identity: { user: values.user, groups: values.group ?? [] } });
      process.stdout.write(`${path}\n`);
      return 0;
    }
    case "status": {
      const state = await readState(stateDir);
      if (values.output === "json") {
        process.stdout.write(`${JSON.stringify(state ? { running: true, ...state } : { running: false })}\n`);
      } else if (state) {
        process.stdout.write(
          [
            `running since ${state.startedAt} (supervisor pid ${state.pid}, etcd ${state.pids.etcd}, kube-apiserver ${state.pids.kubeApiserver})`,
            `server:           ${state.info.server}`,
            `admin kubeconfig: ${state.info.adminKubeconfigPath}`,
            `binaries:         ${state.info.binDir}`,
            `start-up:         ${(state.timings.totalMs / 1000).toFixed(1)} s to /readyz`,
            "",
          ].join("\n"),
        );
      } else {
        process.stdout.write("not running\n");
      }
      return state ? 0 : 3;
    }
    case "down": {
      const wasRunning = await down({ stateDir, log });
      log(wasRunning ? "stopped" : "was not running");
      return 0;
    }
    default:
      process.stderr.write(`unknown command ${command}\n${usage}\n`);
      return 2;
  }
}

await runCli({
  name: "testenv",
  usage,
  main: () => main(process.argv.slice(2)),
  describeKnown: (error) => (error instanceof TestenvError ? `testenv: error: ${error.message}` : undefined),
});
