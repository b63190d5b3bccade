export {
  classifyTransportError,
  isDnsFailure,
  type TransportClass,
  TransportError,
  type TransportFailure,
  type TransportStage,
} from "./classify.ts";
export { errorCodes as httpErrorCodes } from "./errors.ts";
export { excerpt } from "./excerpt.ts";
export {
  type AnswerHead,
  abortableSleep,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_ERROR_BODY_BYTES,
  DEFAULT_TIMEOUT_MS,
  formatBytes,
  formatDuration,
  type HttpEvent,
  type HttpResponse,
  type Method,
  type RedirectRule,
  type RequestOptions,
  type RetryPolicy,
  request,
  retryAfterMs,
} from "./request.ts";
export { createTransport, type Transport, type TransportOptions } from "./transport.ts";
