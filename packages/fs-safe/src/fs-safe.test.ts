import { chmod, chown, lstat, readdir, readFile, readlink, stat, symlink, utimes } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { deadPid, holdingChild, otherUser, testdir, userErrorOf } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { assertTrustedDir, dirLookups, ensurePrivateDir } from "./dirs.ts";
import { lockPathOf, withFileLock } from "./lock.ts";
import { assertTrustedFile, digestOwnFile, readPrivateFile } from "./read.ts";
import { checkWriteTarget, restrictFile, STALE_TEMP_MS, writeFileSafe, writeNewFileSafe } from "./write.ts";

const mode = async (path: string) => (await stat(path)).mode & 0o777;
const other = otherUser();
const asRoot = typeof process.geteuid === "function" && process.geteuid() === 0;

describe("writeFileSafe", () => {
  test("writes the whole file with its mode whatever the umask, and leaves no temporary file", async () => {
    const dir = await testdir({ "old.txt": { content: "old", mode: 0o644 } });
    await writeFileSafe(dir.path("old.txt"), "new\n", { mode: 0o600 });
    await writeFileSafe(dir.path("fresh.txt"), "fresh\n", { mode: 0o640 });

    expect(await dir.read("old.txt")).toBe("new\n");
    expect(await mode(dir.path("old.txt"))).toBe(0o600);
    expect(await mode(dir.path("fresh.txt"))).toBe(0o640);
    expect((await readdir(dir.root)).sort()).toEqual(["fresh.txt", "old.txt"]);
  });

  test("never writes through a symbolic link: the link and what it points to stay as they were", async () => {
    const dir = await testdir({ "victim.txt": "precious\n", "cache/": "" });
    await symlink(dir.path("victim.txt"), dir.path("cache/token.json"));

    const error = await userErrorOf(writeFileSafe(dir.path("cache/token.json"), "secret", { mode: 0o600 }));

    expect(error.code).toBe("FILE_IS_SYMLINK");
    expect(error.exitCode).toBe(5);
    expect(await dir.read("victim.txt")).toBe("precious\n");
    expect(await readlink(dir.path("cache/token.json"))).toBe(dir.path("victim.txt"));
  });

  test("refuses a directory in the file's place", async () => {
    const dir = await testdir({ "out/": "" });
    expect((await userErrorOf(writeFileSafe(dir.path("out"), "x", { mode: 0o600 }))).code).toBe("FILE_NOT_REGULAR");
  });

  test("says why when the directory is missing", async () => {
    const dir = await testdir({});
    const error = await userErrorOf(writeFileSafe(dir.path("no/such/file"), "x", { mode: 0o600 }));
    expect(error.code).toBe("FILE_WRITE_FAILED");
    expect(error.message).toBe(`cannot write the file ${dir.path("no/such/file")}: ENOENT`);
    expect(error.why).toBe("its directory does not exist");
  });

  test("removes the temporary files a killed writer left, and only those", async () => {
    const dir = await testdir({ "config.yaml": "a: 1\n", "config.yaml.bak": "keep\n" });
    const dead = await deadPid();
    const stale = `.config.yaml.${dead}.0123456789ab.tmp`;
    const live = `.config.yaml.${process.ppid}.0123456789ab.tmp`;
    const old = `.config.yaml.${process.ppid}.ba9876543210.tmp`;
    const otherFile = `.other.yaml.${dead}.0123456789ab.tmp`;
    await dir.write({ [stale]: "torn", [live]: "in progress", [old]: "forgotten", [otherFile]: "not ours to judge" });
    const longAgo = (Date.now() - STALE_TEMP_MS - 60_000) / 1000;
    await utimes(dir.path(old), longAgo, longAgo);

    await writeFileSafe(dir.path("config.yaml"), "a: 2\n", { mode: 0o600 });

    expect((await readdir(dir.root)).sort()).toEqual([live, otherFile, "config.yaml", "config.yaml.bak"].sort());
  });
});

