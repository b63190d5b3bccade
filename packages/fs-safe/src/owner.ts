import { readFileSync } from "node:fs";

/** Whose files count as one's own: the effective user, injectable for tests. */
export interface Identity {
  /** The user the files must belong to. Default: the process's effective uid. */
  uid?: number;
}

/** The effective uid, or undefined where there is none (Windows): every ownership check is then skipped. */
export function currentUid(identity: Identity = {}): number | undefined {
  if (identity.uid !== undefined) return identity.uid;
  return typeof process.geteuid === "function" ? process.geteuid() : undefined;
}

let overflow: number | undefined;
/**
 * The uid that files of unmapped users show inside a user namespace (65534 by default):
 * root's files look like that to a process in a container or a rootless sandbox.
 */
function overflowUid(): number {
  if (overflow === undefined) {
    try {
      overflow = Number.parseInt(readFileSync("/proc/sys/kernel/overflowuid", "utf8"), 10);
    } catch {
      overflow = 65534;
    }
    if (!Number.isInteger(overflow)) overflow = 65534;
  }
  return overflow;
}

/** Owners a directory above one's own may have: root (as it looks from here), or oneself. */
export function isTrustedOwner(owner: number, uid: number): boolean {
  return owner === uid || owner === 0 || owner === overflowUid();
}

/** "0644" */
export const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, "0");

/** A user's name for messages: from /etc/passwd when it has one, else "uid N". */
export function ownerName(uid: number): string {
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const [name, , id] = line.split(":");
      if (id !== undefined && Number(id) === uid && name) return `${name} (uid ${uid})`;
    }
  } catch {
    // No passwd file: the number is all there is.
  }
  return `uid ${uid}`;
}

export function errnoCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined;
}
