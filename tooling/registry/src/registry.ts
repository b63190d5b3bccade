import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { goRuntimeEnv } from "@nodekit/test-utils";
import { binaries, freePort, onFreePorts, portTakenLine } from "@nodekit/testenv";
import { createCertificateAuthority, issueServingCertificate } from "@nodekit/testenv/pki";
import { listensOn } from "@nodekit/testenv/sockets";
import { spawnWatchdog, stopChild } from "@nodekit/testenv/supervisor";
import bcrypt from "bcryptjs";
import { Agent, request } from "undici";
import { startTokenServer, type TokenServer, type TokenServerOptions } from "./token-server.ts";

export type RegistryKind = "distribution" | "ggcr";

export type RegistryAuth =
  | { type: "none" }
  | { type: "basic"; users: Readonly<Record<string, string>> }
  | ({ type: "token" } & Pick<TokenServerOptions, "users" | "grant" | "expiresInSeconds">);

export interface StartRegistryOptions {
  /** `distribution`: the distribution registry v3 (no referrers API). `ggcr`: go-containerregistry's (referrers API unless `referrers: false`). */
  kind: RegistryKind;
  auth?: RegistryAuth;
  /** Serve HTTPS with a certificate from a throwaway CA (its PEM is `caPem`). */
  tls?: boolean;
  /** ggcr only: serve the referrers API; default true. */
  referrers?: boolean;
  /** ggcr only: answer blob GETs with a 307 to a second loopback origin (as registries do with object storage). */
  blobRedirect?: boolean;
  /** Directory with `registry` and `ggcr-registry`; default: `binaries("registry")` (the runner's, or ensure.sh's). */
  binDir?: string;
  /**
   * distribution only: serve its debug listener (`http.debug.addr`: Go's /debug/pprof, for a
   * CPU profile of the registry under a bench) on another loopback port, as `debugUrl`.
   */
  debug?: boolean;
  /**
   * Picks each loopback port (the registry's, then its debug or redirect listener's); default
   * one the kernel hands out. A port taken again before the registry binds it makes it start
   * again on new ones (up to three tries).
   */
  pickPort?: () => Promise<number>;
}

export interface RunningRegistry {
  readonly kind: RegistryKind;
  /** `http://127.0.0.1:PORT` or `https://…`. */
  readonly url: string;
  /** `127.0.0.1:PORT`: what an OCI reference names. */
  readonly host: string;
  /** The CA that signed the serving certificate, when `tls` is on. */
  readonly caPem?: string;
  readonly tokenServer?: TokenServer;
  /** `http://127.0.0.1:PORT` of distribution's debug listener (/debug/pprof/…), when `debug` is on. */
  readonly debugUrl?: string;
  /** Where blobs are stored on disk (distribution's filesystem driver root, or ggcr's blob dir). */
  readonly storageDir: string;
  /** Overwrite the stored bytes of a blob (the registry will serve them under the old digest). */
  tamperBlob(digest: string, bytes: Uint8Array): Promise<void>;
  /** The registry's log so far. */
  log(): string;
  stop(): Promise<void>;
}

async function htpasswd(users: Readonly<Record<string, string>>): Promise<string> {
  // Cost 5 (the minimum distribution accepts is 4): each request checks the password.
  const lines = await Promise.all(
    Object.entries(users).map(async ([user, password]) => `${user}:${await bcrypt.hash(password, 5)}`),
  );
  return `${lines.join("\n")}\n`;
}

