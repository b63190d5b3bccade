import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { onTestFinished } from "vitest";

/** A file's content, or its content and mode (e.g. 0o755 for a script, 0o600 for a secret). */
export type FileEntry = string | Uint8Array | { content: string | Uint8Array; mode?: number };

/**
 * An in-memory file tree: relative path → file. Parent directories are made as needed; a path
 * that ends in "/" is an empty directory.
 */
export type FileTree = Readonly<Record<string, FileEntry>>;

export interface TestDir {
  /** The temporary directory's absolute path. */
  readonly root: string;
  /** The absolute path of `rel` inside the directory (the root itself without an argument). */
  path(rel?: string): string;
  /** A file's text (UTF-8). */
  read(rel: string): Promise<string>;
  /** Writes more of the tree (overwriting files of the same path). */
  write(tree: FileTree): Promise<void>;
  /** Removes the directory now; the test's end would otherwise. Safe to call twice. */
  remove(): Promise<void>;
}

export interface TestDirOptions {
  /** The temporary directory's name prefix; default "nodekit-test-". */
  prefix?: string;
}

function inside(root: string, rel: string): string {
  const target = resolve(root, rel);
  const back = relative(root, target);
  if (rel === "" || isAbsolute(rel) || back === "" || back.startsWith(`..${sep}`) || back === "..") {
    throw new Error(`testdir: "${rel}" is not a path inside the directory`);
  }
  return target;
}

async function writeTree(root: string, tree: FileTree): Promise<void> {
  for (const [rel, entry] of Object.entries(tree)) {
    const target = inside(root, rel);
    if (rel.endsWith("/")) {
      await mkdir(target, { recursive: true });
      continue;
    }
    await mkdir(dirname(target), { recursive: true });
    const { content, mode } = typeof entry === "string" || entry instanceof Uint8Array ? { content: entry } : entry;
    await writeFile(target, content);
    if (mode !== undefined) await chmod(target, mode); // writeFile's mode is filtered by the umask
  }
}

/**
 * A fresh temporary directory holding `tree`, removed when the current test finishes (pass or
 * fail). Call it inside a test (or a hook that runs for one test), where vitest's
 * `onTestFinished` is available.
 *
 * ```ts
 * const dir = await testdir({ "site.yaml": "name: lab\n", "bin/kubectl": { content: "#!/bin/sh\n", mode: 0o755 } });
 * await run({ config: dir.path("site.yaml"), path: dir.path("bin") });
 * expect(await dir.read("site.yaml")).toContain("lab");
 * ```
 */
export async function testdir(tree: FileTree = {}, options: TestDirOptions = {}): Promise<TestDir> {
  // Registered first: outside a test it throws before anything is made.
  let made: string | undefined;
  let removed: Promise<void> | undefined;
  const remove = () => {
    removed ??= made === undefined ? Promise.resolve() : rm(made, { recursive: true, force: true });
    return removed;
  };
  onTestFinished(() => remove());
  const root = await mkdtemp(join(tmpdir(), options.prefix ?? "nodekit-test-"));
  made = root;
  try {
    await writeTree(root, tree);
  } catch (error) {
    await remove();
    throw error;
  }
  return {
    root,
    path: (rel) => (rel === undefined ? root : inside(root, rel)),
    read: async (rel) => readFile(inside(root, rel), "utf8"),
    write: (more) => writeTree(root, more),
    remove,
  };
}

/** Where a config-file test's HOME is (root), what to pass as the config's location, and the file nvkectl's config is. */
export interface ConfigHome {
  readonly root: string;
  readonly location: { env: Record<string, string>; cwd: string };
  readonly file: string;
}

/**
 * A fresh HOME for a test of nvkectl's config file, removed when the test finishes: its
 * XDG_CONFIG_HOME is under it (the file is xdg/nvkectl/config.yaml) and it holds a kubeconfig,
 * lab.kubeconfig, that a site can name.
 */
export async function configHome(prefix: string): Promise<ConfigHome> {
  const { root } = await testdir({ "lab.kubeconfig": "apiVersion: v1\nkind: Config\n" }, { prefix });
  return {
    root,
    location: { env: { HOME: root, XDG_CONFIG_HOME: join(root, "xdg") }, cwd: root },
    file: join(root, "xdg", "nvkectl", "config.yaml"),
  };
}