describe.skipIf(other.skip !== undefined)(`against a second local user (${other.skip ?? "nodekit-other"})`, () => {
  const user = other.user ?? { uid: -1, gid: -1, name: "" };

  test("refuses to replace a file another user owns, unless asked; then the new file is ours, never theirs", async () => {
    const dir = await testdir({ "shared/x.kubeconfig": "theirs\n" });
    await chmod(dir.path("shared"), 0o1777);
    await chown(dir.path("shared/x.kubeconfig"), user.uid, user.gid);

    const refused = await userErrorOf(writeFileSafe(dir.path("shared/x.kubeconfig"), "admin", { mode: 0o600 }));
    expect(refused.code).toBe("FILE_OWNED_BY_OTHER");
    expect(refused.message).toBe(
      `the file ${dir.path("shared/x.kubeconfig")} belongs to nodekit-other (uid ${user.uid}); it was not replaced`,
    );
    expect(await dir.read("shared/x.kubeconfig")).toBe("theirs\n");

    await writeFileSafe(dir.path("shared/x.kubeconfig"), "admin", { mode: 0o600, replaceOthers: true });
    const info = await stat(dir.path("shared/x.kubeconfig"));
    expect({ uid: info.uid, mode: info.mode & 0o777 }).toEqual({ uid: 0, mode: 0o600 });
    expect(await dir.read("shared/x.kubeconfig")).toBe("admin");
  });

  test("leaves another user's temporary files alone", async () => {
    const dir = await testdir({});
    const theirs = `.f.${await deadPid()}.0123456789ab.tmp`;
    await dir.write({ [theirs]: "x" });
    await chown(dir.path(theirs), user.uid, user.gid);
    await writeFileSafe(dir.path("f"), "y", { mode: 0o600 });
    expect((await readdir(dir.root)).sort()).toEqual([theirs, "f"].sort());
  });

  test("a private directory another user made is refused, as ssh refuses their ~/.ssh", async () => {
    const dir = await testdir({ "cache/nvkectl/tokens/": "" });
    await chown(dir.path("cache/nvkectl/tokens"), user.uid, user.gid);

    const error = await userErrorOf(ensurePrivateDir(dir.path("cache/nvkectl/tokens"), { what: "the token cache" }));
    expect(error.code).toBe("DIR_UNSAFE");
    expect(error.exitCode).toBe(9);
    expect(error.message).toBe(`the token cache ${dir.path("cache/nvkectl/tokens")} is not safe`);
    expect(error.why).toBe(
      `it belongs to nodekit-other (uid ${user.uid}), not to root (uid 0), so another user could change or replace what is in it`,
    );
  });

  test("a directory above that another user owns is refused too; root's and one's own are fine", async () => {
    const dir = await testdir({ "home/alice/.cache/": "" });
    await chown(dir.path("home/alice"), user.uid, user.gid);
    const error = await userErrorOf(ensurePrivateDir(dir.path("home/alice/.cache/nvkectl/tokens")));
    expect(error.code).toBe("DIR_UNSAFE");
    expect(error.facts.unsafe).toBe(dir.path("home/alice"));
  });

  test("a token file another user owns is not used", async () => {
    const dir = await testdir({ "t.json": { content: "{}", mode: 0o600 } });
    await chown(dir.path("t.json"), user.uid, user.gid);
    expect(await readPrivateFile(dir.path("t.json"))).toEqual({
      kind: "unsafe",
      fault: "owner",
      reason: `${dir.path("t.json")} belongs to nodekit-other (uid ${user.uid})`,
    });
  });

  test("a settings file another user owns, or a directory of it, is refused", async () => {
    const dir = await testdir({ "theirs/config.yaml": "x: 1\n", "mine/config.yaml": "x: 1\n" });
    await chown(dir.path("theirs/config.yaml"), user.uid, user.gid);
    expect((await userErrorOf(assertTrustedFile(dir.path("theirs/config.yaml")))).code).toBe("FILE_UNSAFE");
    await chown(dir.path("mine"), user.uid, user.gid);
    expect((await userErrorOf(assertTrustedFile(dir.path("mine/config.yaml")))).code).toBe("DIR_UNSAFE");
  });
});

