import { readFile, writeFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { execa, type ResultPromise } from "execa";
import { rcompare } from "semver";
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
  /** Publishes mirrored third-party tarballs with the registry's publish API (one PUT per version). */
  publishMirrored(packages: readonly MirroredPackage[]): Promise<void>;
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
max_body_size: 200mb
log: { type: stdout, format: json, level: error }
`;
}

/** Starts verdaccio (from this package's devDependencies) with everything under `dir`. */
export async function startLocalRegistry(dir: string): Promise<LocalRegistry> {
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
      publishMirrored: (packages) => publishMirrored(url, token, packages),
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
  if (!response.ok || body.token === undefined) throw new Error(`verdaccio refused a new user: HTTP ${response.status}`);
  return body.token;
}

/** Strips what npm adds to an installed package.json that a published version does not carry. */
function publishedManifest(pkg: MirroredPackage, url: string): Record<string, unknown> {
  const manifest: Record<string, unknown> = { ...pkg.manifest };
  for (const key of Object.keys(manifest)) if (key.startsWith("_")) delete manifest[key];
  return {
    ...manifest,
    _id: `${pkg.name}@${pkg.version}`,
    dist: {
      tarball: new URL(`${pkg.name}/-/${tarballName(pkg.name, pkg.version)}`, url).href,
      integrity: pkg.integrity,
      shasum: pkg.shasum,
    },
  };
}

async function publishMirrored(url: string, token: string, packages: readonly MirroredPackage[]): Promise<void> {
  const byName = new Map<string, MirroredPackage[]>();
  for (const pkg of packages) byName.set(pkg.name, [...(byName.get(pkg.name) ?? []), pkg]);
  const names = [...byName.keys()];
  // A few at a time; within a name, the newest version last, so it ends as "latest".
  const worker = async () => {
    for (let name = names.pop(); name !== undefined; name = names.pop()) {
      const versions = (byName.get(name) ?? []).sort((a, b) => rcompare(b.version, a.version));
      for (const pkg of versions) await publishOne(url, token, pkg);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

async function publishOne(url: string, token: string, pkg: MirroredPackage): Promise<void> {
  const data = await readFile(pkg.tarball);
  const file = tarballName(pkg.name, pkg.version);
  const body = {
    _id: pkg.name,
    name: pkg.name,
    "dist-tags": { latest: pkg.version },
    versions: { [pkg.version]: publishedManifest(pkg, url) },
    _attachments: { [file]: { content_type: "application/octet-stream", data: data.toString("base64"), length: data.length } },
  };
  const response = await fetch(new URL(pkg.name.replace("/", "%2f"), url), {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    throw new Error(`publishing ${pkg.name}@${pkg.version} to ${url}: HTTP ${response.status} ${await response.text()}`);
  }
}
