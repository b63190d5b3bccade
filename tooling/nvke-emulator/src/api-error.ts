import { EmulatorApiError, type Refuse } from "@nodekit/emulator-kit";
import { API_ERROR_REASONS, type ApiErrorBody, type ApiErrorDetail } from "@nodekit/nvke-api";

/** A refusal the controller answers with its error body: `{ error: { code, reason, message, details? } }`. */
export class ApiError extends EmulatorApiError {
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

/** The HTTP shell's own refusals. */
export const refuse: Refuse = (status, message) => new ApiError(status, message);

export const notFound = (message: string) => new ApiError(404, message);
export const conflict = (message: string) => new ApiError(409, message);
export const invalid = (message: string, details?: ApiErrorDetail[]) => new ApiError(422, message, details);
export const badRequest = (message: string) => new ApiError(400, message);
