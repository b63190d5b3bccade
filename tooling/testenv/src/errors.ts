export interface TestenvErrorOptions {
  why?: string;
  next?: string[];
  cause?: unknown;
}

/**
 * A failure to start or reach the test control plane. The message carries what happened,
 * why and what to do next in one string, because test runners print only `message`.
 */
export class TestenvError extends Error {
  override readonly name = "TestenvError";
  readonly what: string;
  readonly why: string | undefined;
  readonly next: string[];

  constructor(what: string, options: TestenvErrorOptions = {}) {
    const lines = [what];
    if (options.why) lines.push(`why: ${options.why}`);
    for (const step of options.next ?? []) lines.push(`next: ${step}`);
    super(lines.join("\n"), options.cause === undefined ? undefined : { cause: options.cause });
    this.what = what;
    this.why = options.why;
    this.next = options.next ?? [];
  }
}
