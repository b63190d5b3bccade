import { cliKitErrorCodes, parseDuration } from "@nodekit/cli-kit";
import { UserError } from "@nodekit/errors";

/**
 * An age as kubectl prints it (k8s.io/apimachinery duration.HumanDuration): `45s`, `5m`,
 * `3m20s`, `4h12m`, `2d3h`, `400d`. A time more than a second in the future is `<invalid>`.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** The age of an RFC 3339 timestamp at `now`; undefined (printed `<none>`) without one. */
export function age(timestamp: string | undefined, now: Date): string | undefined {
  if (timestamp === undefined) return undefined;
  const then = Date.parse(timestamp);
  return Number.isNaN(then) ? undefined : humanDuration(now.getTime() - then);
}

/**
 * The durations of a command that polls (`get … -w`, `--wait`), from its flags: checked before
 * anything is read, so a typo in --timeout is a usage error, not a wait cut short. `waitMs` is
 * --timeout or, without one, `defaultTimeout`.
 */
export function waitTimings(
  flags: { "poll-interval": string; timeout?: string | undefined },
  defaultTimeout: string,
): { intervalMs: number; timeoutMs: number | undefined; waitMs: number } {
  const intervalMs = parseDuration(flags["poll-interval"], "--poll-interval");
  const timeoutMs = flags.timeout === undefined ? undefined : parseDuration(flags.timeout, "--timeout");
  return { intervalMs, timeoutMs, waitMs: timeoutMs ?? parseDuration(defaultTimeout, "--timeout") };
}

/**
 * --request-timeout (in ms) as kubectl takes it, for the kubectl calls nvkectl makes to the
 * site cluster; 0 would mean no limit at all to kubectl, so it is refused as the controller's is.
 */
export function kubectlRequestTimeout(ms: number): string {
  if (!(ms > 0)) {
    throw new UserError(cliKitErrorCodes.INVALID_DURATION, "--request-timeout must be longer than 0", {
      next: "give it as a duration such as --request-timeout 30s or 2m",
    });
  }
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${Math.ceil(ms)}ms`;
}
