import { createHash } from "node:crypto";
import type { PinSet } from "./schema.ts";

/**
 * A stable digest of a pin set, `sha256:<hex>`: the same pins give the same hash whatever
 * the order of their keys, and any change to a version, URL or digest changes it. A phase
 * checkpoint records it as an input, so a resumed run notices when the pins changed.
 */
export function pinSetHash(pins: PinSet): string {
  return `sha256:${createHash("sha256").update(canonicalJson(pins)).digest("hex")}`;
}

/** JSON with object keys sorted at every level and `undefined` members left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value))
    return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(",")}}`;
}
