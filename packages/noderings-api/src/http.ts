/** The first part of a body, on one line, for an error message (HTML tags and scripts dropped). */
export function excerpt(text: string, max = 160): string {
  const flat = text
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (flat === "") return "(empty body)";
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** Why a connection failed, in words: the system error code anywhere down the cause chain (fetch wraps it twice). */
export function systemReason(error: unknown): string {
  const code = systemCode(error);
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the host name does not resolve";
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return "the connection was closed before the answer";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "no route to the host";
    case undefined:
      return rootMessage(error);
    default:
      return code;
  }
}

function systemCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code)) return code;
    const aggregate = current instanceof AggregateError ? current.errors[0] : undefined;
    current = aggregate ?? current.cause;
  }
  return undefined;
}

function rootMessage(error: unknown): string {
  let current = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}
