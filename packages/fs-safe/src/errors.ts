import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** How reading and writing a file safely can be refused or fail. */
export const errorCodes = defineErrorCodes("fs-safe", {
  FILE_IS_SYMLINK: {
    exitCode: ExitCode.Conflict,
    meaning: "The file to write is a symbolic link; it is never written through (the link could point anywhere).",
  },
  FILE_NOT_REGULAR: {
    exitCode: ExitCode.Conflict,
    meaning: "The path to write or read is a directory or another special file, not a regular file.",
  },
  FILE_OWNED_BY_OTHER: {
    exitCode: ExitCode.Conflict,
    meaning: "The file to write exists and belongs to another user; it is replaced only when that is asked for.",
  },
  FILE_UNSAFE: {
    exitCode: ExitCode.Precondition,
    meaning: "A file holding settings or secrets can be changed by other users (its owner or mode); it is not used.",
  },
  DIR_UNSAFE: {
    exitCode: ExitCode.Precondition,
    meaning:
      "A directory holding settings or secrets, or one above it, belongs to another user or is writable by others; it is not used.",
  },
  FILE_LOCKED: {
    exitCode: ExitCode.Conflict,
    meaning: "Another process kept the file locked (it is changing it) for longer than the wait allows.",
  },
  FILE_LOCK_LOST: {
    exitCode: ExitCode.Conflict,
    meaning: "The lock on a file was taken over while it was being changed; another process may have written it too.",
  },
  FILE_WRITE_FAILED: {
    exitCode: ExitCode.Precondition,
    meaning: "A file could not be written (no such directory, no permission, disk full); the old file is unchanged.",
  },
});
