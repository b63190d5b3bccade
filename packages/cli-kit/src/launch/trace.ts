// Start-up spans (tooling/bench/README.md, "where the cached read goes"): with
// NODEKIT_TRACE_STARTUP=1 each mark prints one line on stderr, `startup <ms since the process
// started> <label>`. Off by default; a mark then costs one comparison. process.uptime() and
// not performance.now(): the global `performance` loads perf_hooks (eleven modules) on first use.

const on = process.env.NODEKIT_TRACE_STARTUP === "1";

/** Marks a start-up step (a no-op unless NODEKIT_TRACE_STARTUP=1). */
export function traceStartup(label: string): void {
  if (on) process.stderr.write(`startup ${(process.uptime() * 1000).toFixed(1)} ${label}\n`);
}
