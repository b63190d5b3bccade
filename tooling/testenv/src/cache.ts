import { access, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/** `$NODEKIT_CACHE`, else `${XDG_CACHE_HOME:-~/.cache}/nodekit`: where the test tier caches what it builds. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.NODEKIT_CACHE) return env.NODEKIT_CACHE;
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache"), "nodekit");
}

/**
 * `dir` in a cache, built once by `build` (into a directory of its own beside it, then renamed
 * into place, so a directory there is complete) and reused after. When two processes build at
 * once, the second to finish keeps the first one's copy: the content is the same.
 */
export async function buildOnce(dir: string, build: (tmp: string) => Promise<void>): Promise<string> {
  const complete = () =>
    access(join(dir, ".complete")).then(
      () => true,
      () => false,
    );
  if (await complete()) return dir;
  const tmp = `${dir}.${process.pid}.tmp`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  try {
    await build(tmp);
    await writeFile(join(tmp, ".complete"), `${new Date().toISOString()}\n`);
    await rename(tmp, dir);
  } catch (error) {
    await rm(tmp, { recursive: true, force: true });
    if (!(await complete())) throw error;
  }
  return dir;
}