function distributionConfig(options: {
  addr: string;
  storageDir: string;
  tls?: { cert: string; key: string };
  htpasswd?: string;
  token?: { realm: string; service: string; issuer: string; jwks: string };
  debugAddr?: string;
}): string {
  const lines = [
    "version: 0.1",
    "log:",
    "  level: warn",
    "  accesslog:",
    "    disabled: true",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${JSON.stringify(options.storageDir)}`,
    "  delete:",
    "    enabled: true",
    "  maintenance:",
    "    uploadpurging:",
    "      enabled: false",
    "http:",
    `  addr: ${options.addr}`,
    "  secret: nodekit-test-only",
  ];
  if (options.debugAddr) lines.push("  debug:", `    addr: ${options.debugAddr}`);
  if (options.tls) {
    lines.push(
      "  tls:",
      `    certificate: ${JSON.stringify(options.tls.cert)}`,
      `    key: ${JSON.stringify(options.tls.key)}`,
    );
  }
  if (options.htpasswd) {
    lines.push("auth:", "  htpasswd:", "    realm: nodekit-registry", `    path: ${JSON.stringify(options.htpasswd)}`);
  }
  if (options.token) {
    lines.push(
      "auth:",
      "  token:",
      `    realm: ${JSON.stringify(options.token.realm)}`,
      `    service: ${JSON.stringify(options.token.service)}`,
      `    issuer: ${JSON.stringify(options.token.issuer)}`,
      `    jwks: ${JSON.stringify(options.token.jwks)}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

async function waitForListening(
  url: string,
  ports: readonly number[],
  child: ChildProcess,
  logFile: string,
  logFrom: number,
  caPem: string | undefined,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  const dispatcher = new Agent(caPem === undefined ? {} : { connect: { ca: caPem } });
  try {
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        const log = readFileSync(logFile).subarray(logFrom).toString("utf8");
        throw new Error(`the registry exited during start-up:\n${log.slice(-3000)}`);
      }
      // Ask only once it holds every port it was given: another process may hold one of them.
      if (child.pid !== undefined && (await listensOn(child.pid, ports))) {
        try {
          const response = await request(`${url}/v2/`, { dispatcher, signal: AbortSignal.timeout(2000) });
          await response.body.dump();
          if (response.statusCode === 200 || response.statusCode === 401) return;
        } catch {
          // not answering yet
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(
      `the registry did not answer ${url}/v2/ within 30 s:\n${readFileSync(logFile, "utf8").slice(-3000)}`,
    );
  } finally {
    await dispatcher.close();
  }
}

/**
 * Start a real registry on a free 127.0.0.1 port with its storage in a new temp dir. The
 * process (and the token server, and the temp dir) go with `stop()`, with this process's
 * exit, and with a watchdog if this process is killed outright.
 */
export async function startRegistry(options: StartRegistryOptions): Promise<RunningRegistry> {
  const binDir = options.binDir ?? (await binaries("registry"));
  const dataDir = await mkdtemp(join(tmpdir(), `nodekit-registry-${options.kind}-`));
  const storageDir = join(dataDir, "storage");
  await mkdir(storageDir, { recursive: true });
  const logFile = join(dataDir, "registry.log");
  // Kills the registry and removes dataDir if this process is killed outright.
  const watchdog = spawnWatchdog(dataDir, "registry-watchdog");
  const auth = options.auth ?? { type: "none" };
  let tokenServer: TokenServer | undefined;
  let child: ChildProcess | undefined;

  const onExit = () => child?.kill("SIGKILL");
  process.on("exit", onExit);
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      process.off("exit", onExit);
      if (child !== undefined) await stopChild(child, 3_000);
      await tokenServer?.stop();
      watchdog.dismiss();
      await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
    })();
    return stopped;
  };

  try {
    let tls: { cert: string; key: string } | undefined;
    let caPem: string | undefined;
    if (options.tls) {
      const ca = await createCertificateAuthority({ commonName: "nodekit-registry-test-ca" });
      const serving = await issueServingCertificate(ca);
      tls = { cert: join(dataDir, "tls.crt"), key: join(dataDir, "tls.key") };
      await writeFile(tls.cert, serving.certPem);
      await writeFile(tls.key, serving.keyPem, { mode: 0o600 });
      caPem = ca.certPem;
    }
    let htpasswdFile: string | undefined;
    let token: { realm: string; service: string; issuer: string; jwks: string } | undefined;
    if (auth.type === "basic") {
      htpasswdFile = join(dataDir, "htpasswd");
      await writeFile(htpasswdFile, await htpasswd(auth.users), { mode: 0o600 });
    } else if (auth.type === "token") {
      tokenServer = await startTokenServer({
        users: auth.users,
        service: `registry-${basename(dataDir)}`,
        ...(auth.grant === undefined ? {} : { grant: auth.grant }),
        ...(auth.expiresInSeconds === undefined ? {} : { expiresInSeconds: auth.expiresInSeconds }),
      });
      const jwks = join(dataDir, "jwks.json");
      await writeFile(jwks, JSON.stringify(tokenServer.jwks));
      token = { realm: tokenServer.realm, service: tokenServer.service, issuer: tokenServer.issuer, jwks };
    }

    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? "",
      HOME: dataDir,
      OTEL_SDK_DISABLED: "true",
      OTEL_TRACES_EXPORTER: "none",
      // The test run's GOGC and GOMAXPROCS (distribution allocates a 4 MiB buffer per blob read).
      ...goRuntimeEnv(),
    };
    const pickPort = options.pickPort ?? freePort;
    /** The registry's command on newly picked ports, and those ports (its own first). */
    const command = async () => {
      const port = await pickPort();
      const host = `127.0.0.1:${port}`;
      const ports = [port];
      let argv: string[];
      let bin: string;
      let debugUrl: string | undefined;
      if (options.kind === "distribution") {
        const debugPort = options.debug ? await pickPort() : undefined;
        if (debugPort !== undefined) ports.push(debugPort);
        const debugAddr = debugPort === undefined ? undefined : `127.0.0.1:${debugPort}`;
        if (debugAddr !== undefined) debugUrl = `http://${debugAddr}`;
        const config = join(dataDir, "config.yml");
        await writeFile(
          config,
          distributionConfig({
            addr: host,
            storageDir,
            ...(tls ? { tls } : {}),
            ...(htpasswdFile ? { htpasswd: htpasswdFile } : {}),
            ...(token ? { token } : {}),
            ...(debugAddr === undefined ? {} : { debugAddr }),
          }),
        );
        bin = join(binDir, "registry");
        argv = ["serve", config];
      } else {
        bin = join(binDir, "ggcr-registry");
        argv = [`--addr=${host}`, `--blob-dir=${storageDir}`];
        if (options.referrers ?? true) argv.push("--referrers");
        if (options.blobRedirect) {
          const redirectPort = await pickPort();
          ports.push(redirectPort);
          argv.push(`--blob-redirect-addr=127.0.0.1:${redirectPort}`);
        }
        if (tls) argv.push(`--tls-cert=${tls.cert}`, `--tls-key=${tls.key}`);
        if (htpasswdFile) argv.push(`--htpasswd=${htpasswdFile}`);
        if (token) {
          argv.push(
            `--token-realm=${token.realm}`,
            `--token-service=${token.service}`,
            `--token-issuer=${token.issuer}`,
            `--token-jwks=${token.jwks}`,
          );
        }
      }
      return { host, ports, bin, argv, debugUrl };
    };
    // Its ports are picked free and bound by the registry later, so another process can take
    // one in between: the registry then exits ("address already in use") and starts again.
    const scheme = tls ? "https" : "http";
    let logFrom = 0;
    const { host, debugUrl } = await onFreePorts(
      async () => {
        const next = await command();
        const fd = openSync(logFile, "a");
        logFrom = fstatSync(fd).size;
        const spawned = spawn(next.bin, next.argv, { stdio: ["ignore", fd, fd], env });
        child = spawned;
        closeSync(fd);
        await writeFile(join(dataDir, "pids"), `${spawned.pid} registry\n`);
        await waitForListening(`${scheme}://${next.host}`, next.ports, spawned, logFile, logFrom, caPem);
        return next;
      },
      () =>
        child === undefined || (child.exitCode === null && child.signalCode === null)
          ? undefined
          : portTakenLine(logFile, logFrom),
      async () => {
        if (child !== undefined) await stopChild(child, 3_000);
      },
    );

    return {
      kind: options.kind,
      url: `${scheme}://${host}`,
      host,
      ...(caPem === undefined ? {} : { caPem }),
      ...(tokenServer === undefined ? {} : { tokenServer }),
      ...(debugUrl === undefined ? {} : { debugUrl }),
      storageDir,
      async tamperBlob(digest, bytes) {
        const [algorithm, hex] = digest.split(":") as [string, string];
        const path =
          options.kind === "distribution"
            ? join(storageDir, "docker/registry/v2/blobs", algorithm, hex.slice(0, 2), hex, "data")
            : join(storageDir, algorithm, hex);
        await readFile(path); // it must exist: tampering with nothing is a broken test
        await writeFile(path, bytes);
      },
      log: () => readFileSync(logFile, "utf8"),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
