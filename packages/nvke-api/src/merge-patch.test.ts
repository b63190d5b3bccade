import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { applyMergePatch, isPlainObject } from "./merge-patch.ts";

// RFC 7396 (which obsoletes RFC 7386): what a JSON merge patch does, as properties over
// random documents and random patches, plus the RFC's own examples (its appendix A).

/** A JSON merge patch: an object whose values are null (remove), a nested patch, any JSON value, or absent (undefined). */
const mergePatch: fc.Arbitrary<Record<string, unknown>> = fc.letrec((tie) => ({
  patch: fc.dictionary(
    fc.oneof(fc.constantFrom("a", "b", "labels", "description", "__proto__"), fc.string({ maxLength: 4 })),
    fc.oneof(
      { weight: 2, arbitrary: fc.constant(null) },
      { weight: 2, arbitrary: fc.constant(undefined) },
      { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
      { weight: 3, arbitrary: tie("patch") },
    ),
    { maxKeys: 5 },
  ),
})).patch as fc.Arbitrary<Record<string, unknown>>;

const document = fc.dictionary(
  fc.oneof(fc.constantFrom("a", "b", "labels", "description", "__proto__"), fc.string({ maxLength: 4 })),
  fc.jsonValue({ maxDepth: 3 }),
  { maxKeys: 6 },
);

/** Checks, field by field and all the way down, that the result is what RFC 7396 says. */
function expectMerged(target: unknown, patch: Record<string, unknown>, result: unknown): void {
  expect(isPlainObject(result)).toBe(true);
  const merged = result as Record<string, unknown>;
  const base = isPlainObject(target) ? target : {};
  const named = new Set(Object.keys(patch).filter((key) => patch[key] !== undefined));
  // Every field the patch does not name is unchanged.
  for (const key of Object.keys(base)) {
    if (!named.has(key)) expect(Object.getOwnPropertyDescriptor(merged, key)?.value).toEqual(base[key]);
  }
  // Nothing appears that neither the document nor the patch has.
  for (const key of Object.keys(merged)) expect(Object.hasOwn(base, key) || named.has(key)).toBe(true);
  for (const key of named) {
    const value = patch[key];
    const own = Object.getOwnPropertyDescriptor(merged, key);
    if (value === null) expect(own).toBeUndefined();
    else if (isPlainObject(value)) expectMerged(Object.hasOwn(base, key) ? base[key] : undefined, value, own?.value);
    else expect(own?.value).toEqual(value);
  }
}

describe("applyMergePatch (RFC 7396)", () => {
  test("for any document and any merge patch, every field the patch does not name is unchanged", () => {
    fc.assert(
      fc.property(document, mergePatch, (target, patch) => {
        const before = structuredClone(target);
        const patchBefore = structuredClone(patch);
        const result = applyMergePatch(target, patch);
        expectMerged(target, patch, result);
        // Neither input is changed, and no prototype is touched.
        expect(target).toEqual(before);
        expect(patch).toEqual(patchBefore);
        expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
      }),
      { numRuns: 500 },
    );
  });

  test("a key that is undefined is not in the patch: it leaves the field alone (it never clears it)", () => {
    const cluster = { description: "team A", labels: { x: "1" } };
    expect(applyMergePatch(cluster, { labels: { y: "2" }, description: undefined })).toEqual({
      description: "team A",
      labels: { x: "1", y: "2" },
    });
    expect(applyMergePatch(cluster, { description: "b", labels: undefined })).toEqual({
      description: "b",
      labels: { x: "1" },
    });
  });

  test("applying the same patch twice gives what applying it once gives", () => {
    fc.assert(
      fc.property(document, mergePatch, (target, patch) => {
        const once = applyMergePatch(target, patch);
        expect(applyMergePatch(once, patch)).toEqual(once);
      }),
      { numRuns: 300 },
    );
  });

  test.each([
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [
      ["a", "b"],
      ["c", "d"],
      ["c", "d"],
    ],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])("RFC 7396 appendix A: %j patched with %j is %j", (target, patch, expected) => {
    expect(applyMergePatch(target, patch)).toEqual(expected);
  });

  test("a JSON key __proto__ is a field like any other", () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const result = applyMergePatch({}, patch) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(result, "__proto__")?.value).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
