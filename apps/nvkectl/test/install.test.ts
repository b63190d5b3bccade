import { chmod, chown, cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { otherUser, repoRoot } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type CliHome, cliHome, installArgs, writeInstallInputs } from "./helpers.ts";

// `nvkectl install` on bad input, as the built CLI: every document is checked before the
// cluster is asked anything. The kubeconfig named does not exist, so a command that got as
// far as the cluster would fail with KUBECONFIG_NOT_FOUND instead: these failures prove that
// nothing was applied (nothing could have been).

let home: CliHome;
const KEY = "nico-key-never-shown";

beforeAll(async () => {
  home = await cliHome("nvkectl-install-");
  await writeInstallInputs(home.path);
});
afterAll(() => home.cleanup());

/** `nvkectl install` of these input files (installArgs'), with the API key KEY. */
const installWith = (files: Parameters<typeof installArgs>[0], ...args: string[]) =>
  home.nvkectl([...installArgs(files), ...args], { env: { NVKE_NICO_API_KEY: KEY } });
const install = (...args: string[]) => installWith({}, ...args);

describe("nvkectl install refuses bad input before touching the cluster", () => {
  test("the stack config as shipped: every REPLACE_* listed with its key path (exit 3)", async () => {
    const result = await installWith({ stackConfig: join(repoRoot, "examples/stack.yaml") }, "--dry-run");
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("has 5 REPLACE_* values left unfilled; nothing was changed");
    for (const key of [
      "nico.endpoint",
      "nico.organizationId",
      "nico.apiName",
      "images.profiles",
      "clusterAPI.providerRepository",
    ]) {
      expect(result.stderr).toContain(`field ${key}: `);
    }
  });

  test("a malformed deploy path: every problem with its file, line and field (exit 3)", async () => {
    const index = join(home.path, "path", "nvke-deploy.yaml");
    const original = await readFile(index, "utf8");
    await writeFile(
      index,
      original
        .replace("version: v1.11.7", "version: latest")
        .replace("dependsOn: [spire-crds]", "dependsOn: [nvke-config]"),
    );
    await writeFile(join(home.path, "path", "spire", "values.yaml"), "- not\n- a mapping\n");
    try {
      const result = await install("--deploy-path", "path", "--dry-run");
      expect(result.exitCode).toBe(3);
      expect(result.stderr).toContain("deploy path path has 3 problems; nothing was applied");
      expect(result.stderr).toContain(
        'path/nvke-deploy.yaml:10: field spec.clusterAPI.version: "latest" is not a semantic version',
      );
      expect(result.stderr).toContain('field spec.items[1].dependsOn[0]: "nvke-config" comes later (spec.items[3])');
      expect(result.stderr).toContain("path/spire/values.yaml:1: must be a mapping of Helm values");
    } finally {
      await writeFile(index, original);
      await cp(join(repoRoot, "deploy/nico/spire/values.yaml"), join(home.path, "path", "spire", "values.yaml"));
    }
  });

  test("a site spec or stack config that is not UTF-8 is named as such, with its line (exit 3)", async () => {
    const spec = await readFile(join(home.path, "sitespec.yaml"));
    await writeFile(join(home.path, "latin1-site.yaml"), Buffer.concat([spec, Buffer.from([0x23, 0x20, 0xe9, 0x0a])]));
    const site = await installWith({ siteSpec: "latin1-site.yaml" });
    expect(site.exitCode).toBe(3);
    expect(site.stderr).toContain(
      `latin1-site.yaml:${spec.toString().split("\n").length}: column 3: is not UTF-8 text (byte 0xe9 is not part of a UTF-8 character)`,
    );
    const stack = await readFile(join(home.path, "stack.yaml"));
    await writeFile(
      join(home.path, "utf16-stack.yaml"),
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(stack.toString(), "utf16le")]),
    );
    const wide = await installWith({ stackConfig: "utf16-stack.yaml" });
    expect(wide.exitCode).toBe(3);
    expect(wide.stderr).toContain("utf16-stack.yaml: is UTF-16");
  });

  test("a --request-timeout kubectl could not honour is a usage error before anything is read (exit 2)", async () => {
    for (const [value, message] of [
      ["soon", '--request-timeout "soon" is not a duration'],
      ["0", "--request-timeout must be longer than 0"],
    ] as const) {
      const result = await install("--deploy-path", "path", "--dry-run", "--request-timeout", value);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });

  test("no API key in the environment: the variable is named (exit 9); a valid input reaches the kubeconfig check", async () => {
    const noKey = await home.nvkectl(installArgs(), { env: { NVKE_NICO_API_KEY: "" } });
    expect(noKey.exitCode).toBe(9);
    expect(noKey.stderr).toContain("the environment variable NVKE_NICO_API_KEY is not set");
    const valid = await install("--deploy-path", "path", "--dry-run");
    expect(valid.exitCode).toBe(4);
    expect(valid.stderr).toContain("missing.kubeconfig does not exist");
    expect(valid.stderr).not.toContain(KEY);
  });
});

