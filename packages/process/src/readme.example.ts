// Generated from packages/process/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { createExecaRunner, createRecordingRunner, type ProcessRunner, Redactor } from "@nodekit/process";

async function install(runner: ProcessRunner, kubeconfig: string) {
  await runner.run({ command: "kubectl", args: ["apply", "-f", "storageclass.yaml"], env: { KUBECONFIG: kubeconfig } });
  await runner.run({
    command: "helm",
    args: ["upgrade", "--install", "nvke", "./chart"],
    env: { KUBECONFIG: kubeconfig },
  });
}

const redactor = new Redactor();
const dryRun = createRecordingRunner({ redactor }); // answers every call with exit 0 and empty output
await install(dryRun, "/tmp/site.kubeconfig");
for (const { line } of dryRun.calls) console.log(line); // KUBECONFIG=/tmp/site.kubeconfig kubectl apply -f storageclass.yaml …
await install(
  createExecaRunner({ redactor, onCall: (line) => console.error(`running ${line}`) }),
  "/tmp/site.kubeconfig",
);

export {};
