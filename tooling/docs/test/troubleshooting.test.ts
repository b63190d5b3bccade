import { expect, test } from "vitest";
import { allErrorCodes } from "../catalogue.ts";
import { FIXES, troubleshootingReference } from "../troubleshooting.ts";

test("every error code is on the page under its exit code, with its cause and a fix", () => {
  const codes = allErrorCodes();
  const page = troubleshootingReference(codes);
  for (const entry of codes) {
    const row = page.split("\n").find((line) => line.startsWith(`| \`${entry.code}\` |`));
    expect(row, entry.code).toBeDefined();
    const section = page.slice(0, page.indexOf(row ?? "")).lastIndexOf("## Exit ");
    expect(page.slice(section).startsWith(`## Exit ${entry.exitCode}:`), entry.code).toBe(true);
  }
});

test("no fix is written for a code that no table defines (a renamed or removed code)", () => {
  const known = new Set(allErrorCodes().map((entry) => entry.code));
  expect(Object.keys(FIXES).filter((code) => !known.has(code))).toEqual([]);
});

test("every error code has a fix of its own, not only its exit code's", () => {
  expect(
    allErrorCodes()
      .filter((entry) => FIXES[entry.code] === undefined)
      .map((entry) => entry.code),
  ).toEqual([]);
});
