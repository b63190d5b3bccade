import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { formatProblem } from "@nodekit/errors";
import { repoRoot, tempDir, userErrorOf } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { parseStackConfig, readStackConfig, stackConfigKeys, stackCredentials } from "./index.ts";

const FILLED = `apiVersion: nvke.io/v1alpha1
kind: StackConfig
nico:
  endpoint: https://nico.example.net/api
  organizationId: org-1234
  apiName: nvke
images:
  profiles:
    amd64: registry.example.net/nvke/profiles:v1-amd64
    arm64: registry.example.net/nvke/profiles:v1-arm64
clientNetworks: [10.20.0.0/24, "fd00::/64"]
clusterAPI:
  providerRepository: ./providers
`;

describe("the stack config", () => {
  test("a filled-in file validates, with the defaults filled in", () => {
    const parsed = parseStackConfig(FILLED, { source: "stack.yaml" });
    expect(parsed.problems).toEqual([]);
    expect(parsed.config).toMatchObject({
      nico: { apiKeyFromEnv: "NVKE_NICO_API_KEY", organizationId: "org-1234" },
      storageClass: { name: "lab-local", provisioner: "rancher.io/local-path", default: true },
      controllerApi: { port: 8080, podSelector: { "app.kubernetes.io/name": "nvke-controller" } },
    });
    // The controller's namespace is the deploy path's unless the file names one.
    expect(parsed.config?.controllerApi.namespace).toBeUndefined();
  });

  test("examples/stack.yaml is complete: it validates, and only its REPLACE_* values are left to fill", async () => {
    const text = await readFile(join(repoRoot, "examples/stack.yaml"), "utf8");
    const parsed = parseStackConfig(text, { source: "examples/stack.yaml" });
    expect(parsed.problems).toEqual([]);
    expect(parsed.unfilled.map(formatProblem)).toEqual([
      'examples/stack.yaml:7: field nico.endpoint: "REPLACE_NICO_API_ENDPOINT" is still a placeholder: fill it in',
      'examples/stack.yaml:8: field nico.organizationId: "REPLACE_NICO_ORGANIZATION_ID" is still a placeholder: fill it in',
      'examples/stack.yaml:9: field nico.apiName: "REPLACE_NICO_API_NAME" is still a placeholder: fill it in',
      'examples/stack.yaml:13: field images.profiles: "REPLACE_PROFILES_IMAGE" is still a placeholder: fill it in',
      'examples/stack.yaml:31: field clusterAPI.providerRepository: "REPLACE_PROVIDER_REPOSITORY_DIR" is still a placeholder: fill it in',
    ]);
    const keys = stackConfigKeys().map((key) => key.key);
    for (const path of parsed.unfilled.map((problem) => problem.path?.join("."))) expect(keys).toContain(path);
  });

  test("every problem at once, with line and key; an unknown key's value is never quoted", () => {
    const parsed = parseStackConfig(
      `apiVersion: nvke.io/v1alpha1
kind: StackConfig
nico:
  endpoint: ftp://nico
  organizationId: ""
  apiName: nvke
  apiKeyFromEnv: nico-key
  apiKey: s3cret-value
images:
  controller: not an image
clientNetworks: [10.20.0.0/33]
clusterAPI:
  providerRepository: REPLACE_ME
`,
      { source: "stack.yaml" },
    );
    expect(parsed.problems.map(formatProblem)).toEqual([
      'stack.yaml:4: field nico.endpoint: "ftp://nico" must be an https:// URL',
      'stack.yaml:5: field nico.organizationId: "" is empty',
      'stack.yaml:7: field nico.apiKeyFromEnv: "nico-key" is not an environment variable name (A-Z, 0-9 and _)',
      "stack.yaml:8: field nico.apiKey: is not a known field; the fields here are endpoint, organizationId, apiName, apiKeyFromEnv",
      'stack.yaml:10: field images.controller: "not an image" is not an image reference with a tag or digest (registry/repository:tag or …@sha256:…)',
      'stack.yaml:11: field clientNetworks[0]: "10.20.0.0/33" is not a network in CIDR notation such as 10.20.0.0/24',
    ]);
    expect(parsed.unfilled.map((problem) => problem.path?.join("."))).toEqual(["clusterAPI.providerRepository"]);
    expect(JSON.stringify(parsed)).not.toContain("s3cret-value");
  });

  test("readStackConfig refuses a file with placeholders left, listing every one", async () => {
    const { path, cleanup } = await tempDir("stack-");
    try {
      const file = join(path, "stack.yaml");
      await writeFile(file, FILLED.replace("org-1234", "REPLACE_ORG").replace("nvke\n", "REPLACE_API_NAME\n"));
      const error = await userErrorOf(readStackConfig(file, { source: "stack.yaml" }));
      expect(error.code).toBe("STACK_CONFIG_UNFILLED");
      expect(error.message).toBe("stack config stack.yaml has 2 REPLACE_* values left unfilled; nothing was changed");
      expect(error.problems.map((problem) => problem.path?.join("."))).toEqual(["nico.organizationId", "nico.apiName"]);
      expect((await userErrorOf(readStackConfig(join(path, "nope.yaml")))).code).toBe("STACK_CONFIG_NOT_FOUND");
    } finally {
      await cleanup();
    }
  });

  test("readStackConfig names a file that is not UTF-8 as such, with its line", async () => {
    const { path, cleanup } = await tempDir("stack-");
    try {
      const latin1 = join(path, "latin1.yaml");
      await writeFile(
        latin1,
        Buffer.concat([Buffer.from(FILLED), Buffer.from("# caf"), Buffer.from([0xe9]), Buffer.from("\n")]),
      );
      const error = await userErrorOf(readStackConfig(latin1, { source: "latin1.yaml" }));
      expect(error.code).toBe("STACK_CONFIG_INVALID");
      expect(error.problems).toHaveLength(1);
      expect(error.problems[0]).toMatchObject({ source: "latin1.yaml", line: FILLED.split("\n").length });
      expect(error.problems[0]?.message).toContain("not UTF-8");
      const utf16 = join(path, "utf16.yaml");
      await writeFile(utf16, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(FILLED, "utf16le")]));
      const wide = await userErrorOf(readStackConfig(utf16, { source: "utf16.yaml" }));
      expect(wide.code).toBe("STACK_CONFIG_INVALID");
      expect(wide.problems[0]?.message).toContain("not UTF-8");
    } finally {
      await cleanup();
    }
  });

  test("the API key comes from the variable the config names, and nowhere else", () => {
    const config = parseStackConfig(FILLED, { source: "s" }).config;
    if (config === undefined) throw new Error("fixture does not validate");
    expect(stackCredentials(config, { NVKE_NICO_API_KEY: "k-1" })).toEqual({ nicoApiKey: "k-1" });
    expect(() => stackCredentials(config, {})).toThrow("the environment variable NVKE_NICO_API_KEY is not set");
  });
});

