import * as z from "zod";

// The token cache file's schema: readCache checks every file with it (a file it does not
// accept is replaced; the reason names its fields, never its contents).

const ref = z.object({ namespace: z.string().min(1), name: z.string().min(1) });
const instant = z.iso.datetime({ offset: true }).transform((value) => new Date(value));
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

/** A cached answer: a token (auth on), or that no auth ConfigMap existed (auth off). */
export type CacheEntry = Readonly<z.output<typeof entrySchema>>;
