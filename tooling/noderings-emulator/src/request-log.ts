/**
 * The requests an emulator answered (or dropped), in order, for tests to count attempts —
 * keeping only the last `limit` of them, so that memory stays bounded however long it runs.
 * `length` counts every request ever made, and `slice(from)` takes positions in that whole
 * sequence: `before = requests.length` … `requests.slice(before)` and `requests.length ===
 * before` stay true to what happened past the limit. A slice that reaches back before the
 * requests still kept throws, rather than answer with fewer; the other reads (`filter`,
 * `some`, `map`, `at`, iteration) see the requests kept.
 */
export class RequestLog<RequestRecord> implements Iterable<RequestRecord> {
  private readonly kept: RequestRecord[] = [];
  private dropped = 0;
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  get length(): number {
    return this.dropped + this.kept.length;
  }

  push(record: RequestRecord): void {
    this.kept.push(record);
    const over = this.kept.length - this.limit;
    if (over > 0) {
      this.kept.splice(0, over);
      this.dropped += over;
    }
  }

  slice(start = 0, end = this.length): RequestRecord[] {
    const from = start < 0 ? Math.max(0, this.length + start) : start;
    if (from < this.dropped) {
      throw new RangeError(
        `requests before #${this.dropped} are no longer kept (the emulator keeps the last ${this.limit}: requestLogLimit)`,
      );
    }
    const to = end < 0 ? this.length + end : end;
    return this.kept.slice(from - this.dropped, Math.max(0, to - this.dropped));
  }

  at(index: number): RequestRecord | undefined {
    return index < 0 ? this.kept.at(index) : this.kept[index - this.dropped];
  }

  filter(predicate: (record: RequestRecord) => boolean): RequestRecord[] {
    return this.kept.filter((record) => predicate(record));
  }

  some(predicate: (record: RequestRecord) => boolean): boolean {
    return this.kept.some((record) => predicate(record));
  }

  map<T>(mapper: (record: RequestRecord) => T): T[] {
    return this.kept.map((record) => mapper(record));
  }

  [Symbol.iterator](): Iterator<RequestRecord> {
    return this.kept[Symbol.iterator]();
  }
}
