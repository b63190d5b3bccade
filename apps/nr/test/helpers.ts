import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { type RunningNodeRingsEmulator, startNodeRingsEmulator } from "@nodekit/noderings-emulator";
import { hostRoot, NR_FIXTURES } from "@nodekit/nr-standins";
import { type CliResult, type RunCliOptions, runCli, tempDir } from "@nodekit/test-utils";
import { afterAll, beforeAll } from "vitest";

// Shared by apps/nr's tests: the CLI built and run as a subprocess, with HOME and NR_HOME
// in a temporary directory of the test's own. The recording stand-ins for the programs that
// cannot run on these machines (the k3s installer, liqoctl, Calico's operator) and the
// fixtures nr is pointed at are @nodekit/nr-standins (tooling/nr-standins), which the
// sandbox's demo shell uses too.

export {
  agentVm,
  calicoOperator,
  hostRoot,
  pinTestbinHelm,
  REGISTER_PHASES,
  type StandIns,
  standIns,
} from "@nodekit/nr-standins";

const execFileAsync = promisify(execFile);

export const FIXTURES = NR_FIXTURES;

export interface NrHome {
  path: string;
  /** ~/.nr */
  nrHome: string;
  /** NR_LOCK_DIR: this test file's "machine", whose one lock every NR_HOME of the file shares. */
  lockDir: string;
  env: Record<string, string>;
  nr(args: string[], options?: Omit<RunCliOptions, "cwd">): Promise<CliResult>;
  cleanup(): Promise<void>;
}

export async function nrHome(prefix = "nr-test-"): Promise<NrHome> {
  const dir = await tempDir(prefix);
  const nr = join(dir.path, ".nr");
  const lockDir = join(dir.path, "machine-lock");
  const env = {
    HOME: dir.path,
    NR_HOME: nr,
    // nr's lock is the machine's (/run/nr for root): every NR_HOME of one test file shares this
    // one instead, as every state on one machine shares /run/nr.
    NR_LOCK_DIR: lockDir,
    XDG_CONFIG_HOME: join(dir.path, "config"),
    XDG_CACHE_HOME: join(dir.path, "cache"),
  };
  return {
    path: dir.path,
    nrHome: nr,
    lockDir,
    env,
    nr: (args, options = {}) => runCli("nr", args, { ...options, cwd: dir.path, env: { ...env, ...options.env } }),
    cleanup: dir.cleanup,
  };
}

/** A test file's NodeRings emulator (accepting `token`), its home and its host root. */
export interface EmulatorHome {
  emulator: RunningNodeRingsEmulator;
  home: NrHome;
  root: string;
}

/**
 * Starts an EmulatorHome before the file's tests and stops it after them; its fields are set
 * once the file's beforeAll has run.
 */
export function useEmulatorHome(prefix: string, token: string): EmulatorHome {
  const fixture: Partial<EmulatorHome> = {};
  beforeAll(async () => {
    fixture.emulator = await startNodeRingsEmulator({ tokens: [token] });
    fixture.home = await nrHome(prefix);
    fixture.root = await hostRoot(fixture.home.path);
  });
  afterAll(async () => {
    await fixture.emulator?.stop();
    await fixture.home?.cleanup();
  });
  return fixture as EmulatorHome;
}

/** `nr cluster register` against `apiUrl` with `root` as the host root and a 2 s API timeout, then `extra`. */
export const registerArgv = (apiUrl: string, root: string, extra: string[] = []) => [
  "cluster",
  "register",
  "--api-url",
  apiUrl,
  "--host-root",
  root,
  "--api-timeout",
  "2s",
  ...extra,
];

/** `kubectl --kubeconfig K ...args`, with stdin; rejects on a non-zero exit. */
export async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const child = execFileAsync("kubectl", ["--kubeconfig", kubeconfig, ...args], { encoding: "utf8", timeout: 60_000 });
  if (input !== undefined) child.child.stdin?.end(input);
  const { stdout } = await child;
  return stdout;
}

/** `kubectl apply -f -` of one object. */
export const kubectlApply = (kubeconfig: string, object: object): Promise<string> =>
  kubectl(kubeconfig, ["apply", "-f", "-"], JSON.stringify(object));
