import * as z from "zod";
import { toInstant } from "./instant.ts";

// The token cache file's schema: readCache checks every file with the check generated from it
// (cache.generated.ts) and loads it only for a file that check does not accept (a file it does
// not accept either is replaced; the reason names its fields, never its contents).

const ref = z.object({ namespace: z.string().min(1), name: z.string().min(1) });
const instant = z.iso.datetime({ offset: true }).transform(toInstant);
const entrySchema = z.discriminatedUnion("auth", [
  z.object({
    auth: z.literal("on"),
    audience: z.string().min(1),
    /** The auth ConfigMap the audience came from. */
    configMap: ref,
    token: z.string().min(1),
    issuedAt: instant,
    expiresAt: instant,
  }),
  /** No auth ConfigMap existed when this was written; believed until expiresAt. */
  z.object({ auth: z.literal("off"), checkedAt: instant, expiresAt: instant }),
]);

export const cacheFileSchema = z.object({
  version: z.literal(1),
  site: z.string(),
  /**
   * Which cluster credentials the entry came from ("file:/abs/path" or "server:… user:…").
   * An entry written for another kubeconfig is not used.
   */
  source: z.string(),
  serviceAccount: ref,
  state: entrySchema,
});

/** The file as JSON has it (instants as text), and as the schema returns it. */
export type CacheFileJson = z.input<typeof cacheFileSchema>;
export type CacheFile = z.output<typeof cacheFileSchema>;

/** A cached answer: a token (auth on), or that no auth ConfigMap existed (auth off). */
export type CacheEntry = Readonly<z.output<typeof entrySchema>>;
