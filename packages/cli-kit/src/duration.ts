import { UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration as kubectl's --timeout takes it: `90s`, `10m`, `1h30m`, `500ms`; a bare
 * number is seconds. Throws INVALID_DURATION (Usage) for anything else.
 */
export function parseDuration(text: string, flag: string): number {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.length > 0 && parts.map((p) => p[0]).join("") === trimmed) {
    return parts.reduce((sum, [, value, unit]) => sum + Number(value) * (UNIT_MS[unit ?? "s"] ?? 1000), 0);
  }
  throw new UserError(errorCodes.INVALID_DURATION, `${flag} ${JSON.stringify(text)} is not a duration`, {
    next: `give it as a number with a unit, as kubectl does: ${flag} 90s, ${flag} 10m, ${flag} 1h30m`,
  });
}
