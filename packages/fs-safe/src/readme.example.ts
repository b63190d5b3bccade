// Generated from packages/fs-safe/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { ensurePrivateDir, readPrivateFile, withFileLock, writeFileSafe } from "@nodekit/fs-safe";

const dir = `${process.env.HOME}/.cache/example`;
await ensurePrivateDir(dir, { what: "the example cache" }); // 0700, yours, nothing above writable by others
const file = `${dir}/token.json`;
await withFileLock(file, async () => {
  await writeFileSafe(file, JSON.stringify({ token: "s3cret" }), { mode: 0o600 });
});
const read = await readPrivateFile(file);
console.log(read.kind); // "read"; "unsafe" for a link, another user's file, or mode 0644

export {};
