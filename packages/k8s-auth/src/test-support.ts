import type { AuthEvent } from "./events.ts";
import { createTokenProvider, type TokenProviderOptions } from "./provider.ts";

/** A token provider for the site "lab" that records its events and the tokens it hands out. */
export function recordingProvider(options: Omit<TokenProviderOptions, "site"> & Partial<TokenProviderOptions>) {
  const events: AuthEvent[] = [];
  const handed: string[] = [];
  const tokens = createTokenProvider({
    site: "lab",
    log: (event) => events.push(event),
    onToken: (token) => handed.push(token),
    ...options,
  });
  return { tokens, events, handed, types: () => events.map((e) => e.type) };
}
