/**
 * Applies a JSON merge patch (RFC 7396) to a JSON value and returns the result; neither
 * input is changed. An object in the patch merges into the target's object key by key,
 * `null` removes the key, and anything else (arrays included) replaces the value. A key
 * whose value is `undefined` is not in the patch at all (JSON has no `undefined`: it is
 * what a JavaScript object built from optional fields holds for an absent one), so it
 * leaves the target's field as it is.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) {
      delete result[key];
      continue;
    }
    // Defined, not assigned: a JSON key "__proto__" is a field like any other, never the prototype.
    const current = Object.hasOwn(result, key) ? result[key] : undefined;
    Object.defineProperty(result, key, {
      value: applyMergePatch(current, value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
