import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { execa, type ResultPromise } from "execa";
import { compare } from "semver";
import type { MirroredPackage } from "./mirror.ts";
import { tarballName } from "./mirror.ts";

// A verdaccio of the caller's own on 127.0.0.1: its config, storage and users in a directory
// the caller gives, no uplinks (it serves only what is published to it, and never reaches
// another registry), its own HOME. Used by the install tier (test/install.int.test.ts) and by
// `pnpm release --registry` rehearsals.

export interface LocalRegistry {
  /** http://127.0.0.1:PORT/ */
  url: string;
  /** A token of a user made for this run, good for publishing. */
  token: string;
  /** An .npmrc naming only this registry, with the token; for npm_config_userconfig. */
  npmrc: string;
  stop(): Promise<void>;
}

const MAIN = fileURLToPath(new URL("./verdaccio-main.ts", import.meta.url));

function config(dir: string): string {
  return `# Written by tooling/packaging/src/registry.ts: a registry on 127.0.0.1 with no uplinks.
storage: ${dir}/storage
auth:
  htpasswd:
    file: ${dir}/htpasswd
    max_users: 100
uplinks: {}
packages:
  "**":
    access: $all
    publish: $authenticated
    unpublish: $authenticated
web:
  enable: false
# API tokens are JWTs, checked by their signature. A legacy (AES) token carries the password,
# which the htpasswd plugin checks again with bcrypt on every request an npm client
# authenticates: 47 of this registry's 49 CPU-s in the install tier went to bcryptjs.
security:
  api:
    jwt:
      sign:
        expiresIn: 1h
max_body_size: 200mb
log: { type: stdout, format: json, level: error }
`;
}

/**
 * Starts verdaccio (from this package's devDependencies) with everything under `dir`, its
 * storage holding `seed` (third-party packages, mirror.ts) from the start.
 */
export async function startLocalRegistry(dir: string, seed: readonly MirroredPackage[] = []): Promise<LocalRegistry> {
  await seedStorage(join(dir, "storage"), seed);
  const configFile = `${dir}/config.yaml`;
  await writeFile(configFile, config(dir));
  const child: ResultPromise = execa(process.execPath, [MAIN, configFile], {
    env: { HOME: dir, PATH: process.env.PATH ?? "", NODE_ENV: "production" },
    extendEnv: false,
    stdio: ["ignore", "pipe", "pipe"],
    reject: false,
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      if (line.startsWith('{"port":')) resolve((JSON.parse(line) as { port: number }).port);
    });
    void child.then((result) => reject(new Error(`verdaccio exited (${result.exitCode}) before listening: ${stderr}`)));
  });
  const url = `http://127.0.0.1:${port}/`;
  const stop = async () => {
    child.kill("SIGTERM");
    await child;
  };
  try {
    const token = await addUser(url, "release", "release-password-for-this-run");
    const npmrc = `${dir}/npmrc`;
    await writeFile(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\n`, { mode: 0o600 });
    return {
      url,
      token,
      npmrc,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function addUser(url: string, name: string, password: string): Promise<string> {
  const response = await fetch(new URL(`-/user/org.couchdb.user:${name}`, url), {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ _id: `org.couchdb.user:${name}`, name, password, type: "user", roles: [] }),
  });
  const body = (await response.json()) as { token?: string };
  if (!response.ok || body.token === undefined)
    throw new Error(`verdaccio refused a new user: HTTP ${response.status}`);
  return body.token;
}

/**
 * Lays mirrored packages into verdaccio's storage as its local storage keeps a published
 * package (<storage>/<name>/package.json beside its tarballs, the names listed in
 * .verdaccio-db.json), before it starts: a registry of a few hundred packages is ready in a
 * second, where publishing them one PUT at a time takes minutes. verdaccio serves them as it
 * serves what was published to it (it rewrites each tarball URL to the address asked).
 */
async function seedStorage(storage: string, packages: readonly MirroredPackage[]): Promise<void> {
  const byName = new Map<string, MirroredPackage[]>();
  for (const pkg of packages) byName.set(pkg.name, [...(byName.get(pkg.name) ?? []), pkg]);
  const now = new Date().toISOString();
  for (const [name, versions] of byName) {
    const dir = join(storage, name);
    await mkdir(dir, { recursive: true });
    const sorted = [...versions].sort((a, b) => compare(a.version, b.version));
    const packument = {
      name,
      versions: Object.fromEntries(sorted.map((pkg) => [pkg.version, publishedManifest(pkg)])),
      time: { modified: now, created: now, ...Object.fromEntries(sorted.map((pkg) => [pkg.version, now])) },
      users: {},
      "dist-tags": { latest: sorted.at(-1)?.version },
      _uplinks: {},
      _distfiles: {},
      _attachments: Object.fromEntries(
        sorted.map((pkg) => [tarballName(pkg.name, pkg.version), { shasum: pkg.shasum, version: pkg.version }]),
      ),
      _rev: `1-${sorted
        .map((pkg) => pkg.shasum)
        .join("")
        .slice(0, 16)}`,
      _id: name,
      readme: "",
    };
    for (const pkg of sorted) await copyFile(pkg.tarball, join(dir, tarballName(pkg.name, pkg.version)));
    await writeFile(join(dir, "package.json"), JSON.stringify(packument));
  }
  await writeFile(join(storage, ".verdaccio-db.json"), JSON.stringify({ list: [...byName.keys()], secret: "" }));
}

/** A mirrored package's manifest as a registry serves it: npm's install-time fields left out, `dist` added. */
function publishedManifest(pkg: MirroredPackage): Record<string, unknown> {
  const manifest: Record<string, unknown> = { ...pkg.manifest };
  for (const key of Object.keys(manifest)) if (key.startsWith("_")) delete manifest[key];
  return {
    ...manifest,
    _id: `${pkg.name}@${pkg.version}`,
    dist: {
      tarball: `http://127.0.0.1/${pkg.name}/-/${tarballName(pkg.name, pkg.version)}`,
      integrity: pkg.integrity,
      shasum: pkg.shasum,
    },
  };
}
