import type { ApiErrorBody, ApiErrorCode, ApiErrorDetail } from "@nodekit/noderings-api";
import { API_ERROR_CODES } from "@nodekit/noderings-api";

/** A refusal the service answers with its error body. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly code: ApiErrorCode;
  readonly details: ApiErrorDetail[] | undefined;
  /** Seconds, for 429 and 503. */
  readonly retryAfter: number | undefined;

  constructor(code: ApiErrorCode, message: string, options: { details?: ApiErrorDetail[]; retryAfter?: number } = {}) {
    super(message);
    this.code = code;
    this.details = options.details;
    this.retryAfter = options.retryAfter;
  }

  get status(): number {
    return API_ERROR_CODES[this.code];
  }

  toBody(requestId: string): ApiErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details === undefined || this.details.length === 0 ? {} : { details: this.details }),
        requestId,
      },
    };
  }
}

export const notFound = (message: string) => new ApiError("not_found", message);
export const conflict = (message: string, details?: ApiErrorDetail[]) =>
  new ApiError("conflict", message, details === undefined ? {} : { details });
export const badRequest = (message: string) => new ApiError("bad_request", message);
export const invalid = (message: string, details?: ApiErrorDetail[]) =>
  new ApiError("invalid", message, details === undefined ? {} : { details });
