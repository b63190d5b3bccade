import { mkdir, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { envCredentials, OciClient } from "@nodekit/oci";
import { formatPlan } from "@nodekit/plan";
import { createExecaRunner, createRecordingRunner, type ProcessRunner } from "@nodekit/process";
import { type RunningRegistry, startRegistry } from "@nodekit/registry-harness";
import { generateSigningKeyPair, localKeySigner } from "@nodekit/release";
import { type PublishedTestRelease, publishTestRelease } from "@nodekit/release-publisher";
import { runCli, userErrorOf } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type InstallInputs, planInstall, prepareInstall, runInstall } from "../src/services/install.ts";
import { type InstallFixture, inputArgs, installFixture, siteFiles } from "./install-fixture.ts";

// nvkectl install --release against the test tier: a release published and signed into a
// real registry on loopback (ggcr, Basic auth), verified and exported with the built CLI,
// then installed from that file: real helm pulls the chart by digest (with the credentials
// from docker's config) into the real kube-apiserver, with the images in its values pinned,
// and the providers' components are pulled from the release. clusterctl itself is not run
// here (install.int.test.ts runs it). The control plane is this file's own: no Cluster API,
// Node or namespace of another file is on it.

const PASSWORD = "reg-Pw-4471z";
const API_KEY = "nico-key-rel-8812";
const NODE = "release-node-1";
const key = generateSigningKeyPair();

let fixture: InstallFixture;
let work: string;
let admin: string;
let registry: RunningRegistry;
let published: PublishedTestRelease;
let inputs: InstallInputs;
let env: Record<string, string>;

const write = (files: Record<string, string>) => fixture.write(files);
const kubectl = (...args: string[]) => fixture.kubectl(...args);

