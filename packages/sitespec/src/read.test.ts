import { testdir, userErrorOf } from "@nodekit/test-utils";
import { expect, test } from "vitest";
import { readSiteSpec, siteSpecErrorCodes } from "./index.ts";

const SPEC = `apiVersion: nvke.io/v1alpha1
kind: SiteSpec
metadata:
  name: lab
spec:
  hosts:
    - name: node-1
      ip: 10.0.0.11
`;

test("reads a site spec file relative to cwd", async () => {
  const dir = await testdir({ "site/sitespec.yaml": SPEC });
  const spec = await readSiteSpec("site/sitespec.yaml", { cwd: dir.root });
  expect(spec.metadata.name).toBe("lab");
});

test("a missing file is SITE_SPEC_UNREADABLE naming the path as given", async () => {
  const dir = await testdir({});
  const error = await userErrorOf(readSiteSpec("nope.yaml", { cwd: dir.root }));
  expect(error.code).toBe(siteSpecErrorCodes.SITE_SPEC_UNREADABLE.code);
  expect(error.message).toBe("site spec nope.yaml cannot be read");
  expect(error.why).toBe("there is no such file");
});

test("a spec that breaks the schema is SITE_SPEC_FILE_INVALID carrying every problem", async () => {
  const dir = await testdir({ "s.yaml": SPEC.replace("10.0.0.11", "10.0.0.300").replace("name: lab", "name: Lab_1") });
  const error = await userErrorOf(readSiteSpec("s.yaml", { cwd: dir.root }));
  expect(error.code).toBe(siteSpecErrorCodes.SITE_SPEC_FILE_INVALID.code);
  expect(error.message).toMatch(/^site spec s\.yaml has 2 problems; nothing was changed$/);
  expect(error.problems.every((p) => p.source === "s.yaml")).toBe(true);
});

test("a file in another encoding is named as such", async () => {
  const dir = await testdir({ "s.yaml": { content: Buffer.from([0xff, 0xfe, 0x61, 0x00]) } });
  const error = await userErrorOf(readSiteSpec("s.yaml", { cwd: dir.root }));
  expect(error.code).toBe(siteSpecErrorCodes.SITE_SPEC_FILE_INVALID.code);
});
