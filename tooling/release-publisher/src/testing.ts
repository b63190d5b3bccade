/**
 * What the release tests share (tooling/release-publisher's, apps/nvkectl's, the bench): the
 * policy files they write, helm with its own HOME, a small chart, attaching a bundle to
 * another artifact, and the offline keyless authorities (./keyless.ts).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { EMPTY_JSON, MediaType, type OciClient, parseReference } from "@nodekit/oci";
import {
  attachBundle,
  buildReleasePolicy,
  parseReleasePolicy,
  type ReleasePolicy,
  type ReleasePolicyDocument,
} from "@nodekit/release";
import { binaries } from "@nodekit/testenv";

export * from "./keyless.ts";

export interface PolicyOptions {
  keys?: ReadonlyArray<{ name: string; publicKeyPem: string }>;
  identities?: ReleasePolicyDocument["trustedIdentities"];
  /** The trusted root's file name, relative to the policy file. */
  trustedRoot?: string;
  transparencyLog?: "required" | "none";
  /** Default `required` with identities, `none` without. */
  timestamps?: "required" | "none";
}

const indent = (text: string, by: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => `${by}${line}`)
    .join("\n");

/** A release policy file's text. */
export function policyYaml(options: PolicyOptions): string {
  const lines = ["apiVersion: release.nvke.nodekit.dev/v1", "kind: ReleasePolicy"];
  if (options.keys !== undefined && options.keys.length > 0) {
    lines.push("trustedKeys:");
    for (const key of options.keys) {
      lines.push(`  - name: ${key.name}`, "    publicKey: |", indent(key.publicKeyPem, "      "));
    }
  }
  if (options.identities !== undefined && options.identities.length > 0) {
    lines.push("trustedIdentities:");
    for (const identity of options.identities) {
      const fields = Object.entries(identity).filter(([, value]) => value !== undefined);
      fields.forEach(([field, value], i) => {
        lines.push(`${i === 0 ? "  - " : "    "}${field}: ${JSON.stringify(value)}`);
      });
    }
  }
  if (options.trustedRoot !== undefined) lines.push(`trustedRoot: ${options.trustedRoot}`);
  const keyless = (options.identities?.length ?? 0) > 0;
  lines.push(`transparencyLog: ${options.transparencyLog ?? "none"}`);
  lines.push(`timestamps: ${options.timestamps ?? (keyless ? "required" : "none")}`);
  return `${lines.join("\n")}\n`;
}

/** Parse and load a policy in memory; `trustedRoot` is the trusted root's JSON when the policy names one. */
export function policyFrom(options: PolicyOptions & { trustedRootJson?: unknown }): ReleasePolicy {
  const text = policyYaml({
    ...options,
    ...(options.trustedRootJson !== undefined && options.trustedRoot === undefined
      ? { trustedRoot: "trusted_root.json" }
      : {}),
  });
  const parsed = parseReleasePolicy(text, { source: "policy.yaml" });
  if (parsed.value === undefined) throw new Error(`the test policy is invalid: ${JSON.stringify(parsed.problems)}`);
  return buildReleasePolicy(
    parsed.value,
    "policy.yaml",
    options.trustedRootJson === undefined ? undefined : JSON.stringify(options.trustedRootJson),
  );
}

/** The cached helm build (tooling/k8s-testbin: the test runner's) and an environment of its own under `dir`. */
export async function testHelm(dir: string): Promise<{ bin: string; env: Record<string, string> }> {
  await mkdir(dir, { recursive: true });
  return {
    bin: join(await binaries("kubernetes"), "helm"),
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, "config"),
      XDG_CACHE_HOME: join(dir, "cache"),
      XDG_DATA_HOME: join(dir, "data"),
    },
  };
}

/** A small chart (one ConfigMap) under `dir/charts/nvke-controller`; returns its directory. */
export async function writeTestChart(dir: string): Promise<string> {
  const chart = join(dir, "charts", "nvke-controller");
  await mkdir(join(chart, "templates"), { recursive: true });
  await writeFile(
    join(chart, "Chart.yaml"),
    "apiVersion: v2\nname: nvke-controller\nversion: 0.3.1\nappVersion: 1.0.0\n",
  );
  await writeFile(join(chart, "values.yaml"), "replicas: 1\n");
  await writeFile(
    join(chart, "templates", "cm.yaml"),
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n",
  );
  return chart;
}

/** Attach an existing bundle (JSON) to another artifact, as a referrer: a good signature over the wrong thing. */
export async function attachBundleElsewhere(client: OciClient, reference: string, bundle: unknown) {
  await client.pushBlob(parseReference(reference), EMPTY_JSON, MediaType.Empty);
  return attachBundle(client, reference, bundle);
}
