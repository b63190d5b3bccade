import { BlockList, isIP } from "node:net";

/**
 * True for the loopback addresses (127.0.0.0/8, ::1, IPv4-mapped loopback) and
 * `localhost`, where a token sent in clear text never leaves the machine.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "")
    .toLowerCase();
  if (host === "localhost") return true;
  const family = isIP(host);
  if (family === 0) return false;
  const loopback = new BlockList();
  loopback.addSubnet("127.0.0.0", 8, "ipv4");
  loopback.addAddress("::1", "ipv6");
  return loopback.check(host, family === 6 ? "ipv6" : "ipv4");
}

/**
 * The warning for a controller API reached over plain HTTP at a non-loopback address:
 * the CLI sends a bearer token to it. Undefined when there is nothing to warn about
 * (https, loopback, or not a URL at all; validation reports that).
 */
export function plainHttpWarning(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "http:" || isLoopbackHost(parsed.hostname)) return undefined;
  return (
    `${parsed.origin} is plain HTTP: a bearer token will be sent in clear text to ${parsed.host}; ` +
    "use it from a trusted network only, or put a TLS endpoint in front of it and name that"
  );
}
