import { type Problem, UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";
import type { ResolvedPins } from "./resolve.ts";
import type { Arch, Artifact, PinSet, ToolName } from "./schema.ts";

/** What a download needs: one tool's file for one architecture, with the digest to check it against. */
export interface RequiredArtifact extends Artifact {
  tool: ToolName;
  version: string;
  arch: Arch;
  sha256: string;
}

/**
 * The artifact of `tool` for `arch`, to download. Fails closed: a tool the pins do not
 * name is PINS_TOOL_MISSING, and an architecture with no artifact, or one without a
 * sha256 digest, is PINS_DIGEST_MISSING, located in the pins. Call it only when the tool
 * is about to be downloaded: a pin set may lack digests for tools that are already installed.
 */
export function requireArtifact(pins: ResolvedPins | PinSet, tool: ToolName, arch: Arch): RequiredArtifact {
  const set = "pins" in pins ? pins.pins : pins;
  const source = "pins" in pins ? pins.source : `pin set ${set.name}`;
  const pin = set.tools[tool];
  if (pin === undefined) {
    throw new UserError(errorCodes.PINS_TOOL_MISSING, `the pin set ${set.name} does not name ${tool}`, {
      problems: [{ severity: "error", source, path: ["tools", tool], message: "is required here" }],
      facts: { tool },
    });
  }
  const artifact = pin.artifacts?.[arch];
  const path = ["tools", tool, "artifacts", arch, ...(artifact === undefined ? [] : ["sha256"])];
  if (artifact?.sha256 === undefined) {
    const problem: Problem = {
      severity: "error",
      source,
      path,
      message:
        artifact === undefined
          ? `is missing: no ${tool} download for ${arch}`
          : "is missing: the download cannot be verified",
    };
    throw new UserError(
      errorCodes.PINS_DIGEST_MISSING,
      `no sha256 digest for ${tool} ${pin.version} on ${arch}; nothing was downloaded`,
      {
        why: `every downloaded tool is checked against the digest its pins give, and these pins give none for ${tool} on ${arch}`,
        next: [
          `install ${tool} ${pin.version} yourself and put it on PATH`,
          `or give its digest in the pins (tools.${tool}.artifacts.${arch}.sha256)`,
        ],
        problems: [problem],
        facts: { tool, version: pin.version, arch },
      },
    );
  }
  return { ...artifact, sha256: artifact.sha256, tool, version: pin.version, arch };
}
