import { fsSafeErrorCodes } from "@nodekit/fs-safe";
import { kubeErrorCodes } from "@nodekit/kube";
import { nvkeApiErrorCodes } from "@nodekit/nvke-api";
import { ociErrorCodes } from "@nodekit/oci";
import { releaseErrorCodes } from "@nodekit/release";
import { siteConfigErrorCodes } from "@nodekit/site-config";
import { siteSpecErrorCodes } from "@nodekit/sitespec";
import { describe, expect, it } from "vitest";
import { errorCodes } from "./errors.ts";
import { NVKECTL_HINTS, type NvkectlHints } from "./hints.ts";

describe("nvkectl's hints", () => {
  it("are keyed by codes of the error tables, so a renamed code cannot leave a hint behind", () => {
    const tables = [
      errorCodes,
      kubeErrorCodes,
      siteConfigErrorCodes,
      siteSpecErrorCodes,
      nvkeApiErrorCodes,
      releaseErrorCodes,
      ociErrorCodes,
      fsSafeErrorCodes,
    ];
    const codes = new Set(tables.flatMap((table) => Object.values(table).map((entry) => entry.code)));
    expect(Object.keys(NVKECTL_HINTS).filter((code) => !codes.has(code))).toEqual([]);
    // @ts-expect-error: a code no table has is refused by the typecheck.
    const misspelt: NvkectlHints = { CONTROLER_TIMEOUT: () => [] };
    expect(Object.keys(misspelt)).toEqual(["CONTROLER_TIMEOUT"]);
  });
});
