import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveBinDir } from "./binaries.ts";
import { TestenvError } from "./errors.ts";
import { isolationMarker, loopbackOnly } from "./loopback-only.ts";

// `node tooling/testenv/src/isolate.ts <command> [args...]`: how `pnpm test` and
// `pnpm test:integration` run vitest. First every binary the tests build from Go modules (a
// cold build needs the Go module proxy): the Kubernetes test binaries (tooling/k8s-testbin) and
// the OCI registries (tooling/registry-testbin). Then the command, in a network namespace with
// only loopback up where the platform allows one; elsewhere as it is, and one line on stderr
// says so.

const registryEnsureScript = join(dirname(fileURLToPath(import.meta.url)), "../../registry-testbin/ensure.sh");
const usage = "usage: node tooling/testenv/src/isolate.ts [--] <command> [args...]";
const log = (line: string) => process.stderr.write(`testenv: ${line}\n`);

async function main(argv: string[]): Promise<number> {
  const command = argv[0] === "--" ? argv.slice(1) : argv;
  if (command.length === 0) {
    process.stderr.write(`${usage}\n`);
    return 2;
  }
  const env = { ...process.env };
  // The integration project's global setup and the registry harness take the binaries from
  // here and run no ensure.sh of their own.
  env.NODEKIT_TESTENV_BIN_DIR ||= await resolveBinDir({ log });
  env.NODEKIT_REGISTRY_BIN_DIR ||= await registryBinDir();

  const isolation = await loopbackOnly();
  let argvToRun = command;
  if (isolation.isolated) {
    env[isolationMarker.name] = isolationMarker.value;
    argvToRun = [...isolation.prefix, ...command];
  } else {
    log(`tests run with this machine's network: no network namespace here (${isolation.reason})`);
  }
  const [file = "", ...args] = argvToRun;
  const child = spawn(file, args, { stdio: "inherit", env });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const signal of signals) process.on(signal, forward);
  return new Promise((resolvePromise) => {
    child.on("error", (error) => {
      log(`error: could not run ${command[0]}: ${error.message}`);
      resolvePromise(127);
    });
    child.on("exit", (code, signal) => {
      for (const s of signals) process.off(s, forward);
      if (signal) {
        process.kill(process.pid, signal);
        return;
      }
      resolvePromise(code ?? 1);
    });
  });
}

/** tooling/registry-testbin/ensure.sh's last stdout line; its progress shows on stderr. */
function registryBinDir(): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn("bash", [registryEnsureScript], { stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const dir = stdout.trim().split("\n").at(-1)?.trim() ?? "";
      if (code === 0 && dir) resolvePromise(dir);
      else {
        reject(
          new TestenvError("the OCI registries for the tests are not available", {
            why: `\`bash ${registryEnsureScript}\` exited with ${code === null ? "a signal" : `code ${code}`} (its output is above)`,
            next: [
              "install Go (>= 1.24) so that it can build them, or set NODEKIT_REGISTRY_BIN_DIR to a directory holding them",
            ],
          }),
        );
      }
    });
  });
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof TestenvError) {
    log(`error: ${error.message}`); // what, why and next, one per line
  } else {
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  }
  process.exitCode = 1;
}