describe("writeNewFileSafe", () => {
  async function* chunks(...parts: string[]) {
    for (const part of parts) yield part;
  }

  test("streams a new file whole, with its mode whatever the umask, and leaves no temporary file", async () => {
    const dir = await testdir({});
    expect(await writeNewFileSafe(dir.path("bundle.tar.gz"), () => chunks("a", "b", "c"), { mode: 0o600 })).toEqual({
      kind: "written",
    });
    expect(await dir.read("bundle.tar.gz")).toBe("abc");
    expect(await mode(dir.path("bundle.tar.gz"))).toBe(0o600);
    expect(await readdir(dir.root)).toEqual(["bundle.tar.gz"]);
  });

  test("never replaces what is there: a file, or a link (whose target stays as it was)", async () => {
    const dir = await testdir({ "old.tar.gz": "old", "victim.txt": "precious\n" });
    await symlink(dir.path("victim.txt"), dir.path("link.tar.gz"));
    expect(await writeNewFileSafe(dir.path("old.tar.gz"), () => chunks("new"), { mode: 0o600 })).toEqual({
      kind: "exists",
    });
    expect(await writeNewFileSafe(dir.path("link.tar.gz"), () => chunks("new"), { mode: 0o600 })).toEqual({
      kind: "exists",
    });
    expect(await dir.read("old.tar.gz")).toBe("old");
    expect(await dir.read("victim.txt")).toBe("precious\n");
    expect((await readdir(dir.root)).sort()).toEqual(["link.tar.gz", "old.tar.gz", "victim.txt"]);
  });

  test("a source that fails midway leaves no file at all, not half of one", async () => {
    const dir = await testdir({});
    async function* failing() {
      yield "half of it";
      throw new Error("the archiver failed");
    }
    const error = await userErrorOf(writeNewFileSafe(dir.path("bundle.tar.gz"), failing, { mode: 0o600 }));
    expect(error.code).toBe("FILE_WRITE_FAILED");
    expect(await readdir(dir.root)).toEqual([]);
  });
});

describe("restrictFile and checkWriteTarget (a file another program writes)", () => {
  test("narrows a file's mode; a missing file passes the check", async () => {
    const dir = await testdir({ "site.kubeconfig": { content: "k", mode: 0o644 } });
    await restrictFile(dir.path("site.kubeconfig"), 0o600);
    expect(await mode(dir.path("site.kubeconfig"))).toBe(0o600);
    await checkWriteTarget(dir.path("not-yet.kubeconfig"));
  });

  test("never changes the mode of what a link points to", async () => {
    const dir = await testdir({ "victim.txt": { content: "precious\n", mode: 0o644 } });
    await symlink(dir.path("victim.txt"), dir.path("site.kubeconfig"));
    expect((await userErrorOf(checkWriteTarget(dir.path("site.kubeconfig")))).code).toBe("FILE_IS_SYMLINK");
    expect((await userErrorOf(restrictFile(dir.path("site.kubeconfig"), 0o600))).code).toBe("FILE_IS_SYMLINK");
    expect(await mode(dir.path("victim.txt"))).toBe(0o644);
  });

  test.skipIf(other.skip !== undefined)(`refuses another user's file (${other.skip ?? "nodekit-other"})`, async () => {
    const dir = await testdir({ "site.kubeconfig": { content: "theirs", mode: 0o644 } });
    await chown(dir.path("site.kubeconfig"), other.user?.uid ?? 0, other.user?.gid ?? 0);
    expect((await userErrorOf(checkWriteTarget(dir.path("site.kubeconfig")))).code).toBe("FILE_OWNED_BY_OTHER");
    expect((await userErrorOf(restrictFile(dir.path("site.kubeconfig"), 0o600))).code).toBe("FILE_OWNED_BY_OTHER");
    expect(await mode(dir.path("site.kubeconfig"))).toBe(0o644);
  });
});

