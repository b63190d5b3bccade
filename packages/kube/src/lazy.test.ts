import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

// semver (about 50 modules) is the versions' alone: a CLI's hot path that imports this package
// for its errors, its calls or `connect` must not load it; comparing a version does.

const index = fileURLToPath(new URL("./index.ts", import.meta.url));

function semverLoadedAfter(script: string): string[] {
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
  return (JSON.parse(result.stdout) as string[]).filter((file) => /[/\\]semver[/\\]/.test(file));
}

test("importing the index loads no semver; comparing a version does", () => {
  expect(semverLoadedAfter(`await import(${JSON.stringify(index)});`)).toEqual([]);
  expect(
    semverLoadedAfter(
      `const { atLeast } = await import(${JSON.stringify(index)}); if (!(await atLeast("v1.32.3+k3s1", "v1.30.0"))) process.exit(3);`,
    ),
  ).not.toEqual([]);
});
