export {
  assertTrustedDir,
  type DirLookups,
  dirLookups,
  ensurePrivateDir,
  type PrivateDirOptions,
  type TrustOptions,
} from "./dirs.ts";
export { errorCodes as fsSafeErrorCodes } from "./errors.ts";
export { type LockOptions, lockPathOf, withFileLock } from "./lock.ts";
export type { Identity } from "./owner.ts";
export {
  assertTrustedFile,
  digestOwnFile,
  type OwnFileDigest,
  type PrivateFileRead,
  readPrivateFile,
} from "./read.ts";
export {
  checkWriteTarget,
  type NewFileWrite,
  processAlive,
  restrictFile,
  STALE_TEMP_MS,
  type WriteFileSafeOptions,
  writeFileSafe,
  writeNewFileSafe,
} from "./write.ts";