describe("private directories", () => {
  test("are created 0700, and an existing one is narrowed when asked", async () => {
    const dir = await testdir({ "wide/": "" });
    await chmod(dir.path("wide"), 0o755);
    await ensurePrivateDir(dir.path("a/b/c"));
    await ensurePrivateDir(dir.path("wide"), { narrow: true });
    expect(await mode(dir.path("a/b/c"))).toBe(0o700);
    expect(await mode(dir.path("wide"))).toBe(0o700);
  });

  test("one that every user may write to is refused; a sticky directory above (/tmp) is fine", async () => {
    const dir = await testdir({ "open/": "", "shared/": "" });
    await chmod(dir.path("open"), 0o777);
    await chmod(dir.path("shared"), 0o777);

    const own = await userErrorOf(ensurePrivateDir(dir.path("open")));
    expect(own.why).toBe(
      "every user may write to it (mode 0777), so another user could change or replace what is in it",
    );
    const above = await userErrorOf(ensurePrivateDir(dir.path("shared/nvkectl")));
    expect(above.message).toBe(
      `the directory ${dir.path("shared/nvkectl")} is inside ${dir.path("shared")}, which is not safe`,
    );

    await chmod(dir.path("shared"), 0o1777);
    await ensurePrivateDir(dir.path("shared/nvkectl"));
  });

  test("a symbolic link to a private directory is followed and its target checked", async () => {
    const dir = await testdir({ "real/": "", "open/": "" });
    await chmod(dir.path("real"), 0o700);
    await chmod(dir.path("open"), 0o777);
    await symlink(dir.path("real"), dir.path("link"));
    await symlink(dir.path("open"), dir.path("bad"));
    await assertTrustedDir(dir.path("link"), { own: true });
    expect((await userErrorOf(assertTrustedDir(dir.path("bad"), { own: true }))).code).toBe("DIR_UNSAFE");
  });

  test("shared lookups answer each path once, and the checks through them judge as those without", async () => {
    const dir = await testdir({ "cache/a/": "", "cache/b/": "", "cache/open/": "" });
    for (const sub of ["cache", "cache/a", "cache/b"]) await chmod(dir.path(sub), 0o700);
    await chmod(dir.path("cache/open"), 0o777);
    const lookups = dirLookups();
    expect(lookups.lstat(dir.path("cache"))).toBe(lookups.lstat(dir.path("cache")));
    expect(lookups.realpath(dir.path("cache"))).toBe(lookups.realpath(dir.path("cache")));
    await assertTrustedDir(dir.path("cache/a"), { own: true, lookups });
    await assertTrustedDir(dir.path("cache/b"), { own: true, lookups });
    const error = await userErrorOf(assertTrustedDir(dir.path("cache/open"), { own: true, lookups }));
    expect(error.code).toBe("DIR_UNSAFE");
    expect(error.message).toBe(`the directory ${dir.path("cache/open")} is not safe`);
    // A missing directory is answered (ENOENT) once too, and is no fault.
    await assertTrustedDir(dir.path("cache/none"), { own: true, lookups });
    expect(await lookups.lstat(dir.path("cache/none")).catch((e: NodeJS.ErrnoException) => e.code)).toBe("ENOENT");
  });
});

describe("readPrivateFile", () => {
  test("reads a file only its owner can read", async () => {
    const dir = await testdir({ "t.json": { content: "{}", mode: 0o600 } });
    expect(await readPrivateFile(dir.path("t.json"))).toEqual({ kind: "read", data: Buffer.from("{}") });
    expect(await readPrivateFile(dir.path("none.json"))).toEqual({ kind: "missing" });
  });

  test.runIf(asRoot || process.platform !== "win32")(
    "refuses a world-readable file, as ssh refuses a loose key",
    async () => {
      const dir = await testdir({ "t.json": { content: "{}", mode: 0o644 } });
      expect(await readPrivateFile(dir.path("t.json"))).toEqual({
        kind: "unsafe",
        fault: "mode",
        reason: `${dir.path("t.json")} is readable or writable by other users (mode 0644)`,
      });
    },
  );

  test("never follows a symbolic link", async () => {
    const dir = await testdir({ "target.json": { content: "{}", mode: 0o600 } });
    await symlink(dir.path("target.json"), dir.path("t.json"));
    expect(await readPrivateFile(dir.path("t.json"))).toMatchObject({ kind: "unsafe", fault: "link" });
  });
});

