import { readYamlDocuments } from "@nodekit/documents";
import { ExitCode, formatProblem } from "@nodekit/errors";
import { userErrorOf } from "@nodekit/test-utils";
import { dump } from "js-yaml";
import { describe, expect, test } from "vitest";
import {
  DEFAULT_PINS,
  fetchPins,
  offlinePins,
  type PinSet,
  parsePins,
  pinSetHash,
  REQUIRED_TOOLS,
  requireArtifact,
  versionPinsErrorCodes,
} from "./index.ts";

const json = (value: unknown) => JSON.stringify(value, null, 2);
const clone = (): PinSet => structuredClone(DEFAULT_PINS);

describe("parsePins", () => {
  test("the shipped defaults are a valid pin set naming every required tool", () => {
    const { value, problems } = parsePins(json(DEFAULT_PINS), { source: "defaults.json" });
    expect(problems).toEqual([]);
    expect(Object.keys(value?.tools ?? {})).toEqual(expect.arrayContaining([...REQUIRED_TOOLS]));
  });

  test("reports every problem at once, with line, field path and value", () => {
    // Given a pin set with four mistakes
    const text = [
      "schemaVersion: 1",
      "name: bad",
      "tools:",
      "  k3s: { version: v1.33 }",
      "  calico: { version: v3.30.3 }",
      "  liqo: { version: v1.0.1 }",
      "  helm:",
      "    version: v3.18.6",
      "    artifacts:",
      "      amd64: { url: http://example.com/helm.tgz, sha256: ABC, format: tar.gz }",
      "  liqoctl: { version: v1.0.1 }",
      "  proxmox-operator: { version: 0.4.0 }",
      "",
    ].join("\n");

    // When it is parsed
    const { value, problems } = parsePins(text, { source: "pins.yaml" });

    // Then each problem names its line and field
    expect(value).toBeUndefined();
    expect(problems.map(formatProblem)).toEqual([
      'pins.yaml:4: field tools.k3s.version: "v1.33" must be a k3s version such as v1.33.5+k3s1',
      'pins.yaml:10: field tools.helm.artifacts.amd64.url: "http://example.com/helm.tgz" must be an https:// URL (plain http:// only to 127.0.0.1, ::1 or localhost)',
      'pins.yaml:10: field tools.helm.artifacts.amd64.sha256: "ABC" must be a sha256 digest: 64 lower-case hex digits',
      "pins.yaml:10: field tools.helm.artifacts.amd64.member: is required for a tar.gz: the executable's path inside it",
    ]);
  });

  test("liqoctl must be Liqo's version", () => {
    const pins = clone();
    pins.tools.liqoctl = { ...pins.tools.liqoctl, version: "v1.0.0" };
    const { problems } = parsePins(json(pins), { source: "pins.json" });
    expect(problems.map(formatProblem)).toEqual([
      expect.stringMatching(
        /^pins\.json:\d+: field tools\.liqoctl\.version: "v1\.0\.0" must equal tools\.liqo\.version \(v1\.0\.1\)/,
      ),
    ]);
  });

  test("a newer schema version is refused with a message saying so; an unknown field is named, not quoted", () => {
    const text = json({ ...clone(), schemaVersion: 2, secretish: "tok-123" });
    const { problems } = parsePins(text, { source: "pins.json" });
    expect(problems.map(formatProblem)).toEqual([
      "pins.json:2: field schemaVersion: 2 is newer than this version of the tool reads (1); update the tool",
      expect.stringMatching(/^pins\.json:\d+: field secretish: is not a known field/),
    ]);
    expect(problems.map(formatProblem).join("\n")).not.toContain("tok-123");
  });

  test("a missing required tool is named", () => {
    const pins: Record<string, unknown> = clone();
    const tools = { ...(pins.tools as object) } as Record<string, unknown>;
    delete tools.helm;
    const { problems } = parsePins(json({ ...pins, tools }), { source: "pins.json" });
    expect(problems.map(formatProblem)).toEqual([expect.stringMatching(/field tools\.helm: is required/)]);
  });
});

