/** What the library did, for a debug log (`nvkectl -v`). Never carries a token. */
export interface AuthEvent {
  /** A stable name, for filtering and JSON logs. */
  readonly type: AuthEventType;
  /** One line for people: "auth ConfigMap nke-controller/nvke-auth-config forbidden; trying next". */
  readonly message: string;
  /** The same facts as data. */
  readonly fields: Readonly<Record<string, string | number | boolean>>;
}

export type AuthEventType =
  | "configmap-forbidden"
  | "configmap-not-found"
  | "audience-found"
  | "auth-off"
  | "token-minted"
  | "cache-hit"
  | "cache-auth-off"
  | "cache-miss"
  | "cache-stale"
  | "cache-ignored"
  /** The token cache could have been read or changed by another user and is not used: worth a warning. */
  | "cache-unsafe"
  | "cache-invalidated";

export type AuthLog = (event: AuthEvent) => void;

export function emit(
  log: AuthLog | undefined,
  type: AuthEventType,
  message: string,
  fields: AuthEvent["fields"] = {},
): void {
  log?.({ type, message, fields });
}
