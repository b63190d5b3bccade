import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "@nodekit/test-utils";
import { expect, test } from "vitest";

// docs/install.md's shell blocks, checked against the CLI itself: every nvkectl command in
// them exists, and every flag it passes is one that command takes (from the oclif manifest
// the build writes, which is what --help and the command reference are made from).

interface Manifest {
  commands: Record<string, { flags: Record<string, { char?: string }> }>;
}

/** The shell blocks' commands, with continuation lines joined. */
function commandsIn(markdown: string): string[][] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");
  return blocks
    .flatMap((block) => block.replaceAll("\\\n", " ").split("\n"))
    .map((line) => line.replace(/#.*$/, "").trim())
    .filter((line) => line.startsWith("nvkectl "))
    .map((line) => line.split(/\s+/));
}

test("every nvkectl command in docs/install.md exists and takes the flags it is given", async () => {
  const manifest = JSON.parse(await readFile(join(repoRoot, "apps/nvkectl/oclif.manifest.json"), "utf8")) as Manifest;
  const commands = commandsIn(await readFile(join(repoRoot, "docs/install.md"), "utf8"));
  expect(commands.length).toBeGreaterThanOrEqual(4);
  for (const words of commands) {
    const rest = words.slice(1);
    const id = [rest[0], rest[1]].filter((word) => word !== undefined && !word.startsWith("-"));
    const commandId = manifest.commands[id.join(":")] ? id.join(":") : (id[0] ?? "");
    const command = manifest.commands[commandId];
    expect(command, `${words.join(" ")}: no such command`).toBeDefined();
    for (const flag of rest.filter((word) => word.startsWith("--")).map((word) => word.slice(2).split("=")[0] ?? "")) {
      expect(Object.keys(command?.flags ?? {}), `${words.join(" ")}: ${commandId} has no --${flag}`).toContain(flag);
    }
  }
});
