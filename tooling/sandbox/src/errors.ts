export interface SandboxErrorOptions {
  why?: string;
  next?: string[];
  cause?: unknown;
}

/** A sandbox that could not be brought up, read or taken down: what happened, why, what to do next. */
export class SandboxError extends Error {
  override readonly name = "SandboxError";
  readonly why: string | undefined;
  readonly next: string[];

  constructor(what: string, options: SandboxErrorOptions = {}) {
    super(what, options.cause === undefined ? undefined : { cause: options.cause });
    this.why = options.why;
    this.next = options.next ?? [];
  }

  /** The lines a person reads: error, why, next. */
  describe(): string {
    return [
      `error: ${this.message}`,
      ...(this.why ? [`why: ${this.why}`] : []),
      ...this.next.map((step) => `next: ${step}`),
    ].join("\n");
  }
}
