import { execFileSync } from "node:child_process";

/** A second local user, for tests of what nvkectl does with files other users made. */
export interface OtherUser {
  name: string;
  uid: number;
  gid: number;
}

export type OtherUserLookup = { user: OtherUser; skip?: undefined } | { user?: undefined; skip: string };

const NAME = "nodekit-other";

function lookup(): OtherUser | undefined {
  try {
    const uid = Number(execFileSync("id", ["-u", NAME], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
    const gid = Number(execFileSync("id", ["-g", NAME], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
    return Number.isInteger(uid) && Number.isInteger(gid) ? { name: NAME, uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The second user the security tests plant files as: `nodekit-other`, a system user
 * without a home or a shell, created with useradd on first use. Only root can own files as
 * another user, so elsewhere this says why not, for `describe.skipIf(…)` to show.
 */
export function otherUser(): OtherUserLookup {
  const uid = typeof process.geteuid === "function" ? process.geteuid() : undefined;
  if (uid !== 0) return { skip: `these tests need root to own files as a second user; they run as uid ${uid}` };
  const found = lookup();
  if (found) return { user: found };
  try {
    execFileSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", NAME], {
      stdio: "ignore",
    });
  } catch {
    // Another test file may have created it at the same moment: look again below.
  }
  const made = lookup();
  return made ? { user: made } : { skip: `useradd could not create the second user ${NAME}` };
}
