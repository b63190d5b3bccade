/**
 * An instant of the token cache file as a Date: the schema's transform (cache-schema.ts), and
 * what the reader runs after the check generated from that schema (cache.ts), without zod.
 */
export function toInstant(value: string): Date {
  return new Date(value);
}
