// Generated from packages/kube/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { isUserError } from "@nodekit/errors";
import { kubectlCall, runKube } from "@nodekit/kube";
import { createExecaRunner } from "@nodekit/process";

const target = { kubeconfig: "lab.kubeconfig", requestTimeout: "10s" };
const call = kubectlCall(target, ["get", "storageclass", "lab-local", "-o", "name"]);
try {
  const answer = await runKube(createExecaRunner(), call, { doing: "reading the lab StorageClass", kubeconfig: target.kubeconfig });
  console.log(answer.found ? answer.stdout.trim() : "no StorageClass lab-local yet");
} catch (error) {
  // Unreachable, forbidden, a broken kubeconfig, kubectl missing: one user error each, with what to do.
  if (isUserError(error)) console.error(`${error.code}: ${error.message}`);
  process.exitCode = 1;
}

export {};
