import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { normalizeIp } from "./fields.ts";
import type { Host } from "./hosts-csv.ts";
import { parseSiteSpec } from "./parse-site-spec.ts";
import type { SiteSpec } from "./schema.ts";
import { buildSiteSpec, generateSiteSpec, renderSiteSpec } from "./site-spec.ts";

const T1 = "0123456789abcdef".repeat(4);
const hosts: Host[] = [
  { name: "node-1", ip: "10.0.0.11", tpmEkThumbprint: T1 },
  { name: "node-2", ip: "2001:db8::12" },
];

describe("buildSiteSpec", () => {
  test("makes a SiteSpec with one entry per host, attested where the host has a thumbprint", () => {
    expect(buildSiteSpec(hosts, { siteName: "lab" })).toEqual({
      apiVersion: "nvke.io/v1alpha1",
      kind: "SiteSpec",
      metadata: { name: "lab" },
      spec: {
        agentPort: 8443,
        hosts: [
          { name: "node-1", ip: "10.0.0.11", attestation: { tpm: { enabled: true, ekThumbprint: T1 } } },
          { name: "node-2", ip: "2001:db8::12" },
        ],
      },
    });
  });

  test("takes another agent port", () => {
    expect(buildSiteSpec(hosts, { siteName: "lab", agentPort: 9443 }).spec.agentPort).toBe(9443);
  });
});

describe("renderSiteSpec", () => {
  test("writes the documented key order, with a comment naming the source when given", () => {
    const yaml = renderSiteSpec(buildSiteSpec(hosts, { siteName: "lab" }), { generatedFrom: "site/hosts.csv" });

    expect(yaml).toBe(
      [
        "# NVKE site spec, generated from site/hosts.csv.",
        "# Change the hosts file and generate it again rather than editing it here.",
        "apiVersion: nvke.io/v1alpha1",
        "kind: SiteSpec",
        "metadata:",
        "  name: lab",
        "spec:",
        "  agentPort: 8443",
        "  hosts:",
        "    - name: node-1",
        "      ip: 10.0.0.11",
        "      attestation:",
        "        tpm:",
        "          enabled: true",
        `          ekThumbprint: ${T1}`,
        "    - name: node-2",
        "      ip: 2001:db8::12",
        "",
      ].join("\n"),
    );
  });

  test("renders the same bytes whatever order the object's keys are in", () => {
    const spec = buildSiteSpec(hosts, { siteName: "lab" });
    const [first, second] = spec.spec.hosts;
    if (first?.attestation === undefined || second === undefined) throw new Error("fixture changed");
    const scrambled: SiteSpec = {
      spec: {
        hosts: [
          { attestation: { tpm: { ekThumbprint: T1, enabled: true } }, ip: first.ip, name: first.name },
          { ip: second.ip, name: second.name },
        ],
        agentPort: 8443,
      },
      metadata: { name: "lab" },
      kind: "SiteSpec",
      apiVersion: "nvke.io/v1alpha1",
    };

    expect(renderSiteSpec(scrambled)).toBe(renderSiteSpec(spec));
  });

  test("without a source it writes no comment, and a source cannot break out of its comment", () => {
    const spec = buildSiteSpec(hosts, { siteName: "lab" });

    expect(renderSiteSpec(spec).startsWith("apiVersion: ")).toBe(true);
    expect(renderSiteSpec(spec, { generatedFrom: "a\nkind: Evil\r\n.csv" }).split("\n")[0]).toBe(
      "# NVKE site spec, generated from a kind: Evil .csv.",
    );
  });

  test("quotes values YAML would otherwise read as something else", () => {
    const yaml = renderSiteSpec(buildSiteSpec([{ name: "1e3", ip: "10.0.0.1" }], { siteName: "123" }));

    expect(yaml).toContain("name: '123'");
    expect(yaml).toContain("- name: '1e3'");
    expect(parseSiteSpec(yaml, { source: "s.yaml" }).spec?.metadata.name).toBe("123");
  });

  test("what it writes, parseSiteSpec reads back as the same spec", () => {
    const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/);
    const host = fc.record({
      name: label,
      ip: fc.oneof(fc.ipV4(), fc.ipV6()).map(normalizeIp),
      tpmEkThumbprint: fc.option(fc.stringMatching(/^[0-9a-f]{64}$/), { nil: undefined }),
    });
    const uniqueHosts = fc.uniqueArray(host, {
      minLength: 1,
      maxLength: 20,
      comparator: (a, b) =>
        a.name === b.name ||
        a.ip === b.ip ||
        (a.tpmEkThumbprint !== undefined && a.tpmEkThumbprint === b.tpmEkThumbprint),
    });
    fc.assert(
      fc.property(uniqueHosts, label, fc.integer({ min: 1, max: 65535 }), (someHosts, siteName, agentPort) => {
        const spec = buildSiteSpec(
          someHosts.map((entry) => (entry.tpmEkThumbprint === undefined ? { name: entry.name, ip: entry.ip } : entry)),
          { siteName, agentPort },
        );

        expect(parseSiteSpec(renderSiteSpec(spec, { generatedFrom: "hosts.csv" }), { source: "s.yaml" })).toEqual({
          spec,
          problems: [],
        });
      }),
    );
  });
});