const CHART = {
  "chart/Chart.yaml": "apiVersion: v2\nname: nvke-controller\nversion: 0.4.2\n",
  "chart/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: release-pinned
data:
  image: {{ .Values.image | quote }}
  profiles: {{ .Values.images.profiles | quote }}
  sidecar: {{ .Values.sidecar.image | quote }}
`,
};

beforeAll(async () => {
  fixture = await installFixture("nvkectl-install-release-");
  ({ work, admin } = fixture);
  await write(CHART);
  registry = await startRegistry({ kind: "ggcr", auth: { type: "basic", users: { ops: PASSWORD } } });
  const client = new OciClient({
    plainHttp: true,
    credentials: envCredentials({ NODEKIT_REGISTRY_USERNAME: "ops", NODEKIT_REGISTRY_PASSWORD: PASSWORD }),
  });
  const metadata = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries: []\n";
  published = await publishTestRelease({
    client,
    registry: registry.host,
    charts: [join(work, "chart")],
    helm: { bin: join(fixture.binDir, "helm"), env: { PATH: process.env.PATH ?? "", HOME: join(work, "helm-home") } },
    images: ["controller", "sidecar"],
    providers: [
      { name: "cluster-api", type: "CoreProvider", version: "v1.11.7", components: "# core\n", metadata },
      { name: "kubeadm", type: "BootstrapProvider", version: "v1.11.7", components: "# bootstrap\n", metadata },
      { name: "kubeadm", type: "ControlPlaneProvider", version: "v1.11.7", components: "# control plane\n", metadata },
      { name: "nico", type: "InfrastructureProvider", version: "v0.3.0", components: "# nico\n", metadata },
    ],
    signer: localKeySigner(key.privateKeyPem),
  });
  await fixture.addNodes("arm64", NODE);
  await write({
    ".docker/config.json": JSON.stringify({
      auths: { [registry.host]: { auth: Buffer.from(`ops:${PASSWORD}`).toString("base64") } },
    }),
    "policy.yaml": [
      "apiVersion: release.nvke.nodekit.dev/v1",
      "kind: ReleasePolicy",
      "trustedKeys:",
      "  - name: nvkr",
      "    publicKey: |",
      ...key.publicKeyPem
        .trim()
        .split("\n")
        .map((l) => `      ${l}`),
      "transparencyLog: none",
      "timestamps: none",
      "",
    ].join("\n"),
    ...siteFiles({
      site: ["rel", "h1"],
      organizationId: "org-7",
      path: ["rel", "    - name: pinned\n      namespace: release-pinned\n      stackValues: true\n"],
    }),
    "providers/cert-manager/v1.19.1/cert-manager.yaml": "# cert-manager\n",
    "path/pinned/chart-pin.yaml": "chart: ./chart\nversion: 0.4.2\n",
    "path/pinned/values.yaml":
      "image: nvcr.io/nvidia/nvke/controller:0.9.0\nsidecar:\n  image: nvcr.io/nvidia/nvke/sidecar:0.9.0\n",
  });
  for (const [name, text] of Object.entries(CHART)) await write({ [`path/pinned/${name}`]: text });
  env = { HOME: work, PATH: process.env.PATH ?? "", NVKE_NICO_API_KEY: API_KEY };
  inputs = fixture.inputs(env, { release: join(work, "release.json"), registry: { plainHttp: true } });
}, 180_000);

afterAll(async () => {
  await registry?.stop();
  await fixture?.cleanup();
});

describe("nvkectl install --release", () => {
  test("verify, export, then the dry run shows every digest; the real run pulls the chart by digest and pins the images", async () => {
    // Given a release verified and exported with the built CLI
    const verified = await runCli(
      "nvkectl",
      ["release", "verify", published.tagReference, "--policy", "policy.yaml", "--plain-http"],
      { env, cwd: work },
    );
    expect(verified.exitCode).toBe(0);
    const pinnedRef = verified.stdout.trim();
    const exported = await runCli(
      "nvkectl",
      ["release", "export", pinnedRef, "--plain-http", "--output-file", "release.json"],
      { env, cwd: work },
    );
    expect(exported.exitCode).toBe(0);

    // When the install is planned from it (the built CLI's dry run)
    const chart = published.description.charts[0];
    const [controller, sidecar] = published.description.images;
    const dry = await runCli(
      "nvkectl",
      [
        "install",
        ...inputArgs(inputs),
        ...["--kubeconfig", admin, "--release", "release.json", "--plain-http", "--dry-run", "--work-dir", "state"],
      ],
      { env, cwd: work },
    );
    expect(dry.stderr).toBe("");
    expect(dry.exitCode).toBe(0);
    // Then it shows the chart by digest, every pinned image and each provider's components by digest
    expect(dry.stdout).toContain(`${chart?.reference}@${chart?.digest} --version 0.4.2`);
    expect(dry.stdout).toContain(`${registry.host}/nvke/images/controller@${controller?.digest}`);
    expect(dry.stdout).toContain(`${registry.host}/nvke/images/sidecar@${sidecar?.digest}`);
    expect(dry.stdout).toContain(`${registry.host}/nvke/profiles@${published.description.profiles.digest}`);
    for (const provider of published.description.providers) {
      expect(dry.stdout).toContain(`${provider.components.reference}@${provider.components.digest}`);
    }
    expect(dry.stdout).not.toContain("every provider is installed");
    expect(dry.stdout).not.toContain(PASSWORD);
    expect(dry.stdout).not.toContain(API_KEY);

    // When the chart item and the providers' pulls run for real (clusterctl is install.int.test.ts's)
    const context = await prepareInstall(inputs, createExecaRunner());
    const plan = planInstall(context);
    const clusterApi = plan.items.find((item) => item.id === "cluster-api");
    const pinned = plan.items.find((item) => item.id === "pinned");
    if (clusterApi === undefined || pinned === undefined) throw new Error("plan items missing");
    const pulls = clusterApi.steps.filter((step) => step.kind === "action" && step.action === "pull-provider");
    // Cluster API is not installed on this file's plane: all four providers are pulled
    expect(pulls).toHaveLength(4);
    const witness = createRecordingRunner({ inner: createExecaRunner() });
    await runInstall(
      context,
      { ...plan, items: [{ ...clusterApi, steps: pulls }, pinned] },
      { runner: witness, redactor: inputs.redactor },
    );

    // Then helm pulled the chart by digest, with the credentials from docker's config, and rendered the pinned images
    const helmLine = witness.calls.find((call) => call.call.command === "helm")?.line ?? "";
    expect(helmLine).toContain(`upgrade --install pinned ${chart?.reference}@${chart?.digest}`);
    expect(helmLine).toContain(`HELM_REGISTRY_CONFIG=${join(work, ".docker", "config.json")}`);
    expect(formatPlan(plan)).toContain(helmLine);
    const data = JSON.parse(
      await kubectl("get", "configmap", "release-pinned", "--namespace", "release-pinned", "--output=json"),
    ).data;
    expect(data).toEqual({
      image: `${registry.host}/nvke/images/controller@${controller?.digest}`,
      sidecar: `${registry.host}/nvke/images/sidecar@${sidecar?.digest}`,
      profiles: `${registry.host}/nvke/profiles@${published.description.profiles.digest}`,
    });
    expect(
      await readFile(
        join(work, "state", "release-providers", "cluster-api", "v1.11.7", "core-components.yaml"),
        "utf8",
      ),
    ).toBe("# core\n");
  });

  // One way to give the credential for the whole flow: with NODEKIT_REGISTRY_USERNAME/_PASSWORD
  // alone (no docker or helm config file anywhere), release verify and export read the release,
  // and the install's helm pulls its chart through a config written for the run and removed after it.
  test("with only the environment's registry credential, helm pulls every chart by digest; the generated config is gone and the password is nowhere", async () => {
    const home = join(work, "env-only-home");
    await mkdir(home, { recursive: true });
    const envOnly = {
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      PATH: process.env.PATH ?? "",
      NVKE_NICO_API_KEY: API_KEY,
      NODEKIT_REGISTRY_USERNAME: "ops",
      NODEKIT_REGISTRY_PASSWORD: PASSWORD,
    };
    const auth = Buffer.from(`ops:${PASSWORD}`).toString("base64");
    const leaks = (text: string) => text.includes(PASSWORD) || text.includes(auth);
    const verified = await runCli(
      "nvkectl",
      ["release", "verify", published.tagReference, "--policy", "policy.yaml", "--plain-http"],
      { env: envOnly, cwd: work },
    );
    expect(verified.exitCode).toBe(0);
    expect(leaks(verified.stderr)).toBe(false);
    const exported = await runCli(
      "nvkectl",
      ["release", "export", verified.stdout.trim(), "--plain-http", "--output-file", "release-env.json"],
      { env: envOnly, cwd: work },
    );
    expect(exported.exitCode).toBe(0);

    // The dry run names the config helm will read, and where its credential comes from, never its content
    const generated = join(work, "state-env", "helm-registry", "config.json");
    const dry = await runCli(
      "nvkectl",
      [
        "install",
        ...inputArgs(inputs),
        ...["--kubeconfig", admin, "--release", "release-env.json", "--plain-http", "--dry-run"],
        ...["--work-dir", "state-env", "--request-timeout", "45s"],
      ],
      { env: envOnly, cwd: work },
    );
    expect(dry.stderr).toBe("");
    expect(dry.exitCode).toBe(0);
    expect(dry.stdout).toContain(
      `# helm reads the registry credentials for ${registry.host} from ${generated}, generated from NODEKIT_REGISTRY_USERNAME/_PASSWORD`,
    );
    expect(dry.stdout).toContain(`HELM_REGISTRY_CONFIG=${generated} helm upgrade --install pinned`);
    expect(leaks(dry.stdout)).toBe(false);
    // --request-timeout reaches every kubectl call (the one that read the nodes too)
    const kubectlLines = dry.stdout.split("\n").filter((line) => /(^|\s)kubectl /.test(line));
    expect(kubectlLines.length).toBeGreaterThan(3);
    for (const line of kubectlLines) expect(line).toContain("--request-timeout=45s");
    expect(await stat(join(work, "state-env", "helm-registry")).catch(() => undefined)).toBeUndefined();

    // When the chart item and the providers' pulls run for real, with that same environment
    const envInputs = fixture.inputs(envOnly, {
      release: join(work, "release-env.json"),
      registry: { plainHttp: true },
      workDir: join(work, "state-env"),
      requestTimeoutMs: 45_000,
    });
    const runEnv = { ...envInputs.env };
    for (const name of ["DOCKER_CONFIG", "HELM_REGISTRY_CONFIG", "NODEKIT_REGISTRY_HOST"]) delete runEnv[name];
    const context = await prepareInstall({ ...envInputs, env: runEnv }, createExecaRunner());
    const plan = planInstall(context);
    const clusterApi = plan.items.find((item) => item.id === "cluster-api");
    const pinned = plan.items.find((item) => item.id === "pinned");
    if (clusterApi === undefined || pinned === undefined) throw new Error("plan items missing");
    const pulls = clusterApi.steps.filter((step) => step.kind === "action" && step.action === "pull-provider");
    const seenByHelm: Array<{ path: string | undefined; mode: number }> = [];
    const execa = createExecaRunner();
    const checking: ProcessRunner = {
      async run(call, options) {
        if (call.command === "helm") {
          const path = call.env?.HELM_REGISTRY_CONFIG;
          seenByHelm.push({ path, mode: path === undefined ? 0 : (await stat(path)).mode & 0o777 });
        }
        return execa.run(call, options);
      },
    };
    const witness = createRecordingRunner({ inner: checking });
    const events: unknown[] = [];
    await runInstall(
      context,
      { ...plan, items: [{ ...clusterApi, steps: pulls }, pinned] },
      { runner: witness, redactor: envInputs.redactor, onEvent: (event) => events.push(event) },
    );

    // Then every helm call read the generated 0600 config and succeeded: the chart was pulled and installed
    const helmCalls = witness.calls.filter((call) => call.call.command === "helm");
    expect(helmCalls.length).toBeGreaterThan(0);
    expect(seenByHelm).toEqual(helmCalls.map(() => ({ path: generated, mode: 0o600 })));
    for (const call of helmCalls) expect(formatPlan(plan)).toContain(call.line);
    const data = JSON.parse(
      await kubectl("get", "configmap", "release-pinned", "--namespace", "release-pinned", "--output=json"),
    ).data;
    expect(data.image).toBe(`${registry.host}/nvke/images/controller@${published.description.images[0]?.digest}`);
    // and the config is gone; the password is in no call line, event or file the install keeps
    expect(await stat(join(work, "state-env", "helm-registry")).catch(() => undefined)).toBeUndefined();
    expect(leaks(witness.calls.map((call) => call.line).join("\n"))).toBe(false);
    expect(leaks(JSON.stringify(events))).toBe(false);
    const kept = await readdir(join(work, "state-env"), { recursive: true, withFileTypes: true });
    const files = kept.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(leaks(await readFile(file, "utf8")), file).toBe(false);
  });

  test("an image in the values that the release lacks: RELEASE_IMAGE_NOT_PINNED with its file and field, nothing run", async () => {
    await write({ "path/pinned/overlay.yaml": "extra:\n  initImage: docker.example.test/busybox:1\n" });
    try {
      const error = await userErrorOf(prepareInstall(inputs, createExecaRunner()));
      expect(error.code).toBe("RELEASE_IMAGE_NOT_PINNED");
      expect(error.exitCode).toBe(3);
      expect(error.problems).toEqual([
        expect.objectContaining({ source: "path/pinned/overlay.yaml", path: ["extra", "initImage"] }),
      ]);
    } finally {
      await write({ "path/pinned/overlay.yaml": "{}\n" });
    }
  });

  // Issue 26 §1 item 4: the content, not the presence. A chart whose stored bytes were changed
  // (same digest, same size, other bytes) used to pass and fail in helm midway ("mismatched digest").
  test("a chart blob changed in the registry's storage: install --release fails before its first change, naming the artifact", async () => {
    const chart = published.description.charts[0];
    if (chart === undefined) throw new Error("no chart");
    const client = new OciClient({
      plainHttp: true,
      credentials: envCredentials({ NODEKIT_REGISTRY_USERNAME: "ops", NODEKIT_REGISTRY_PASSWORD: PASSWORD }),
    });
    const chartRepository = chart.reference.replace(/^oci:\/\//, "").replace(/:[^/:]+$/, "");
    const manifest = await client.getManifest(`${chartRepository}@${chart.digest}`);
    const layer = (manifest.manifest.layers as Array<{ digest: string; size: number }>)[0];
    if (layer === undefined) throw new Error("no layer");
    const original = await client.getBlob(chartRepository, layer.digest);
    const changed = Uint8Array.from(original);
    changed[changed.length - 1] = (changed[changed.length - 1] ?? 0) ^ 0xff;
    await write({ "release-content.json": `${JSON.stringify(published.description, null, 2)}\n` });
    await registry.tamperBlob(layer.digest, changed);
    try {
      // Presence alone still passes: the registry has the blob, at its size.
      expect(await client.headBlob(chartRepository, layer.digest)).toMatchObject({ size: layer.size });
      const contentInputs = {
        ...inputs,
        release: join(work, "release-content.json"),
        workDir: join(work, "state-content"),
      };
      const witness = createRecordingRunner({ inner: createExecaRunner() });
      const error = await userErrorOf(prepareInstall(contentInputs, witness));
      expect(error.code).toBe("RELEASE_ARTIFACT_CORRUPT");
      expect(error.exitCode).toBe(1);
      expect(error.message).toBe(
        `the content of charts[0] ${chartRepository}@${chart.digest} does not match its digest; nothing was changed`,
      );
      expect(error.problems).toEqual([
        expect.objectContaining({
          path: ["charts", 0],
          message: expect.stringContaining(`layer 0 (${layer.digest}) of its manifest does not match its digest`),
        }),
      ]);
      // Only reads ran: the tools' versions and the cluster's state, no helm install, no apply
      const verbs = ["apply", "create", "delete", "patch", "replace", "label", "annotate", "upgrade", "init", "pull"];
      const mutating = witness.calls.filter((call) => call.call.args.some((arg) => verbs.includes(arg)));
      expect(mutating.map((call) => call.line)).toEqual([]);
      expect(witness.calls.some((call) => call.call.args.includes("get"))).toBe(true);
      // The built CLI says the same, and its dry run too (the dry run makes the run's checks)
      for (const extra of [[], ["--dry-run"]]) {
        const cli = await runCli(
          "nvkectl",
          [
            "install",
            ...inputArgs(inputs),
            ...[
              "--kubeconfig",
              admin,
              "--release",
              "release-content.json",
              "--plain-http",
              "--work-dir",
              "state-content",
            ],
            ...extra,
          ],
          { env, cwd: work },
        );
        expect(cli.exitCode).toBe(1);
        expect(cli.stdout).toBe("");
        expect(cli.stderr).toContain(
          `error: the content of charts[0] ${chartRepository}@${chart.digest} does not match its digest; nothing was changed`,
        );
      }
      // release verify finds it too, naming the same artifact
      const verify = await runCli(
        "nvkectl",
        ["release", "verify", published.tagReference, "--policy", "policy.yaml", "--plain-http"],
        { env, cwd: work },
      );
      expect(verify.exitCode).toBe(1);
      expect(verify.stderr).toContain(
        `error: the content of charts[0] ${chartRepository}@${chart.digest} does not match its digest`,
      );
    } finally {
      await registry.tamperBlob(layer.digest, original);
    }
  });
});
