import type { List } from "@nodekit/nvke-api";
import { describe, expect, it } from "vitest";
import { forEachPage } from "./paging.ts";

describe("forEachPage", () => {
  it("follows continue, hands over each page before fetching the next, skips empty pages and counts the items", async () => {
    // Given three pages, the middle one empty, the last one ending with an empty continue
    const pages: Record<string, List<number>> = {
      first: { items: [1, 2], continue: "b" },
      b: { items: [], continue: "c" },
      c: { items: [3], continue: "" },
    };
    const events: string[] = [];

    // When every page is walked
    const count = await forEachPage(
      async (page) => {
        events.push(`fetch ${page.continue ?? "-"}`);
        return pages[page.continue ?? "first"] ?? { items: [] };
      },
      (items) => {
        events.push(`page ${items.join(",")}`);
      },
    );

    // Then each page was asked for with the previous continue, and only non-empty ones were handed over, in order
    expect(events).toEqual(["fetch -", "page 1,2", "fetch b", "fetch c", "page 3"]);
    expect(count).toBe(3);
  });

  it("asks once and hands nothing over for an empty list", async () => {
    const fetched: Array<string | undefined> = [];
    const handed: number[][] = [];
    const count = await forEachPage(
      async (page) => {
        fetched.push(page.continue);
        return { items: [] as number[] };
      },
      (items) => {
        handed.push(items);
      },
    );
    expect(fetched).toEqual([undefined]);
    expect(handed).toEqual([]);
    expect(count).toBe(0);
  });
});
