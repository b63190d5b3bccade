import { repoRoot } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { checkSyntax, loadCommandCatalogue } from "./syntax.ts";

// Against the built CLIs' manifests, as the docs are checked.
const catalogue = loadCommandCatalogue(repoRoot);
const check = (code: string, bash = true) =>
  checkSyntax(code, { source: "doc.md", line: 10 }, catalogue, { bash }).map((p) => `${p.line}: ${p.message}`);

describe("checkSyntax", () => {
  test("commands that exist, with their flags, aliases, values and placeholders, pass", () => {
    expect(
      check(
        [
          "nvkectl get clusters capd-demo -o json | jq -r .id",
          'export ID=$(nvkectl get cluster capd-demo -o yaml | sed -n "s/^id: //p")',
          'eval "$(./run sandbox env)"',
          "nvkectl create cluster -f examples/capd-cluster.yaml --wait --timeout=5m",
          "nvkectl scale nodepools workers --cluster=capd-demo --replicas 3 && echo ok",
          "NVKECTL_SITE=lab nvkectl config current-site",
          "nvkectl get nodepools --help",
          "nvkectl plugins install @acme/nvkectl-plugin",
          "./run sandbox kubeconfig --user alice --group g",
          "pnpm sandbox status -o json; pnpm testenv up; pnpm exec vitest run",
          "kubectl get pods --made-up-flag   # not ours: not checked",
          // bash's descriptor redirections: the 2 is no argument
          "nvkectl delete cluster capd-demo 2> err.log && nvkectl get cluster capd-demo 2>&1 | cat",
        ].join("\n"),
      ),
    ).toEqual([]);
  });

  test("an unknown command, flag or task, a missing required flag and too many arguments are problems on their line", () => {
    expect(
      check(
        [
          "nvkectl get clustres",
          "nvkectl get clusters --colour red",
          "nvkectl scale nodepool workers --cluster c1",
          "nvkectl delete cluster a b",
          "echo ok \\",
          "  && ./run sandbox upp",
          "./run deploy",
          "pnpm sandboxes",
          "nvkectl delete cluster a 2 > out.log",
        ].join("\n"),
      ),
    ).toEqual([
      "10: nvkectl get clustres: no such command (see docs/commands/nvkectl.md)",
      "11: nvkectl get clusters: unknown flag --colour",
      "12: nvkectl scale nodepool: needs --replicas",
      "13: nvkectl delete cluster: takes at most 1 argument, got 2",
      "14: ./run sandbox upp: no such command; it has up, status, env, kubeconfig, pins, flux-reconcile, down, help",
      "16: ./run deploy: no such task (./run --help lists them)",
      "17: pnpm sandboxes: the root package.json has no such script",
      "18: nvkectl delete cluster: takes at most 1 argument, got 2",
    ]);
  });

  test("bash's syntax errors, with their line", () => {
    expect(check("echo fine\nif true; then\n  echo never closed\n")).toEqual([
      "13: bash: syntax error: unexpected end of file",
    ]);
    // console blocks are lines of commands, not one script
    expect(check("if true; then", false)).toEqual([]);
  });
});