describe("requireArtifact", () => {
  test("gives the URL and digest for the architecture", () => {
    const artifact = requireArtifact(DEFAULT_PINS, "helm", "arm64");
    expect(artifact).toMatchObject({
      tool: "helm",
      version: "v3.18.6",
      arch: "arm64",
      format: "tar.gz",
      member: "linux-arm64/helm",
      sha256: "5b8e00b6709caab466cbbb0bc29ee09059b8dc9417991dd04b497530e49b1737",
    });
  });

  test("the offline defaults carry liqoctl's published digests (krew-index plugins/liqo.yaml, v1.0.1)", () => {
    expect(requireArtifact(offlinePins(), "liqoctl", "amd64").sha256).toBe(
      "871e7637f69a7d67fcdac9db909d2ab2bffb161693165e581abd09d2e1ae32b2",
    );
    expect(requireArtifact(offlinePins(), "liqoctl", "arm64").sha256).toBe(
      "d66f3a6751ff6411ef1f172875a6068459cc0c7b63a461ea47fe10f63506f81f",
    );
  });

  test("an artifact without a digest is an error located in the pins, not a download", async () => {
    const resolved = offlinePins();
    delete resolved.pins.tools.liqoctl.artifacts?.amd64?.sha256;
    const error = await userErrorOf(Promise.resolve().then(() => requireArtifact(resolved, "liqoctl", "amd64")));
    expect(error.code).toBe(versionPinsErrorCodes.PINS_DIGEST_MISSING.code);
    expect(error.exitCode).toBe(ExitCode.InvalidInput);
    expect(error.message).toBe("no sha256 digest for liqoctl v1.0.1 on amd64; nothing was downloaded");
    expect(error.problems.map(formatProblem)).toEqual([
      "offline defaults: field tools.liqoctl.artifacts.amd64.sha256: is missing: the download cannot be verified",
    ]);
  });

  test("an architecture without an artifact, and a tool not pinned, are errors too", async () => {
    const noArm = await userErrorOf(Promise.resolve().then(() => requireArtifact(DEFAULT_PINS, "liqoctl", "arm")));
    expect(noArm.problems[0]?.path).toEqual(["tools", "liqoctl", "artifacts", "arm"]);
    const unknown = await userErrorOf(Promise.resolve().then(() => requireArtifact(DEFAULT_PINS, "kubectl", "amd64")));
    expect(unknown.code).toBe("PINS_TOOL_MISSING");
  });
});

describe("offlinePins", () => {
  test("uses the shipped defaults and warns that they are not platform-validated", () => {
    const resolved = offlinePins();
    expect(resolved.origin).toBe("offline");
    expect(resolved.pins).toEqual(DEFAULT_PINS);
    expect(resolved.hash).toBe(pinSetHash(DEFAULT_PINS));
    expect(resolved.warnings).toEqual([expect.stringContaining("NodeRings has not validated this combination")]);
  });

  test("a tool in the config replaces the default whole, and config problems are located in the config file", () => {
    // Given a config whose pins section overrides helm (without artifacts) and breaks k3s
    const text = [
      "api: {}",
      "pins:",
      "  tools:",
      "    helm: { version: v3.19.0 }",
      "    k3s: { version: latest }",
      "",
    ].join("\n");
    const document = readYamlDocuments(text, { source: "config.yaml" }).documents[0];
    if (document === undefined) throw new Error("no document");

    // When offline pins are built from it
    const error = (() => {
      try {
        offlinePins({ defaults: document, at: ["pins"], source: "config.yaml" });
      } catch (e) {
        return e as { problems: Parameters<typeof formatProblem>[0][]; code: string };
      }
      throw new Error("expected a failure");
    })();

    // Then the problem names the config file's line and the full field path
    expect(error.code).toBe("PINS_INVALID");
    expect(error.problems.map(formatProblem)).toEqual([
      'config.yaml:5: field pins.tools.k3s.version: "latest" must be a k3s version such as v1.33.5+k3s1',
    ]);

    // And a valid override takes helm whole: the new version has no artifacts from the old one
    const good = readYamlDocuments(dump({ pins: { tools: { helm: { version: "v3.19.0" } } } }), { source: "c.yaml" });
    const resolved = offlinePins({ defaults: good.documents[0] ?? { value: {} }, at: ["pins"], source: "c.yaml" });
    expect(resolved.pins.tools.helm).toEqual({ version: "v3.19.0" });
    expect(resolved.source).toBe("c.yaml");
  });
});

describe("fetchPins", () => {
  test("validates what the source answers and locates problems in the answer", async () => {
    const pins = clone();
    pins.tools.calico = { version: "3.30" };
    const source = {
      getPinsDocument: async () => ({ text: json(pins), url: "http://127.0.0.1:1/api/v1/pins?arch=amd64" }),
    };
    const error = await userErrorOf(fetchPins(source, { arch: "amd64" }));
    expect(error.code).toBe("PINS_INVALID");
    expect(error.problems.map(formatProblem)).toEqual([
      expect.stringMatching(
        /^http:\/\/127\.0\.0\.1:1\/api\/v1\/pins\?arch=amd64:\d+: field tools\.calico\.version: "3\.30" must be a Calico version/,
      ),
    ]);
  });

  test("returns the pins with their origin and hash", async () => {
    const source = { getPinsDocument: async () => ({ text: json(DEFAULT_PINS), url: "u" }) };
    const resolved = await fetchPins(source, { arch: "amd64" });
    expect(resolved).toMatchObject({ origin: "platform", source: "u", hash: pinSetHash(DEFAULT_PINS), warnings: [] });
  });
});
