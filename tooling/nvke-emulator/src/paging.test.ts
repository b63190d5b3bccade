import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { paginate, paginateSorted, sortedByKey } from "./paging.ts";

// Paging selects each page instead of sorting the whole list: the pages must be exactly
// those of the sorted list, whatever the order the items come in.

function pages(keys: string[], limit: number): string[][] {
  const out: string[][] = [];
  let token: string | undefined;
  do {
    const query = new URLSearchParams({ limit: String(limit), ...(token === undefined ? {} : { continue: token }) });
    const page = paginate(keys, (key) => key, query);
    out.push(page.items);
    token = page.continue;
  } while (token !== undefined);
  return out;
}

describe("paginate", () => {
  test("gives the sorted list's pages, in any input order, every item once", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 4 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        (keys, limit) => {
          const sorted = [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
          const expected: string[][] = [];
          for (let i = 0; i < sorted.length; i += limit) expected.push(sorted.slice(i, i + limit));
          expect(pages(keys, limit)).toEqual(expected.length === 0 ? [[]] : expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  test("a sorted index gives the same pages by binary search, a name= query included", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 3 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 9 }),
        fc.option(fc.string({ maxLength: 3 }), { nil: undefined }),
        (keys, limit, only) => {
          const sorted = sortedByKey(keys, (key) => key);
          let token: string | undefined;
          do {
            const query = new URLSearchParams({
              limit: String(limit),
              ...(token === undefined ? {} : { continue: token }),
            });
            const filtered = only === undefined ? keys : keys.filter((key) => key === only);
            const expected = paginate(filtered, (key) => key, query);
            const page = paginateSorted(sorted, query, only);
            expect(page).toEqual(expected);
            token = page.continue;
          } while (token !== undefined);
        },
      ),
      { numRuns: 500 },
    );
  });

  test("refuses a bad limit or token", () => {
    expect(() => paginate([], (k: string) => k, new URLSearchParams({ limit: "0" }))).toThrow(/limit must be/);
    expect(() => paginate([], (k: string) => k, new URLSearchParams({ continue: "nope" }))).toThrow(/continue token/);
  });
});
