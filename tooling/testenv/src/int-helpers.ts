import { execFile } from "node:child_process";
import { promisify } from "node:util";

// Shared by this package's *.int.test.ts files only.

export const run = promisify(execFile);
