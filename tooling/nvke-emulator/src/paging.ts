import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from "@nodekit/nvke-api";
import { badRequest } from "./api-error.ts";

export interface Page<T> {
  items: T[];
  continue?: string;
}

/**
 * One page of a list, in key order, after the `continue` token's key: `limit` items and a
 * token when more follow. The page is selected, not sorted out of the whole list: one pass
 * keeps the `limit + 1` smallest keys after the token in a bounded max-heap, so a page of
 * 500 out of 50,000 clusters costs a pass and a few thousand heap steps, not a sort of
 * 50,000 names on every request (which was most of a 50,000-cluster listing's time).
 */
export function paginate<T>(items: Iterable<T>, key: (item: T) => string, query: URLSearchParams): Page<T> {
  const limitText = query.get("limit");
  const limit = limitText === null ? LIST_LIMIT_DEFAULT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT_MAX) {
    throw badRequest(`limit must be a whole number from 1 to ${LIST_LIMIT_MAX}; got "${limitText}"`);
  }
  const after = afterKey(query.get("continue"));
  const heap = new MaxHeap<{ item: T; key: string }>((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const size = limit + 1;
  for (const item of items) {
    const entry = { item, key: key(item) };
    if (after !== undefined && entry.key <= after) continue;
    if (heap.size < size) heap.push(entry);
    else if (heap.compare(entry, heap.peek() as { item: T; key: string }) < 0) heap.replaceTop(entry);
  }
  const selected = heap.drain().reverse();
  const page = selected.slice(0, limit);
  const last = page.at(-1);
  const more = selected.length > limit && last !== undefined;
  return {
    items: page.map((entry) => entry.item),
    ...(more ? { continue: Buffer.from(JSON.stringify({ v: 1, after: last.key })).toString("base64url") } : {}),
  };
}

function afterKey(token: string | null): string | undefined {
  if (token === null || token === "") return undefined;
  try {
    const decoded = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as { v?: unknown; after?: unknown };
    if (decoded.v !== 1 || typeof decoded.after !== "string") throw new Error("bad token");
    return decoded.after;
  } catch {
    throw badRequest("the continue token is not valid; list again without it");
  }
}

/** A binary max-heap: the largest entry on top. */
class MaxHeap<T> {
  private readonly entries: T[] = [];
  readonly compare: (a: T, b: T) => number;
  constructor(compare: (a: T, b: T) => number) {
    this.compare = compare;
  }

  get size(): number {
    return this.entries.length;
  }

  peek(): T | undefined {
    return this.entries[0];
  }

  push(entry: T): void {
    const { entries } = this;
    entries.push(entry);
    let i = entries.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.compare(entries[i] as T, entries[parent] as T) <= 0) break;
      [entries[i], entries[parent]] = [entries[parent] as T, entries[i] as T];
      i = parent;
    }
  }

  replaceTop(entry: T): void {
    this.entries[0] = entry;
    this.siftDown(0);
  }

  /** Every entry, largest first; the heap is empty afterwards. */
  drain(): T[] {
    const out: T[] = [];
    while (this.entries.length > 0) {
      const top = this.entries[0] as T;
      const last = this.entries.pop() as T;
      if (this.entries.length > 0) {
        this.entries[0] = last;
        this.siftDown(0);
      }
      out.push(top);
    }
    return out;
  }

  private siftDown(start: number): void {
    const { entries } = this;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let largest = i;
      if (left < entries.length && this.compare(entries[left] as T, entries[largest] as T) > 0) largest = left;
      if (right < entries.length && this.compare(entries[right] as T, entries[largest] as T) > 0) largest = right;
      if (largest === i) return;
      [entries[i], entries[largest]] = [entries[largest] as T, entries[i] as T];
      i = largest;
    }
  }
}

/** Items with their sort key, sorted by it (`sortedByKey`). */
export type SortedEntries<T> = ReadonlyArray<{ readonly key: string; readonly item: T }>;

export function sortedByKey<T>(items: Iterable<T>, key: (item: T) => string): SortedEntries<T> {
  return [...items]
    .map((item) => ({ key: key(item), item }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * A page of an already sorted list: found by binary search, so a page costs O(log n + limit)
 * whatever the list's length. `only` keeps just the item whose key is that (a `name=` query).
 * Same limits, tokens and errors as {@link paginate}.
 */
export function paginateSorted<T>(entries: SortedEntries<T>, query: URLSearchParams, only?: string): Page<T> {
  const limitText = query.get("limit");
  const limit = limitText === null ? LIST_LIMIT_DEFAULT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT_MAX) {
    throw badRequest(`limit must be a whole number from 1 to ${LIST_LIMIT_MAX}; got "${limitText}"`);
  }
  const after = afterKey(query.get("continue"));
  const firstAbove = (bound: string, inclusive: boolean) => {
    let lo = 0;
    let hi = entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const key = entries[mid]?.key ?? "";
      if (key < bound || (!inclusive && key === bound)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  let start = after === undefined ? 0 : firstAbove(after, false);
  let end = entries.length;
  if (only !== undefined) {
    start = Math.max(start, firstAbove(only, true));
    end = firstAbove(only, false);
  }
  const page = entries.slice(start, Math.min(end, start + limit));
  const last = page.at(-1);
  const more = start + limit < end && last !== undefined;
  return {
    items: page.map((entry) => entry.item),
    ...(more ? { continue: Buffer.from(JSON.stringify({ v: 1, after: last.key })).toString("base64url") } : {}),
  };
}
