import { fileURLToPath } from "node:url";
import { modulesLoadedAfter } from "@nodekit/test-utils";
import { expect, test } from "vitest";

// semver (about 50 modules) is the versions' alone: a CLI's hot path that imports this package
// for its errors, its calls or `connect` must not load it; comparing a version does.

const index = JSON.stringify(fileURLToPath(new URL("./index.ts", import.meta.url)));
const semverAfter = (script: string) => modulesLoadedAfter(script).filter((file) => /[/\\]semver[/\\]/.test(file));

test("importing the index loads no semver; comparing a version does", () => {
  expect(semverAfter(`await import(${index});`)).toEqual([]);
  expect(
    semverAfter(
      `const { atLeast } = await import(${index}); if (!(await atLeast("v1.32.3+k3s1", "v1.30.0"))) process.exit(3);`,
    ),
  ).not.toEqual([]);
});