describe("generateSiteSpec", () => {
  test("turns a hosts CSV into site spec YAML", () => {
    const result = generateSiteSpec({
      csvText: `name,ip,tpm_ek_thumbprint\nnode-1,10.0.0.11,${T1}\nnode-2,2001:db8::12,\n`,
      source: "site/hosts.csv",
      siteName: "lab",
    });

    expect(result.problems).toEqual([]);
    expect(result.spec).toEqual(buildSiteSpec(hosts, { siteName: "lab" }));
    expect(result.yaml).toBe(
      renderSiteSpec(buildSiteSpec(hosts, { siteName: "lab" }), { generatedFrom: "site/hosts.csv" }),
    );
  });

  test("produces nothing when there is any error, and reports the site name's problem with the CSV's", () => {
    const result = generateSiteSpec({
      csvText: "name,ip\nnode-1,10.0.0.300\n",
      source: "hosts.csv",
      siteName: "My_Site",
    });

    expect(result).toEqual({
      problems: [
        {
          severity: "error",
          source: "site name",
          value: "My_Site",
          message:
            'is not a valid site name: it contains uppercase letters; a site name names the site cluster and its kubeconfig, so it must be a DNS-1123 label: lowercase letters, digits and "-", at most 63 characters, starting and ending with a letter or digit',
        },
        {
          severity: "error",
          source: "hosts.csv",
          line: 2,
          row: 1,
          rowName: "node-1",
          column: "ip",
          value: "10.0.0.300",
          message: "is not a valid IPv4 or IPv6 address",
        },
      ],
    });
  });

  test("an empty site name is an error", () => {
    const result = generateSiteSpec({ csvText: "name,ip\nnode-1,10.0.0.1\n", source: "hosts.csv", siteName: "" });

    expect(result.yaml).toBeUndefined();
    expect(result.problems).toEqual([
      { severity: "error", source: "site name", value: "", message: "is empty; the site needs a name" },
    ]);
  });

  test("warnings alone do not stop it, and are returned", () => {
    const result = generateSiteSpec({
      csvText: "name,ip,rack\nnode-1,10.0.0.1,r1\n",
      source: "hosts.csv",
      siteName: "lab",
    });

    expect(result.yaml).toContain("- name: node-1");
    expect(result.problems.map((problem) => problem.severity)).toEqual(["warning"]);
  });

  test("examples/sitespec.yaml is exactly what examples/hosts.csv generates for site my-tier0-site", () => {
    const examples = new URL("../../../examples/", import.meta.url);
    const csvText = readFileSync(new URL("hosts.csv", examples), "utf8");

    const result = generateSiteSpec({ csvText, source: "hosts.csv", siteName: "my-tier0-site" });

    expect(result.problems).toEqual([]);
    expect(result.spec?.spec.hosts.some((host) => host.attestation?.tpm.enabled)).toBe(true);
    expect(readFileSync(new URL("sitespec.yaml", examples), "utf8")).toBe(result.yaml);
  });
});
