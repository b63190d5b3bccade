import { ExitCode, UserError } from "@nodekit/errors";

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

/** What a wait for one object (a cluster, a node pool) is told besides which object. */
export interface WaitFor<T> {
  /** Ready: until it is Ready (a pool: every desired node runs). gone: until it no longer exists (after delete). */
  until: "Ready" | "gone";
  timeoutMs: number;
  intervalMs: number;
  /** Told about the object on each poll where it changed; the first poll always. */
  onChange?: ((object: T) => Promise<void> | void) | undefined;
  now?: (() => number) | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
}

/**
 * Polls one object (a cluster, a node pool) until it is Ready, or until it is gone: tells
 * `onChange` about it on each poll where its signature changed (the first poll always). Until
 * Ready, a phase it will not leave for Ready ends the wait with what `stuck` says; the deadline
 * ends it with `timedOut`. Returns the last state seen (undefined when gone).
 */
export async function waitForObject<T extends { status: { phase: string } }>(
  options: WaitFor<T> & {
    /** Its first state (undefined: it does not exist). */
    first: () => Promise<T | undefined>;
    /** Its state again (undefined: it no longer exists). */
    next: (last: T) => Promise<T | undefined>;
    /** What changes when it does. */
    signature: (object: T) => string;
    /** Waiting until Ready: the error for an object that does not exist, at the first look or `later`. */
    missing: (later: boolean) => Error;
    /** The error for a phase it will not leave for Ready (Failed, Deleting); undefined for any other. */
    stuck: (object: T) => Error | undefined;
    timedOut: (object: T) => Error;
  },
): Promise<T | undefined> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = now() + options.timeoutMs;
  let object = await options.first();
  let seen: string | undefined;
  for (let later = false; ; later = true) {
    if (object === undefined) {
      if (options.until === "gone") return undefined;
      throw options.missing(later);
    }
    const signature = options.signature(object);
    if (signature !== seen) {
      seen = signature;
      await options.onChange?.(object);
    }
    if (options.until === "Ready") {
      if (object.status.phase === "Ready") return object;
      const stuck = options.stuck(object);
      if (stuck !== undefined) throw stuck;
    }
    if (now() >= deadline) throw options.timedOut(object);
    await sleep(Math.min(options.intervalMs, Math.max(0, deadline - now())));
    object = await options.next(object);
  }
}

/** What a request for one object by ID answers, undefined when the controller says NotFound. */
export async function unlessNotFound<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (error) {
    if (error instanceof UserError && error.exitCode === ExitCode.NotFound) return undefined;
    throw error;
  }
}
