import type { Problem } from "@nodekit/errors";
import { fromMarkdown } from "mdast-util-from-markdown";

// The shell blocks of a Markdown guide, by their marker:
//
//   ```sh doctest            run against the doc's own fresh sandbox, in order; exit 0 expected
//   ```sh doctest exit=4     … exit code 4 expected
//   ```text doctest:output   right after a run block: lines its output must show, in order
//                            ("…" matches anything within a line, a run of spaces any spaces)
//   ```sh doctest:syntax     cannot run here (a real site): bash -n, and every nvkectl/nr
//                            command and flag must exist (oclif manifests)
//   ```console               `$ ` lines are checked like doctest:syntax
//
// Every sh/bash/shell block must carry one of the doctest markers.

const SHELL_LANGS = new Set(["sh", "bash", "shell"]);

export interface RunBlock {
  kind: "run";
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
  exitCode: number;
  /** Lines the output must show, in order (from a doctest:output block after it). */
  expectedOutput?: { lines: string[]; line: number };
}

interface SyntaxBlock {
  kind: "syntax";
  /** The commands: a whole shell block, or the `$ ` lines of a console block. */
  code: string;
  line: number;
  /** A console block's commands are only checked against the CLIs, not parsed by bash as a whole. */
  from: "sh" | "console";
}

type DocBlock = RunBlock | SyntaxBlock;

export interface ExtractedBlocks {
  blocks: DocBlock[];
  problems: Problem[];
}

const problem = (source: string, line: number, message: string): Problem => ({
  severity: "error",
  source,
  line,
  message,
});

/** Every marked block of `markdown`, in document order, and every misuse of the markers. Never throws. */
export function extractBlocks(markdown: string, options: { source: string }): ExtractedBlocks {
  const { source } = options;
  const blocks: DocBlock[] = [];
  const problems: Problem[] = [];
  const tree = fromMarkdown(markdown);
  let previous: DocBlock | undefined;
  let previousWasOutput = false;
  for (const node of walk(tree)) {
    const line = node.position?.start.line ?? 0;
    const lang = node.lang ?? "";
    const words = (node.meta ?? "").split(/\s+/).filter(Boolean);
    const marker = words.find((word) => word.startsWith("doctest"));
    const attrs = Object.fromEntries(
      words.filter((word) => word.includes("=")).map((word) => word.split("=", 2) as [string, string]),
    );
    const isOutput = marker === "doctest:output";
    if (isOutput) {
      if (previous?.kind !== "run" || previousWasOutput) {
        problems.push(problem(source, line, "a doctest:output block must follow a ```sh doctest block"));
      } else {
        previous.expectedOutput = { lines: node.value.split("\n").filter((l) => l.trim() !== ""), line };
      }
      previousWasOutput = true;
      continue;
    }
    previousWasOutput = false;
    if (SHELL_LANGS.has(lang)) {
      if (marker === "doctest") {
        const exit = attrs.exit;
        const exitCode = exit === undefined ? 0 : Number(exit);
        if (!Number.isInteger(exitCode) || exitCode < 0 || exitCode > 255) {
          problems.push(problem(source, line, `exit=${exit} is not an exit code (0 to 255)`));
        }
        previous = { kind: "run", code: node.value, line, exitCode };
        blocks.push(previous);
      } else if (marker === "doctest:syntax") {
        previous = { kind: "syntax", code: node.value, line, from: "sh" };
        blocks.push(previous);
      } else {
        problems.push(
          problem(
            source,
            line,
            marker === undefined
              ? `a \`\`\`${lang} block must be marked: \`\`\`${lang} doctest (runs against a sandbox) or \`\`\`${lang} doctest:syntax (a real site's commands: syntax only)`
              : `unknown marker ${marker}: use doctest, doctest:syntax or doctest:output`,
          ),
        );
      }
      continue;
    }
    if (lang === "console") {
      const commands = node.value
        .split("\n")
        .filter((l) => l.startsWith("$ "))
        .map((l) => l.slice(2));
      if (commands.length > 0) blocks.push({ kind: "syntax", code: commands.join("\n"), line, from: "console" });
    }
    if (marker !== undefined)
      problems.push(problem(source, line, `${marker} goes on a sh block, not on ${lang || "a plain"} block`));
    previous = undefined;
  }
  return { blocks, problems };
}

interface CodeNode {
  lang?: string | null;
  meta?: string | null;
  value: string;
  position?: { start: { line: number } };
}

/** Fenced code blocks anywhere in the tree (lists and block quotes included), in order. */
function* walk(node: { type: string; children?: unknown[] }): Generator<CodeNode> {
  for (const child of (node.children ?? []) as Array<{ type: string; children?: unknown[] }>) {
    if (child.type === "code") yield child as unknown as CodeNode;
    else yield* walk(child);
  }
}

/**
 * Whether `output` shows `expected`'s lines in order (other lines may come between):
 * "…" matches anything within a line, and a run of spaces any run of whitespace.
 */
export function outputMatches(
  output: string,
  expected: readonly string[],
): { ok: true } | { ok: false; missing: string } {
  const lines = output.split("\n");
  let at = 0;
  for (const want of expected) {
    const pattern = new RegExp(
      `^${want
        .trim()
        .split("…")
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\s+/g, "\\s+"))
        .join(".*")}$`,
    );
    const found = lines.findIndex((line, i) => i >= at && pattern.test(line.trim()));
    if (found === -1) return { ok: false, missing: want };
    at = found + 1;
  }
  return { ok: true };
}
