import { describe, expect, test } from "vitest";
import { watchList } from "./watch.ts";

describe("watchList (get … -w on a list)", () => {
  test("prints every item first, then only the new and changed ones, until the timeout", async () => {
    let clock = 0;
    const rounds = [
      [
        { id: "a", phase: "Provisioning" },
        { id: "b", phase: "Ready" },
      ],
      [
        { id: "a", phase: "Provisioning" },
        { id: "b", phase: "Ready" },
      ],
      [
        { id: "a", phase: "Ready" },
        { id: "b", phase: "Ready" },
        { id: "c", phase: "Provisioning" },
      ],
      [
        { id: "b", phase: "Ready" },
        { id: "c", phase: "Provisioning" },
      ],
    ];
    let round = 0;
    const printed: string[][] = [];
    await watchList<{ id: string; phase: string }>({
      fetchAll: async (onPage) => {
        const items = rounds[Math.min(round++, rounds.length - 1)] ?? [];
        // In two pages, as the controller sends them
        onPage(items.slice(0, 1));
        onPage(items.slice(1));
      },
      key: (item) => item.id,
      signature: (item) => item.phase,
      onChange: (items) => {
        printed.push(items.map((item) => `${item.id}=${item.phase}`));
      },
      intervalMs: 1000,
      timeoutMs: 3500,
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
    });
    expect(printed).toEqual([
      ["a=Provisioning", "b=Ready"],
      ["a=Ready", "c=Provisioning"],
    ]);
    expect(round).toBe(5);
  });
});
