import { API_ERROR_REASONS, type ApiErrorBody, type ApiErrorDetail } from "@nodekit/nvke-api";

/** A refusal the controller answers with its error body. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;
  readonly details: ApiErrorDetail[] | undefined;

  constructor(status: number, message: string, details?: ApiErrorDetail[]) {
    super(message);
    this.status = status;
    this.details = details;
  }

  get reason(): string {
    return (API_ERROR_REASONS as Record<number, string>)[this.status] ?? "Error";
  }

  toBody(): ApiErrorBody {
    return {
      error: {
        code: this.status,
        reason: this.reason,
        message: this.message,
        ...(this.details === undefined || this.details.length === 0 ? {} : { details: this.details }),
      },
    };
  }
}

export const notFound = (message: string) => new ApiError(404, message);
export const conflict = (message: string) => new ApiError(409, message);
export const invalid = (message: string, details?: ApiErrorDetail[]) => new ApiError(422, message, details);
export const badRequest = (message: string) => new ApiError(400, message);
