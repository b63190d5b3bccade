import type { Options } from "tsup";

// The build every package shares: ES modules for Node 22, a clean dist/. Each package's
// tsup.config.ts is a line or two on top of this (apps/nvkectl adds its bundling options).

export const base = { format: "esm", target: "node22", clean: true } as const satisfies Options;

/**
 * A library's build: its public entries (default src/index.ts). Its type declarations
 * (dist/index.d.ts) come from tooling/tsup/declarations.ts, which the root `pnpm build` runs
 * once for every library after their JavaScript: one TypeScript program for all of them.
 */
export function library(options: Options = {}): Options {
  return { ...base, entry: ["src/index.ts"], ...options };
}

/**
 * Puts the build's entry points in sorted order; call it from `esbuildOptions`. tsup expands
 * `entry` globs with tinyglobby, whose results come in the order its directory walk finishes,
 * and esbuild's output follows the order of its entries: which chunk holds a module, the order
 * of each file's imports, and so every chunk's hash. Sorted, the same sources build the same files.
 */
export function sortEntryPoints(options: { entryPoints?: unknown }): void {
  if (Array.isArray(options.entryPoints) && options.entryPoints.every((entry) => typeof entry === "string")) {
    options.entryPoints = [...options.entryPoints].sort();
  }
}
