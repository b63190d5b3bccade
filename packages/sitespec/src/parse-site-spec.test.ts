import { formatProblem } from "@nodekit/errors";
import { describe, expect, test } from "vitest";
import { parseSiteSpec } from "./parse-site-spec.ts";
import { SiteSpecSchema } from "./schema.ts";

const source = "sitespec.yaml";
const parse = (text: string) => parseSiteSpec(text, { source });
const formatted = (text: string) => parse(text).problems.map(formatProblem);

const T1 = "0123456789abcdef".repeat(4);
const T1_PAIRS = (T1.toUpperCase().match(/../g) ?? []).join(":");

const valid = `apiVersion: nvke.io/v1alpha1
kind: SiteSpec
metadata:
  name: lab
spec:
  agentPort: 9443
  hosts:
    - name: node-1
      ip: 10.0.0.1
      attestation:
        tpm:
          enabled: true
          ekThumbprint: ${T1}
    - name: node-2
      ip: 2001:db8::2
`;

describe("a valid site spec", () => {
  test("is returned typed, with no problems", () => {
    expect(parse(valid)).toEqual({
      problems: [],
      spec: {
        apiVersion: "nvke.io/v1alpha1",
        kind: "SiteSpec",
        metadata: { name: "lab" },
        spec: {
          agentPort: 9443,
          hosts: [
            { name: "node-1", ip: "10.0.0.1", attestation: { tpm: { enabled: true, ekThumbprint: T1 } } },
            { name: "node-2", ip: "2001:db8::2" },
          ],
        },
      },
    });
  });

  test("gets agentPort 8443 when it leaves it out, and normalizes IPs and thumbprints", () => {
    const text = `apiVersion: nvke.io/v1alpha1
kind: SiteSpec
metadata: {name: lab}
spec:
  hosts:
    - {name: node-1, ip: "2001:DB8:0:0:0:0:0:1", attestation: {tpm: {enabled: true, ekThumbprint: "${T1_PAIRS}"}}}
    - {name: node-2, ip: 10.0.0.2, attestation: {tpm: {enabled: false}}}
`;

    expect(parse(text).spec?.spec).toEqual({
      agentPort: 8443,
      hosts: [
        { name: "node-1", ip: "2001:db8::1", attestation: { tpm: { enabled: true, ekThumbprint: T1 } } },
        { name: "node-2", ip: "10.0.0.2", attestation: { tpm: { enabled: false } } },
      ],
    });
  });
});

