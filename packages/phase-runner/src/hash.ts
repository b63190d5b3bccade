import { createHash } from "node:crypto";
import type { JsonValue } from "@nodekit/plan";

/** JSON with object keys sorted at every level: the same text for the same value, whatever the key order. */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((entry) => canonicalJson(entry)).join(",")}]`;
  const object = value as { readonly [key: string]: JsonValue };
  const keys = Object.keys(object)
    .filter((key) => object[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key] as JsonValue)}`).join(",")}}`;
}

/** `sha256:<hex>` of a value's canonical JSON: what a checkpoint records as the evidence of a phase's inputs. */
export function hashInputs(value: JsonValue): string {
  return `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex")}`;
}
