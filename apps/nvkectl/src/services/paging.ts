import type { List, PageOptions } from "@nodekit/nvke-api";

/**
 * Fetches a list page by page, following `continue` until the controller sends none, and
 * hands each non-empty page to `onPage` as it arrives, so that only one page is ever in
 * memory (ten thousand clusters are never all held at once). Returns how many items there were.
 */
export async function forEachPage<T>(
  fetchPage: (page: Pick<PageOptions, "continue">) => Promise<List<T>>,
  onPage: (items: T[]) => Promise<void> | void,
): Promise<number> {
  let count = 0;
  let next: string | undefined;
  do {
    const page = await fetchPage(next === undefined ? {} : { continue: next });
    count += page.items.length;
    if (page.items.length > 0) await onPage(page.items);
    next = page.continue;
  } while (next !== undefined && next !== "");
  return count;
}
