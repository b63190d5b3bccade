import { describe, expect, test } from "vitest";
import { waitForObject, watchList } from "./watch.ts";

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

describe("waitForObject (create/delete/get --wait, get NAME -w)", () => {
  type Thing = { name: string; status: { phase: string } };
  /** A wait over these states in turn (undefined: gone), on a clock the sleeps advance. */
  const wait = (states: Array<Thing | undefined>, until: "Ready" | "gone", timeoutMs = 10_000) => {
    let clock = 0;
    const seen: string[] = [];
    const [first, ...rest] = states;
    const result = waitForObject<Thing>({
      first: async () => first,
      next: async () => rest.shift(),
      until,
      signature: (thing) => thing.status.phase,
      onChange: (thing) => void seen.push(thing.status.phase),
      missing: (later) => new Error(later ? "disappeared" : "not found"),
      stuck: (thing) => (thing.status.phase === "Failed" ? new Error(`${thing.name} failed`) : undefined),
      timedOut: (thing) => new Error(`timed out ${thing.status.phase} at ${clock}`),
      timeoutMs,
      intervalMs: 1000,
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
    });
    return { result, seen };
  };
  const thing = (phase: string): Thing => ({ name: "a", status: { phase } });

  test("until Ready: each change told once, the Ready state returned", async () => {
    const { result, seen } = wait([thing("Provisioning"), thing("Provisioning"), thing("Ready")], "Ready");
    expect(await result).toEqual(thing("Ready"));
    expect(seen).toEqual(["Provisioning", "Ready"]);
  });

  test("until Ready: a stuck phase, a missing object (first or later) and the deadline end it with their errors", async () => {
    await expect(wait([thing("Provisioning"), thing("Failed")], "Ready").result).rejects.toThrow("a failed");
    await expect(wait([undefined], "Ready").result).rejects.toThrow("not found");
    await expect(wait([thing("Provisioning"), undefined], "Ready").result).rejects.toThrow("disappeared");
    const forever = Array.from({ length: 10 }, () => thing("Provisioning"));
    await expect(wait(forever, "Ready", 2500).result).rejects.toThrow("timed out Provisioning at 2500");
  });

  test("until gone: undefined once it no longer exists, or at once; a Failed phase does not end it", async () => {
    expect(await wait([thing("Deleting"), thing("Failed"), undefined], "gone").result).toBeUndefined();
    expect(await wait([undefined], "gone").result).toBeUndefined();
  });
});