// Issue 26 §1 item 7: the stack config's controllerApi cannot point the NetworkPolicy
// elsewhere than the deploy path puts the controller.
describe("nvkectl install refuses a controllerApi the deploy path contradicts", () => {
  test("another namespace, or a pod name label the chart does not set: INSTALL_CONTROLLER_API_MISMATCH (exit 3), before the kubeconfig", async () => {
    const stack = await readFile(join(home.path, "stack.yaml"), "utf8");
    await writeFile(
      join(home.path, "stack-elsewhere.yaml"),
      stack
        .replace("  namespace: nke-controller\n", "  namespace: elsewhere\n")
        .replace("    app.kubernetes.io/name: nvke-controller\n", "    app.kubernetes.io/name: my-controller\n"),
    );
    const result = await installWith({ stackConfig: "stack-elsewhere.yaml" }, "--dry-run");
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain("disagree about the controller API; nothing was changed");
    expect(result.stderr).toContain(
      "controllerApi.namespace is elsewhere, but the deploy path installs the controller (item nvke-controller) in nke-controller",
    );
    expect(result.stderr).toContain(
      "controllerApi.podSelector sets app.kubernetes.io/name=my-controller, but the controller chart labels its pods app.kubernetes.io/name=nvke-controller",
    );
    expect(result.stderr).not.toContain("missing.kubeconfig");
  });
});

const other = otherUser();

// Issue 22, item 12: the work directory is checked with the other inputs, before the
// kubeconfig (and so before any call to the cluster, clusterctl init included), in the dry
// run too; before, it was checked only when the first step wrote there.
describe("nvkectl install checks --work-dir with the other inputs", () => {
  test("a work dir that is a file: INSTALL_WORK_DIR_UNUSABLE (exit 3), before the kubeconfig is looked at", async () => {
    await writeFile(join(home.path, "a-file"), "");
    for (const mode of [["--dry-run"], []]) {
      const result = await install("--deploy-path", "path", "--work-dir", "a-file", ...mode);
      expect(result.exitCode, result.stderr).toBe(3);
      expect(result.stderr).toContain(`the install's work directory ${join(home.path, "a-file")} cannot be used`);
      expect(result.stderr).toContain("it is not a directory");
      expect(result.stderr).not.toContain("missing.kubeconfig");
    }
  });

  test("a work dir inside a directory every user may write to: DIR_UNSAFE (exit 9), nothing created", async () => {
    const shared = join(home.path, "shared");
    await mkdir(shared, { recursive: true });
    await chmod(shared, 0o777);
    const result = await install("--deploy-path", "path", "--work-dir", "shared/work");
    expect(result.exitCode, result.stderr).toBe(9);
    expect(result.stderr).toContain(
      `the install's work directory ${join(shared, "work")} is inside ${shared}, which is not safe`,
    );
    expect(result.stderr).not.toContain("missing.kubeconfig");
    await expect(readFile(join(shared, "work", "clusterctl.yaml"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  test.skipIf(other.skip !== undefined)(
    `a work dir another user owns: DIR_UNSAFE (exit 9) (${other.skip ?? "as root, against nodekit-other"})`,
    async () => {
      const user = other.user ?? { uid: -1, gid: -1 };
      const planted = join(home.path, "planted-work");
      await mkdir(join(planted, "home", ".local", "share", "helm", "plugins"), { recursive: true, mode: 0o755 });
      await chown(planted, user.uid, user.gid);
      const result = await install("--deploy-path", "path", "--work-dir", planted, "--dry-run");
      expect(result.exitCode, result.stderr).toBe(9);
      expect(result.stderr).toContain(`the install's work directory ${planted} is not safe`);
      expect(result.stderr).toContain("nodekit-other");
    },
  );
});