// Issue 26 §1 item 7: an embedded placeholder and an ambiguous CIDR passed validation.
describe("what the stack config no longer lets through", () => {
  test("a REPLACE_ inside a value is unfilled, like one that starts it", () => {
    const parsed = parseStackConfig(
      FILLED.replace("https://nico.example.net/api", "https://REPLACE_NICO_HOST/api").replace(
        "./providers",
        "/srv/REPLACE_ME/providers",
      ),
      { source: "stack.yaml" },
    );
    expect(parsed.config).toBeUndefined();
    expect(parsed.problems).toEqual([]);
    expect(parsed.unfilled.map(formatProblem)).toEqual([
      'stack.yaml:4: field nico.endpoint: "https://REPLACE_NICO_HOST/api" is still a placeholder: fill it in',
      'stack.yaml:13: field clusterAPI.providerRepository: "/srv/REPLACE_ME/providers" is still a placeholder: fill it in',
    ]);
  });

  test("a network with host bits set is refused, naming the network and the one address it could mean", () => {
    const parsed = parseStackConfig(
      FILLED.replace(
        'clientNetworks: [10.20.0.0/24, "fd00::/64"]',
        'clientNetworks: [10.20.0.5/24, "fd00::1/64", 10.0.0.0/8, "2001:db8::/32", 192.0.2.7/32]',
      ),
      { source: "stack.yaml" },
    );
    expect(parsed.problems.map(formatProblem)).toEqual([
      'stack.yaml:11: field clientNetworks[0]: "10.20.0.5/24" is ambiguous: 10.20.0.5 has host bits set for /24; write the network 10.20.0.0/24, or the one address 10.20.0.5/32',
      'stack.yaml:11: field clientNetworks[1]: "fd00::1/64" is ambiguous: fd00::1 has host bits set for /64; write the network fd00::/64, or the one address fd00::1/128',
    ]);
  });
});
