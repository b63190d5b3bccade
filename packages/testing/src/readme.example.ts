// Generated from packages/testing/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { startControlPlane, startNvkeEmulator } from "@nodekit/testing";

// A real kube-apiserver and etcd on 127.0.0.1, and the NVKE controller emulator on them.
const plane = await startControlPlane();
const emulator = await startNvkeEmulator({
  kubeconfigPath: plane.adminKubeconfigPath,
  stateFile: join(plane.dataDir, "nvke-state.json"),
});
try {
  await emulator.seed({ clusters: 2, namePrefix: "demo" });
  // Your plugin's command, through nvkectl (after `nvkectl plugins link .`), against the emulator
  // (asynchronously: the emulator answers from this process).
  const { stdout } = await promisify(execFile)("nvkectl", ["widgets", "clusters", "--url", emulator.url]);
  console.log(stdout.trim().split("\n")); // [ 'demo-0', 'demo-1' ]
} finally {
  await emulator.stop();
  await plane.stop();
}

export {};
