/**
 * A refusal an emulator answers with its service's error body. Each emulator's own ApiError
 * extends it with the body its service sends (NodeRings' `{error: {code, message, requestId}}`,
 * NVKE's `{error: {code, reason, message}}`); the HTTP shell answers any of them.
 */
export abstract class EmulatorApiError extends Error {
  /** The HTTP status. */
  abstract readonly status: number;
  /** Seconds, sent as Retry-After (429, 503). */
  readonly retryAfter: number | undefined;

  constructor(message: string, retryAfter?: number) {
    super(message);
    this.retryAfter = retryAfter;
  }

  /** The service's error body for this refusal. */
  abstract toBody(requestId: string): unknown;
}

/**
 * The refusals the shell makes itself: a body it cannot read (400), no admin token (401), no
 * such route (404), a method the route does not take (405), a body that is not JSON (415), a
 * failure of the emulator's own (500).
 */
export type ShellRefusal = 400 | 401 | 404 | 405 | 415 | 500;

/** One of the shell's refusals in the emulator's error shape. */
export type Refuse = (status: ShellRefusal, message: string) => EmulatorApiError;
