// Generated from packages/process/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { createExecaRunner, createRecordingRunner, type ProcessRunner, Redactor } from "@nodekit/process";

async function install(runner: ProcessRunner, kubeconfig: string) {
  await runner.run({ command: "kubectl", args: ["--kubeconfig", kubeconfig, "apply", "-f", "storageclass.yaml"] });
  await runner.run({
    command: "helm",
    args: ["upgrade", "--install", "nvke", "./chart", "--kubeconfig", kubeconfig],
    env: { HOME: "/var/lib/nvke/helm-home" }, // what this call sets, over what every call gets
  });
}

const redactor = new Redactor();
await install(
  createExecaRunner({ redactor, onCall: (line) => console.error(`running ${line}`) }),
  "/tmp/site.kubeconfig",
);

// In a test: a witness that records each call (and, without `inner`, answers it with exit 0).
const witness = createRecordingRunner({ redactor });
await install(witness, "/tmp/site.kubeconfig");
for (const { line } of witness.calls) console.log(line); // kubectl --kubeconfig /tmp/site.kubeconfig apply -f storageclass.yaml …

export {};
