import { readFileSync } from "node:fs";
import { join } from "node:path";
import { formatProblem, type Problem } from "@nodekit/errors";
import { repoRoot } from "@nodekit/test-utils";
import { parse } from "shell-quote";
import { describe, expect, test } from "vitest";
import {
  fleetFlow,
  installFlow,
  operatorFlow,
  registrationFlow,
  releaseExecutableFlow,
  uninstallFlow,
  upgradeFlow,
} from "../demo-steps.ts";
import { grantCommands, INSTALLED_PROVIDER_GRANTS, OPERATOR_GRANTS } from "../site-objects.ts";
import { extractBlocks, type RunBlock } from "./blocks.ts";
import { GUIDES } from "./guides.ts";
import { checkSyntax, loadCommandCatalogue } from "./syntax.ts";

// The guides as the CLIs are today: every shell block is marked, every command and flag in
// them exists, the RBAC docs/auth.md grants is the sandbox's, and ./run demo walks the
// commands of "Your first cluster". (docs.int.test.ts runs the runnable blocks.)

const read = (path: string) => readFileSync(join(repoRoot, path), "utf8");
const catalogue = loadCommandCatalogue(repoRoot);
const runBlocks = (path: string) =>
  extractBlocks(read(path), { source: path }).blocks.filter((b): b is RunBlock => b.kind === "run");

describe.each(GUIDES)("%s", (path) => {
  test("every shell block is marked, and every command in it exists with its flags", () => {
    const { blocks, problems } = extractBlocks(read(path), { source: path });
    const all: Problem[] = [...problems];
    for (const block of blocks) {
      all.push(
        ...checkSyntax(block.code, { source: path, line: block.line + 1 }, catalogue, {
          bash: block.kind === "run" || block.from === "sh",
        }),
      );
    }
    expect(all.map(formatProblem)).toEqual([]);
  });
});

/** `kubectl create …` commands of a doc's runnable (or syntax-only) blocks, as argv after `kubectl`. */
function kubectlCreates(path: string, kind: "run" | "syntax"): string[][] {
  const blocks = extractBlocks(read(path), { source: path }).blocks.filter(
    (b) => b.kind === kind && (b.kind === "run" || b.from === "sh"),
  );
  return blocks.flatMap((block) =>
    block.code
      .replaceAll("\\\n", " ")
      .split("\n")
      // The command before any pipe: `kubectl create role … -o yaml | kubectl apply -f -`
      .map((line) => {
        const tokens = parse(line);
        const end = tokens.findIndex((t) => typeof t !== "string");
        return (end === -1 ? tokens : tokens.slice(0, end)).filter((t): t is string => typeof t === "string");
      })
      .filter((argv) => argv[0] === "kubectl" && argv[1] === "create")
      .map((argv) => argv.slice(1)),
  );
}

test("docs/auth.md grants exactly the RBAC the sandbox gives its operator, and shows the installed provider's apart", () => {
  const sorted = (commands: string[][]) => commands.map((argv) => argv.join(" ")).sort();
  const alice = { user: "alice" };
  expect(sorted(kubectlCreates("docs/auth.md", "run"))).toEqual(sorted(grantCommands(OPERATOR_GRANTS, alice)));
  expect(sorted(kubectlCreates("docs/auth.md", "syntax"))).toEqual(
    sorted(grantCommands(INSTALLED_PROVIDER_GRANTS, alice)),
  );
});

/** Every line of every step's command stands in the guide's run blocks. */
function expectStepsIn(doc: string, steps: ReadonlyArray<{ title: string; command: string }>): void {
  const guide = runBlocks(doc)
    .map((block) => block.code)
    .join("\n");
  for (const step of steps) {
    for (const line of step.command.split("\n")) expect(guide, step.title).toContain(line);
  }
}

test("./run demo walks the commands of docs/first-cluster.md", () => {
  expectStepsIn("docs/first-cluster.md", operatorFlow());
});

test("./run demo's nr steps are the commands of docs/registration.md's sandbox section", () => {
  expectStepsIn("docs/registration.md", registrationFlow());
});

test("./run demo's install, upgrade and uninstall steps are the commands of docs/install.md's sandbox sections", () => {
  const taken = new Set(releaseExecutableFlow().map((step) => step.title));
  expectStepsIn(
    "docs/install.md",
    [...installFlow(), ...upgradeFlow(), ...uninstallFlow()].filter((s) => !taken.has(s.title)),
  );
});

test("./run demo's steps taking nvkectl from the release are the commands of docs/release-artifacts.md's sandbox section", () => {
  expectStepsIn("docs/release-artifacts.md", releaseExecutableFlow());
});

test("./run demo's Ansible steps are the commands of docs/fleets.md's sandbox section", () => {
  expectStepsIn("docs/fleets.md", fleetFlow());
});
