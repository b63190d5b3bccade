import * as z from "zod";
import type { CacheFile } from "./cache.ts";

// The token cache file's schema: what readCache falls back to when the fast check
// (readCacheFile in cache.ts) does not accept a file, so that the problem names its fields.

const ref = z.object({ namespace: z.string().min(1), name: z.string().min(1) });
const instant = z.iso.datetime({ offset: true }).transform((value) => new Date(value));
export const cacheFileSchema: z.ZodType<CacheFile> = z.object({
  version: z.literal(1),
  site: z.string(),
  source: z.string(),
  serviceAccount: ref,
  state: z.discriminatedUnion("auth", [
    z.object({
      auth: z.literal("on"),
      audience: z.string().min(1),
      configMap: ref,
      token: z.string().min(1),
      issuedAt: instant,
      expiresAt: instant,
    }),
    z.object({ auth: z.literal("off"), checkedAt: instant, expiresAt: instant }),
  ]),
});
