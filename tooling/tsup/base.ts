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
