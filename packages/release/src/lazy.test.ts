import { fileURLToPath } from "node:url";
import { modulesLoadedAfter } from "@nodekit/test-utils";
import { expect, test } from "vitest";

// @sigstore/verify is the largest of the package's imports (≈ 0.2–0.4 s): the release's
// readers that check no signature (install, upgrade plan) must not load it with the index.

const index = fileURLToPath(new URL("./index.ts", import.meta.url));

const loadedAfter = (script: string) => modulesLoadedAfter(script).filter((file) => file.includes("@sigstore"));

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