describe("problems", () => {
  test("carry the field path, the line of the field and the value", () => {
    expect(parse(valid.replace("ip: 10.0.0.1", "ip: 10.0.0.300")).problems).toEqual([
      {
        severity: "error",
        source,
        line: 9,
        path: ["spec", "hosts", 0, "ip"],
        value: "10.0.0.300",
        message: "is not a valid IPv4 or IPv6 address",
      },
    ]);
  });

  test("are all reported at once, in line order", () => {
    const text = `apiVersion: nvke.io/v1beta1
kind: SiteSpec
metadata:
  name: Lab
spec:
  agentport: 9443
  hosts:
    - name: node-1
      ip: 10.0.0.1
      attestation:
        tpm:
          enabled: true
    - name: node-1
      ip: 0:0:0:0:0:0:0:1
      attestation: {tpm: {enabled: yes, ekThumbprint: abc}}
    - {name: node-3, ip: "::1", role: worker}
    - ip: 10.0.0.4
`;

    expect(formatted(text)).toEqual([
      'sitespec.yaml:1: field apiVersion: "nvke.io/v1beta1" is not supported; this version reads "nvke.io/v1alpha1"',
      'sitespec.yaml:4: field metadata.name: "Lab" is not a valid site name: it contains uppercase letters; a site name names the site cluster and its kubeconfig, so it must be a DNS-1123 label: lowercase letters, digits and "-", at most 63 characters, starting and ending with a letter or digit',
      "sitespec.yaml:6: field spec.agentport: is not a known field; the fields here are agentPort, hosts",
      "sitespec.yaml:11: field spec.hosts[0].attestation.tpm.ekThumbprint: is required when tpm.enabled is true",
      'sitespec.yaml:13: field spec.hosts[1].name: "node-1" is a duplicate host name: spec.hosts[0] already has it',
      'sitespec.yaml:15: field spec.hosts[1].attestation.tpm.enabled: "yes" must be true or false',
      'sitespec.yaml:15: field spec.hosts[1].attestation.tpm.ekThumbprint: "abc" is not a valid TPM EK thumbprint: expected the SHA-256 digest of the TPM endorsement key as 64 hex digits, optionally written as colon-separated pairs (found 3 hex digits)',
      "sitespec.yaml:16: field spec.hosts[2].role: is not a known field; the fields here are name, ip, attestation",
      'sitespec.yaml:16: field spec.hosts[2].ip: "::1" is a duplicate IP address: spec.hosts[1] already has it',
      "sitespec.yaml:17: field spec.hosts[3].name: is required",
    ]);
  });

  test.each(["apiVersion", "kind", "metadata", "spec"])("a document without %s says it is required", (field) => {
    const sections = valid.split(/\n(?=\S)/);
    const text = sections.filter((section) => !section.startsWith(`${field}:`)).join("\n");

    expect(parse(text).problems).toEqual([
      { severity: "error", source, line: 1, path: [field], message: "is required" },
    ]);
  });

  test.each([
    ["kind: SiteSpec", "kind: Site", "kind", 'must be "SiteSpec"'],
    ["agentPort: 9443", "agentPort: 0", "spec.agentPort", "must be a whole number from 1 to 65535"],
    ["agentPort: 9443", "agentPort: 65536", "spec.agentPort", "must be a whole number from 1 to 65535"],
    ["agentPort: 9443", "agentPort: 84.5", "spec.agentPort", "must be a whole number from 1 to 65535"],
    ["agentPort: 9443", 'agentPort: "9443"', "spec.agentPort", "must be a port number"],
    ["name: node-2", "name: 42", "spec.hosts[1].name", "must be a string"],
    ["metadata:\n  name: lab", "metadata: lab", "metadata", "must be a mapping"],
  ])("%s → %s is a problem", (from, to, field, message) => {
    const problems = parse(valid.replace(from, to)).problems.map(formatProblem);

    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(`field ${field}: `);
    expect(problems[0]?.endsWith(message)).toBe(true);
  });

  test("hosts must be a list with at least one host", () => {
    const head = valid.slice(0, valid.indexOf("  hosts:"));

    expect(formatted(`${head}  hosts: []\n`)).toEqual([
      "sitespec.yaml:7: field spec.hosts: must list at least one host",
    ]);
    expect(formatted(`${head}  hosts: node-1\n`)).toEqual([
      'sitespec.yaml:7: field spec.hosts: "node-1" must be a list of hosts',
    ]);
  });

  test("a duplicate thumbprint is found in any spelling", () => {
    const text = valid.replace(
      "      ip: 2001:db8::2\n",
      `      ip: 2001:db8::2\n      attestation: {tpm: {enabled: true, ekThumbprint: "${T1_PAIRS}"}}\n`,
    );

    expect(formatted(text)).toEqual([
      `sitespec.yaml:16: field spec.hosts[1].attestation.tpm.ekThumbprint: "${T1_PAIRS}" is a duplicate TPM EK thumbprint: spec.hosts[0] already has it`,
    ]);
  });
});

describe("files that are not one YAML mapping", () => {
  test("invalid YAML is one problem on its line", () => {
    expect(parse("apiVersion: nvke.io/v1alpha1\nkind: [SiteSpec\n").problems).toEqual([
      { severity: "error", source, line: 3, column: 1, message: expect.stringMatching(/^is not valid YAML: /) },
    ]);
  });

  test("a key given twice is invalid YAML, on the second key's line", () => {
    expect(formatted("kind: SiteSpec\nmetadata: {}\nkind: SiteSpec\n")).toEqual([
      "sitespec.yaml:3: column 1: is not valid YAML: duplicated mapping key",
    ]);
  });

  test.each(["", "# nothing\n", "---\n", "~\n"])("%j is empty", (text) => {
    expect(parse(text).problems).toEqual([
      { severity: "error", source, message: "is empty; expected a SiteSpec document" },
    ]);
  });

  test("several documents are one problem", () => {
    expect(formatted(`${valid}---\n${valid}`)).toEqual([
      "sitespec.yaml: holds 2 YAML documents; a site spec file holds exactly one",
    ]);
  });

  test.each([
    ["- a\n- b\n", "a list"],
    ["just text\n", "a single value"],
  ])("%j is not a mapping", (text, what) => {
    expect(formatted(text)).toEqual([
      `sitespec.yaml:1: holds ${what}, but a site spec is a mapping with apiVersion, kind, metadata and spec`,
    ]);
  });
});

test("SiteSpecSchema can be used directly, with the same messages", () => {
  const result = SiteSpecSchema.safeParse({
    apiVersion: "nvke.io/v1alpha1",
    kind: "SiteSpec",
    metadata: { name: "lab" },
  });

  expect(result.success).toBe(false);
  expect(result.error?.issues.map((issue) => [issue.path, issue.message])).toEqual([[["spec"], "is required"]]);
});
