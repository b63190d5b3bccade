/** The placeholder every secret is replaced with in echoed commands, logs and errors. */
export const REDACTED = "[REDACTED]";

/**
 * The shortest value redacted. Replacing a shorter one wherever it occurs would change
 * ordinary text on every line (a 3-character password is in many words, paths and IDs) and
 * give the secret away by what went missing; such a value is not redacted, and the redactor
 * reports it (the CLIs warn on stderr, without the value).
 */
export const MIN_SECRET_LENGTH = 8;

interface RedactorOptions {
  /**
   * Called for a secret shorter than {@link MIN_SECRET_LENGTH}, which is not redacted: once
   * per name `add` was given ("NODEKIT_REGISTRY_PASSWORD"), or per value for unnamed ones.
   * It never receives the value.
   */
  onShortSecret?: (what: string | undefined) => void;
}

/**
 * Holds the secrets of one run (tokens, API keys, Proxmox credentials) and removes them
 * from any text before it is echoed or logged. One redactor is shared by the logger and
 * the process runner, which are the only places text leaves the process.
 */
export class Redactor {
  readonly #secrets = new Set<string>();
  readonly #short = new Set<string>();
  readonly #onShortSecret: ((what: string | undefined) => void) | undefined;

  constructor(options: RedactorOptions = {}) {
    this.#onShortSecret = options.onShortSecret;
  }

  /**
   * Register a secret; `what` names it for the report of one too short to redact. Empty
   * values are ignored; values shorter than {@link MIN_SECRET_LENGTH} are not redacted
   * (see there) and are reported. Returns whether the value will be redacted.
   */
  add(secret: string | undefined | null, what?: string): boolean {
    if (!secret) return false;
    if (secret.length < MIN_SECRET_LENGTH) {
      // Reported once per name (a password and its base64 form are one report), or per value.
      const key = what === undefined ? `value ${secret}` : `name ${what}`;
      if (!this.#short.has(key)) {
        this.#short.add(key);
        this.#onShortSecret?.(what);
      }
      return false;
    }
    this.#secrets.add(secret);
    return true;
  }

  /** How many secrets are redacted (those too short to redact are not counted). */
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

/**
 * Fields that carry a credential whatever the redactor was told: a kubeconfig's token or key,
 * an Authorization header, a bearer token, a password or secret field (YAML, JSON, key=value).
 */
const CREDENTIAL_FIELD =
  /((?:token|client-key-data|client-certificate-data|password|secret|tokenSecret|authorization)["']?\s*[:=]\s*)("?)(?:Bearer\s+)?[^\s",]{6,}\2/gi;

/**
 * Blanks the value of every credential-looking field ({@link REDACTED}): the second pass over
 * text that leaves the machine whole (a support bundle), after {@link Redactor.redact} has
 * removed every secret it was told of.
 */
export function redactCredentialFields(text: string): string {
  return text.replace(CREDENTIAL_FIELD, (_match, key: string, quote: string) => `${key}${quote}${REDACTED}${quote}`);
}
