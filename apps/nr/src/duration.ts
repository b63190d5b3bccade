import { UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A duration as kubectl's --timeout takes it: `90s`, `10m`, `1h30m`, `500ms`; a bare number is seconds. */
export function parseDuration(text: string, flag: string): number {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (trimmed === "" || parts.map((p) => p[0]).join("") !== trimmed) {
    throw new UserError(errorCodes.NR_DURATION_INVALID, `${flag} ${JSON.stringify(text)} is not a duration`, {
      next: `give it as e.g. ${flag} 90s, 10m or 1h30m`,
    });
  }
  return parts.reduce((sum, p) => sum + Number(p[1]) * (UNIT_MS[p[2] ?? "s"] ?? 1000), 0);
}
