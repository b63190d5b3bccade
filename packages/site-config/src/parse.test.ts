import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatConfig, parseConfig } from "./parse.ts";
import { API_VERSION, KIND } from "./rules.ts";
import { configsOf } from "./test-support.ts";

const source = "/home/op/.config/nvkectl/config.yaml";

describe("parseConfig", () => {
  it("reads a valid file", () => {
    const text = [
      "apiVersion: nvkectl.nvke.io/v1",
      "kind: Config",
      "activeSite: lab",
      "sites:",
      "  - name: lab",
      "    url: http://10.0.0.5:30080",
      "    kubeconfig: /home/op/lab.kubeconfig",
    ].join("\n");

    const { config, problems } = parseConfig(text, { source });

    expect(problems).toEqual([]);
    expect(config).toEqual({
      apiVersion: API_VERSION,
      kind: KIND,
      activeSite: "lab",
      sites: [{ name: "lab", url: "http://10.0.0.5:30080", kubeconfig: "/home/op/lab.kubeconfig" }],
    });
  });

  it("reads an empty file, or one with only comments, as an empty configuration", () => {
    for (const text of ["", "# nothing yet\n"]) {
      expect(parseConfig(text, { source })).toEqual({
        config: { apiVersion: API_VERSION, kind: KIND, sites: [] },
        problems: [],
      });
    }
  });

  it("reports every problem in one pass, with line and field path", () => {
    const text = [
      "apiVersion: nvkectl.nvke.io/v2", // 1
      "kind: Config", // 2
      "activeSite: nowhere", // 3
      "colour: blue", // 4
      "sites:", // 5
      "  - name: Lab_1", // 6
      "    url: ftp://example.com", // 7
      "    kubeconfig: lab.kubeconfig", // 8
      "  - name: edge", // 9
      "    url: https://edge.example.com", // 10
      "    token: abc", // 11
    ].join("\n");

    const { config, problems } = parseConfig(text, { source });

    expect(config).toBeUndefined();
    expect(problems.map((p) => [p.line, p.path?.join("."), p.value])).toEqual([
      [1, "apiVersion", "nvkectl.nvke.io/v2"],
      [3, "activeSite", "nowhere"],
      [4, "colour", undefined],
      [6, "sites.0.name", "Lab_1"],
      [7, "sites.0.url", "ftp://example.com"],
      [8, "sites.0.kubeconfig", "lab.kubeconfig"],
      [9, "sites.1.kubeconfig", undefined],
      [11, "sites.1.token", undefined],
    ]);
    expect(problems.every((p) => p.source === source && p.severity === "error")).toBe(true);
    expect(problems.find((p) => p.path?.join(".") === "sites.1.kubeconfig")?.message).toBe("is required");
    expect(problems.find((p) => p.path?.join(".") === "colour")?.message).toBe(
      "is not a known field; the fields here are apiVersion, kind, activeSite, sites",
    );
    expect(problems.find((p) => p.path?.join(".") === "sites.1.token")?.message).toBe(
      "is not a known field; the fields here are name, url, kubeconfig",
    );
  });

  it("reports an activeSite that names no site, and duplicate names", () => {
    const text = [
      "apiVersion: nvkectl.nvke.io/v1",
      "kind: Config",
      "activeSite: prod",
      "sites:",
      "  - {name: lab, url: 'https://lab.example', kubeconfig: /k/lab}",
      "  - {name: lab, url: 'https://lab2.example', kubeconfig: /k/lab2}",
    ].join("\n");

    const { problems } = parseConfig(text, { source });

    expect(problems).toEqual([
      expect.objectContaining({
        line: 3,
        path: ["activeSite"],
        value: "prod",
        message: "is not the name of a configured site (lab)",
      }),
      expect.objectContaining({ line: 6, path: ["sites", 1, "name"], value: "lab" }),
    ]);
  });

  it("reports broken YAML with its line and column, and never throws", () => {
    const { config, problems } = parseConfig("apiVersion: nvkectl.nvke.io/v1\nsites: [\n  {name: a\n", { source });

    expect(config).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ source, severity: "error" });
    expect(problems[0]?.line).toBeGreaterThan(1);
    expect(problems[0]?.message).toMatch(/^is not valid YAML: /);
  });

  it("reports duplicate keys, several documents and a non-mapping document", () => {
    expect(parseConfig("kind: Config\nkind: Config\n", { source }).problems[0]).toMatchObject({ line: 2 });
    expect(parseConfig("kind: Config\n---\nkind: Config\n", { source }).problems[0]?.message).toMatch(
      /2 YAML documents/,
    );
    expect(parseConfig("- a\n- b\n", { source }).problems).toEqual([
      expect.objectContaining({ line: 1, message: "must be a mapping with apiVersion, kind and sites" }),
    ]);
  });

  it("reports wrong types with what was found", () => {
    const { problems } = parseConfig("apiVersion: nvkectl.nvke.io/v1\nkind: Config\nsites: lab\n", { source });

    expect(problems).toEqual([
      expect.objectContaining({ line: 3, path: ["sites"], value: "lab", message: "must be a list, not a string" }),
    ]);
  });
});

const siteName = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
const siteArb = fc.record({
  name: siteName,
  url: fc.constantFrom("http://127.0.0.1:30080", "https://nvke.example.com", "http://10.1.2.3:30080/api"),
  kubeconfig: fc.stringMatching(/^\/[A-Za-z0-9._ -]{1,30}$/),
});
const configArb = configsOf(siteArb);

describe("parseConfig properties", () => {
  it("reads back what formatConfig writes", () => {
    fc.assert(
      fc.property(configArb, (config) => {
        expect(parseConfig(formatConfig(config), { source })).toEqual({ config, problems: [] });
      }),
    );
  });

  it("never throws, and returns either a config or at least one error", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const { config, problems } = parseConfig(text, { source });
        expect(config === undefined).toBe(problems.length > 0);
      }),
    );
  });
});