describe("digestOwnFile", () => {
  test("hashes a program of one's own that others may run but not change, in chunks, whatever its size", async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
    const dir = await testdir({ "bin/tool": { content: big.toString("latin1"), mode: 0o755 } });
    const { createHash } = await import("node:crypto");
    expect(await digestOwnFile(dir.path("bin/tool"))).toEqual({
      kind: "hashed",
      sha256: createHash("sha256")
        .update(Buffer.from(big.toString("latin1"), "latin1"))
        .digest("hex"),
      bytes: big.length,
    });
    expect(await digestOwnFile(dir.path("bin/none"))).toEqual({ kind: "missing" });
  });

  test("refuses a link, and a program others may change", async () => {
    const dir = await testdir({ "real/tool": { content: "#!/bin/sh\n", mode: 0o755 }, "bin/": "" });
    await symlink(dir.path("real/tool"), dir.path("bin/tool"));
    expect(await digestOwnFile(dir.path("bin/tool"))).toMatchObject({ kind: "unsafe", fault: "link" });
    await chmod(dir.path("real/tool"), 0o775);
    expect(await digestOwnFile(dir.path("real/tool"))).toEqual({
      kind: "unsafe",
      fault: "mode",
      reason: `${dir.path("real/tool")} is writable by other users (mode 0775)`,
    });
  });

  test.skipIf(other.skip !== undefined)(
    `refuses another user's program (${other.skip ?? "nodekit-other"})`,
    async () => {
      const user = other.user ?? { uid: -1, gid: -1 };
      const dir = await testdir({ "bin/tool": { content: "#!/bin/sh\n", mode: 0o755 } });
      await chown(dir.path("bin/tool"), user.uid, user.gid);
      expect(await digestOwnFile(dir.path("bin/tool"))).toMatchObject({ kind: "unsafe", fault: "owner" });
    },
  );
});

describe("assertTrustedFile", () => {
  test("accepts one's own file, also through a link, and a missing one", async () => {
    const dir = await testdir({ "dotfiles/config.yaml": "x: 1\n", "conf/": "" });
    await symlink(dir.path("dotfiles/config.yaml"), dir.path("conf/config.yaml"));
    await assertTrustedFile(dir.path("conf/config.yaml"));
    await assertTrustedFile(dir.path("conf/none.yaml"));
  });

  test("refuses a file others may write to", async () => {
    const dir = await testdir({ "config.yaml": { content: "x: 1\n", mode: 0o666 } });
    const error = await userErrorOf(assertTrustedFile(dir.path("config.yaml"), { what: "the site configuration" }));
    expect(error.message).toBe(`the site configuration ${dir.path("config.yaml")} is not safe to use`);
    expect(error.why).toBe("every user may write to it (mode 0666), so another user could have changed what it says");
  });
});

describe("withFileLock", () => {
  test("20 concurrent load → change → write cycles keep every change", async () => {
    const dir = await testdir({ "counter.json": "[]" });
    const file = dir.path("counter.json");
    await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        withFileLock(file, async () => {
          const list = JSON.parse(await readFile(file, "utf8")) as number[];
          await new Promise((resolve) => setTimeout(resolve, 2));
          await writeFileSafe(file, JSON.stringify([...list, index]), { mode: 0o600 });
        }),
      ),
    );
    const list = JSON.parse(await readFile(file, "utf8")) as number[];
    expect(list.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, index) => index));
    await expect(lstat(lockPathOf(file))).rejects.toMatchObject({ code: "ENOENT" });
  });

  test("takes over the lock of a process killed with SIGKILL once it is stale", async () => {
    const dir = await testdir({});
    const file = dir.path("state.json");
    const holder = await holdLock(file);
    holder.kill("SIGKILL");
    await new Promise((resolve) => holder.once("exit", resolve));
    expect((await lstat(lockPathOf(file))).isDirectory()).toBe(true);

    const ran = await withFileLock(file, async () => "ran", { staleMs: 2_000, waitMs: 20_000 });
    expect(ran).toBe("ran");
  });

  test("gives up with FILE_LOCKED while a live process holds it", async () => {
    const dir = await testdir({});
    const file = dir.path("state.json");
    const holder = await holdLock(file);
    try {
      const error = await userErrorOf(withFileLock(file, async () => "ran", { waitMs: 300, what: "the state" }));
      expect(error.code).toBe("FILE_LOCKED");
      expect(error.exitCode).toBe(5);
      expect(error.message).toBe(`the state ${file} is locked by another process`);
    } finally {
      holder.kill("SIGKILL");
    }
  });
});

/** A child process that takes the lock on `file` and holds it until killed. */
async function holdLock(file: string) {
  const lockModule = fileURLToPath(new URL("./lock.ts", import.meta.url));
  const { child } = await holdingChild(
    `const { withFileLock } = await import(${JSON.stringify(lockModule)});
     await withFileLock(${JSON.stringify(file)}, () => { process.stdout.write("locked\\n"); setInterval(() => {}, 1000); return new Promise(() => {}); });`,
  );
  return child;
}
