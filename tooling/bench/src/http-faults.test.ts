import { expect, test } from "vitest";
import { FAULTS, RAW_FAULTS, runHttpFaultTier } from "./http-faults.ts";

// The fault tier with few generated answers (the whole tier: `node --conditions=source
// tooling/bench/src/http-faults.ts`, figures in tooling/bench/README.md): every client ends
// every exchange with a value or a documented error, in bounded time and memory.
test("every client ends every faulty exchange with a value or a documented error, in bounded time and memory", async () => {
  const report = await runHttpFaultTier({ generatedPerClient: 8, seed: 22, timeoutMs: 300 });
  expect(report.crashes.map((c) => `${c.client} / ${c.fault}: ${c.detail}`)).toEqual([]);
  expect(report.exchanges).toBe((Object.keys(FAULTS).length + Object.keys(RAW_FAULTS).length + 8) * 5);
  expect(report.longest.ms).toBeLessThan(9 * 300 + 2_000);
  // A 2 GiB body, a 4 GiB error body and a 1 GiB gzip bomb went through: none of them was held.
  expect(report.peakRssMb).toBeLessThan(600);
}, 600_000);
