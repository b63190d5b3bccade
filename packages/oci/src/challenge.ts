/** One authentication challenge from a `WWW-Authenticate` header (RFC 9110 §11.6.1). */
export interface Challenge {
  /** Lowercased: `basic`, `bearer`. */
  readonly scheme: string;
  /** Parameter names lowercased: `realm`, `service`, `scope`, `error`. */
  readonly params: Readonly<Record<string, string>>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;

/**
 * Parse a `WWW-Authenticate` value into its challenges: `Bearer realm="…",service="…",scope="…"`.
 * Quoted strings may hold commas and escaped quotes; an unparsable tail ends the list
 * rather than throwing (a registry's header is not the user's fault).
 */
export function parseChallenges(header: string): Challenge[] {
  const challenges: Challenge[] = [];
  let rest = header;
  let current: { scheme: string; params: Record<string, string> } | undefined;
  const skip = (pattern: RegExp) => {
    rest = rest.replace(pattern, "");
  };
  for (;;) {
    skip(/^[\s,]+/);
    if (rest === "") break;
    const name = TOKEN.exec(rest)?.[0];
    if (name === undefined) break;
    rest = rest.slice(name.length);
    const afterSpace = rest.replace(/^\s*/, "");
    if (current !== undefined && afterSpace.startsWith("=")) {
      rest = afterSpace.slice(1).replace(/^\s*/, "");
      let value: string;
      if (rest.startsWith('"')) {
        let i = 1;
        value = "";
        while (i < rest.length && rest[i] !== '"') {
          if (rest[i] === "\\" && i + 1 < rest.length) i++;
          value += rest[i];
          i++;
        }
        rest = rest.slice(i + 1);
      } else {
        value = TOKEN.exec(rest)?.[0] ?? "";
        rest = rest.slice(value.length);
      }
      current.params[name.toLowerCase()] = value;
      continue;
    }
    // A token not followed by "=" starts a new challenge (token68 credentials are not used by registries).
    current = { scheme: name.toLowerCase(), params: {} };
    challenges.push(current);
  }
  return challenges;
}
