import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

// @sigstore/verify is the largest of the package's imports (≈ 0.2–0.4 s): the release's
// readers that check no signature (install, upgrade plan) must not load it with the index.

const index = fileURLToPath(new URL("./index.ts", import.meta.url));

function loadedAfter(script: string): string[] {
  const result = spawnSync(
    process.execPath,
    [
      "--conditions=source",
      "--input-type=module",
      "-e",
      `${script}\nconsole.log(JSON.stringify(Object.keys((await import("node:module")).createRequire(import.meta.url).cache)))`,
    ],
    { encoding: "utf8" },
  );
  expect(result.status, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as string[]).filter((file) => file.includes("@sigstore"));
}

test("importing the index loads no @sigstore/verify; checking a signature does", () => {
  const packageOf = (files: string[]) =>
    new Set(files.map((file) => /@sigstore\/([^/]+)\/dist\//.exec(file)?.[1]).filter(Boolean));
  expect(packageOf(loadedAfter(`await import(${JSON.stringify(index)});`))).not.toContain("verify");
  expect(
    packageOf(
      loadedAfter(
        `const lib = await import(${JSON.stringify(index)}); await lib.verifyBundle({}, "sha256:" + "0".repeat(64), { source: "p", keys: [], identities: [], transparencyLog: "none", timestamps: "none" });`,
      ),
    ),
  ).toContain("verify");
});
