import { EmulatorApiError, type Refuse } from "@nodekit/emulator-kit";
import type { ApiErrorBody, ApiErrorCode, ApiErrorDetail } from "@nodekit/noderings-api";
import { API_ERROR_CODES } from "@nodekit/noderings-api";

/** A refusal the service answers with its error body: `{ error: { code, message, details?, requestId } }`. */
export class ApiError extends EmulatorApiError {
  override readonly name = "ApiError";
  readonly code: ApiErrorCode;
  readonly details: ApiErrorDetail[] | undefined;

  constructor(code: ApiErrorCode, message: string, options: { details?: ApiErrorDetail[]; retryAfter?: number } = {}) {
    super(message, options.retryAfter);
    this.code = code;
    this.details = options.details;
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

/** The HTTP shell's own refusals, in the service's codes. */
export const refuse: Refuse = (status, message) =>
  new ApiError(
    (
      {
        400: "bad_request",
        401: "unauthenticated",
        404: "not_found",
        405: "method_not_allowed",
        415: "unsupported_media_type",
        500: "internal",
      } as const
    )[status],
    message,
  );

export const notFound = (message: string) => new ApiError("not_found", message);
export const conflict = (message: string, details?: ApiErrorDetail[]) =>
  new ApiError("conflict", message, details === undefined ? {} : { details });
export const badRequest = (message: string) => new ApiError("bad_request", message);
export const invalid = (message: string, details?: ApiErrorDetail[]) =>
  new ApiError("invalid", message, details === undefined ? {} : { details });
