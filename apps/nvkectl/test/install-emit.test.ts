import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type CliHome, cliHome, installArgs, writeInstallInputs } from "./helpers.ts";

// `nvkectl install --emit` usage, as the built CLI: each engine's flags are its own, and a
// missing DIR or repository is named, before anything is read from the cluster (the kubeconfig
// named does not exist; a command that got further would fail with KUBECONFIG_NOT_FOUND).

let home: CliHome;

beforeAll(async () => {
  home = await cliHome("nvkectl-install-emit-");
  await writeInstallInputs(home.path);
});
afterAll(() => home.cleanup());

const install = (...args: string[]) =>
  home.nvkectl([...installArgs(), "--deploy-path", "path", ...args], {
    env: { NVKE_NICO_API_KEY: "nico-key-never-shown" },
  });

/** `install --emit ENGINE tree --ENGINE-repository …` and `args`. */
const emit = (engine: "flux" | "argocd", ...args: string[]) =>
  install("--emit", engine, "tree", `--${engine}-repository`, "oci://127.0.0.1:5000/nvke", ...args);

describe("nvkectl install --emit: each engine's flags", () => {
  test("--emit argocd needs DIR and --argocd-repository (exit 2)", async () => {
    const noRepository = await install("--emit", "argocd", "tree");
    expect(noRepository.exitCode).toBe(2);
    expect(noRepository.stderr).toContain("--emit argocd needs --argocd-repository oci://HOST/PATH");
    const noDir = await install("--emit", "argocd", "--argocd-repository", "oci://127.0.0.1:5000/nvke");
    expect(noDir.exitCode).toBe(2);
    expect(noDir.stderr).toContain("--emit argocd needs the directory to write (DIR)");
  });

  test("--emit argocd refuses --flux-* flags, --emit flux refuses --argocd-* flags", async () => {
    const argocd = await emit("argocd", "--flux-push");
    expect(argocd.exitCode).toBe(2);
    expect(argocd.stderr).toContain("--emit argocd does not take --flux-push");
    const flux = await emit("flux", "--argocd-push");
    expect(flux.exitCode).toBe(2);
    expect(flux.stderr).toContain("--emit flux does not take --argocd-push");
  });

  test("a valid --emit argocd line gets as far as the kubeconfig (exit 4)", async () => {
    const valid = await emit("argocd", "--dry-run");
    expect(valid.exitCode).toBe(4);
    expect(valid.stderr).toContain("missing.kubeconfig does not exist");
  });
});
