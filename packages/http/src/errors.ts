import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/**
 * How an HTTP exchange can fail below the answer itself: one code per class of
 * {@link classifyTransportError}. `request()` throws them as TransportErrors; the API clients
 * map each class to a code of their own (CONTROLLER_TIMEOUT, NODERINGS_UNREACHABLE, …), so a
 * command shows these only where a library caller uses `request()` directly.
 */
export const errorCodes = defineErrorCodes("http", {
  HTTP_UNREACHABLE: {
    exitCode: ExitCode.Unreachable,
    meaning: "The server could not be reached: connection refused, no route to it, or its host name does not resolve.",
  },
  HTTP_CONNECTION_LOST: {
    exitCode: ExitCode.Unreachable,
    meaning: "The connection was reset or closed before the whole answer arrived.",
  },
  HTTP_TIMEOUT: {
    exitCode: ExitCode.Unreachable,
    meaning: "The whole answer (headers and body) did not arrive within the request's deadline, or it stalled.",
  },
  HTTP_TLS_UNTRUSTED: {
    exitCode: ExitCode.Unreachable,
    meaning: "The server's https certificate does not chain to a trusted certificate authority, or names another host.",
  },
  HTTP_REDIRECT_REFUSED: {
    exitCode: ExitCode.Unreachable,
    meaning:
      "The answer redirected to another origin (scheme, host or port), somewhere the request's rule does not allow, or too many times; it was not followed.",
  },
  HTTP_RESPONSE_TOO_LARGE: {
    exitCode: ExitCode.Unreachable,
    meaning:
      "The answer's body was longer than the most read for it (counted after decompression); the message names the limit.",
  },
  HTTP_BAD_RESPONSE: {
    exitCode: ExitCode.Unreachable,
    meaning: "The answer is not valid HTTP, or its body cannot be decoded (a corrupt or unsupported Content-Encoding).",
  },
  HTTP_ABORTED: {
    exitCode: ExitCode.Interrupted,
    meaning: "The caller ended the request before the answer arrived (Ctrl-C, or the whole command's deadline).",
  },
});
