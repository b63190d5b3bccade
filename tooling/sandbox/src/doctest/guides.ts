import { readdirSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../layout.ts";

/** The guides whose shell blocks are checked and run: README.md and docs/*.md (not docs/commands/, generated). */
export const GUIDES: readonly string[] = [
  "README.md",
  ...readdirSync(join(repoRoot, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`),
];
