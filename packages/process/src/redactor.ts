/** The placeholder every secret is replaced with in echoed commands, logs and errors. */
export const REDACTED = "[REDACTED]";

/**
 * Holds the secrets of one run (tokens, API keys, Proxmox credentials) and removes them
 * from any text before it is echoed or logged. One redactor is shared by the logger and
 * the process runner, which are the only places text leaves the process.
 */
export class Redactor {
  readonly #secrets = new Set<string>();

  /** Register a secret. Empty values are ignored; nothing else is. */
  add(secret: string | undefined | null): void {
    if (secret) this.#secrets.add(secret);
  }

  get size(): number {
    return this.#secrets.size;
  }

  redact(text: string): string {
    if (this.#secrets.size === 0 || text === "") return text;
    let out = text;
    // Longest first, so a secret that contains another is replaced whole.
    for (const secret of [...this.#secrets].sort((a, b) => b.length - a.length)) {
      out = out.split(secret).join(REDACTED);
    }
    return out;
  }
}
