import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { runProcess, testdir } from "@nodekit/test-utils";
import { expect, test } from "vitest";

const main = fileURLToPath(new URL("./main.ts", import.meta.url));

test("a state file of the wrong shape is refused, located, before the URL is printed (the emulator 17)", async () => {
  const dir = await testdir({ "site.kubeconfig": "apiVersion: v1\nkind: Config\n" });
  // Valid JSON, wrong shape: a cluster without a name once made the emulator write Secret "undefined-kubeconfig".
  const id = "00000000-0000-4000-8000-000000000001";
  await writeFile(
    dir.path("state.json"),
    `${JSON.stringify({ version: 1, clusters: { [id]: { cluster: { id } } }, nodePools: {} }, null, 2)}\n`,
  );

  const { exitCode, stdout, stderr } = await runProcess(process.execPath, [
    main,
    "--kubeconfig",
    dir.path("site.kubeconfig"),
    "--state",
    dir.path("state.json"),
    "--port",
    "0",
  ]);

  expect(exitCode).toBe(1);
  expect(stdout).toBe("");
  expect(stderr).toContain(`state file ${dir.path("state.json")} is not an NVKE emulator state file (version 1)`);
  expect(stderr).toContain(`${dir.path("state.json")}:5: field clusters.${id}.cluster.name: is required`);
  expect(stderr).toContain("field machineImages: is required");
}, 60_000);
