/**
 * Polls a list and tells `onChange` about the items that are new or changed since the last
 * round (every item in the first), until `timeoutMs` passes (or forever without it): what
 * `get … -w` prints for a list. An item is changed when its signature is.
 */
export async function watchList<T>(options: {
  /** Fetches the whole list, a page at a time. */
  fetchAll: (onPage: (items: T[]) => void) => Promise<unknown>;
  key: (item: T) => string;
  signature: (item: T) => string;
  onChange: (items: T[]) => Promise<void> | void;
  intervalMs: number;
  timeoutMs?: number | undefined;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}): Promise<void> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : now() + options.timeoutMs;
  let seen = new Map<string, string>();
  for (;;) {
    const current = new Map<string, string>();
    const changed: T[] = [];
    await options.fetchAll((items) => {
      for (const item of items) {
        const key = options.key(item);
        const signature = options.signature(item);
        current.set(key, signature);
        if (seen.get(key) !== signature) changed.push(item);
      }
    });
    seen = current;
    if (changed.length > 0) await options.onChange(changed);
    const left = deadline - now();
    if (left <= 0) return;
    await sleep(Math.min(options.intervalMs, left));
  }
}
