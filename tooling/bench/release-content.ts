/**
 * `nvkectl release verify` hashing every byte of a 200-artifact release whose blobs total
 * over 200 MB (196 images of a 1.05 MiB random layer each, a provider, the profiles, two
 * nvkectl builds), served by the loopback distribution registry (token auth), next to
 * `sha256sum` of the same blobs read from the registry's storage on disk. One run, rounds
 * interleaved in a new random order each (one warm-up round first: the page cache holds the
 * blobs for both alike). Throughput is the bytes hashed over the wall time (the CLI's: start-up,
 * signature, manifests and every blob); peak RSS is the CLI process's (`/usr/bin/time -f %M`).
 * Targets: throughput ≥ 0.7 × sha256sum's, peak RSS < 150 MB. apps/nvkectl must be built.
 *
 *   ./run pnpm exec node --conditions=source tooling/bench/release-content.ts [--rounds N] [--json]
 *     [--registry ggcr] [--image-bytes N] [--cpu-prof DIR] [--registry-pprof FILE] [--against NAME=CHECKOUT]...
 *
 * `--against before=/path/to/other/checkout` adds that checkout's built nvkectl's verify of the
 * same release to the same interleaved rounds (its median, CPU and peak RSS are reported beside).
 *
 * The registry's CPU seconds during each verify are read from /proc (its process is this one's child).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { envCredentials, OciClient } from "@nodekit/oci";
import { startRegistry } from "@nodekit/registry-harness";
import { generateSigningKeyPair, listedArtifacts, localKeySigner } from "@nodekit/release";
import { publishTestRelease } from "@nodekit/release-publisher";
import { policyYaml } from "@nodekit/release-publisher/testing";

const execFileAsync = promisify(execFile);
const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf("--rounds") + 1] ?? "") || 5;
/** `--cpu-prof DIR`: each verify run writes a V8 CPU profile there (node --cpu-prof). */
const cpuProf = args.includes("--cpu-prof") ? args[args.indexOf("--cpu-prof") + 1] : undefined;
/**
 * `--registry-pprof FILE`: after the rounds, distribution's own CPU profile (Go's /debug/pprof,
 * `http.debug.addr`) over 10 s of this build's verify run back to back, written to FILE
 * (`go tool pprof -top FILE` reads it).
 */
const registryPprof = args.includes("--registry-pprof") ? args[args.indexOf("--registry-pprof") + 1] : undefined;
/** `--image-bytes N`: each image's random layer (default 1.05 MB; 1 shows what costs per request, not per byte). */
const IMAGE_BYTES = args.includes("--image-bytes") ? Number(args[args.indexOf("--image-bytes") + 1]) : 1_050_000;
const users = { bench: "bench-pw-content" };
const credentials = envCredentials({ NODEKIT_REGISTRY_USERNAME: "bench", NODEKIT_REGISTRY_PASSWORD: users.bench });
const key = generateSigningKeyPair();
const cli = join(dirname(fileURLToPath(import.meta.url)), "../../apps/nvkectl/bin/run.js");
const against = args
  .flatMap((arg, i) => (args[i - 1] === "--against" ? [arg] : []))
  .map((spec) => {
    const [name = "", checkout = ""] = spec.split("=");
    return { name, cli: join(resolve(checkout), "apps/nvkectl/bin/run.js") };
  });
const work = mkdtempSync(join(tmpdir(), "nodekit-bench-content-"));
writeFileSync(join(work, "policy.yaml"), policyYaml({ keys: [{ name: "bench", publicKeyPem: key.publicKeyPem }] }));
/** The CPU seconds (user + system) the registry process has used so far: /proc/PID/stat of this process's child. */
function registryCpu(): number {
  const ticks = 100; // USER_HZ
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue;
    }
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if ((comm === "registry" || comm === "ggcr-registry") && Number(fields[1]) === process.pid)
      return (Number(fields[11]) + Number(fields[12])) / ticks;
  }
  return Number.NaN;
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** Runs a command under /usr/bin/time: wall seconds, CPU seconds (user + system) and peak RSS (KiB), with its stdout. */
async function timed(command: string, argv: string[], env?: NodeJS.ProcessEnv) {
  const { stdout, stderr } = await execFileAsync("/usr/bin/time", ["-f", "TIME %e %M %U %S", command, ...argv], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: 600_000,
    ...(env === undefined ? {} : { env }),
  });
  const match = /TIME ([\d.]+) (\d+) ([\d.]+) ([\d.]+)\s*$/.exec(stderr);
  if (match === null) throw new Error(`no timing from /usr/bin/time: ${stderr.slice(-500)}`);
  return { seconds: Number(match[1]), rssKiB: Number(match[2]), cpu: Number(match[3]) + Number(match[4]), stdout };
}

// Token auth, as registries in production serve: a Bearer token is checked in microseconds, where
// distribution's Basic auth runs bcrypt on every request (tens of ms of the registry's CPU each).
// `--registry ggcr`: go-containerregistry's registry instead, to tell the client's cost from distribution's.
const kind = args.includes("--registry") && args[args.indexOf("--registry") + 1] === "ggcr" ? "ggcr" : "distribution";
const registry = await startRegistry({
  kind,
  auth: { type: "token", users },
  ...(registryPprof === undefined ? {} : { debug: true }),
});
try {
  const client = new OciClient({ plainHttp: true, credentials });
  const published = await publishTestRelease({
    client,
    registry: registry.host,
    images: Array.from({ length: 196 }, (_, i) => `image-${i}`),
    imageBytes: IMAGE_BYTES,
    signer: localKeySigner(key.privateKeyPem),
  });
  const artifacts = listedArtifacts(published.description);
  // The same blobs, on disk where the registry keeps them (distribution's filesystem driver).
  const files = new Map<string, number>();
  for (const artifact of artifacts) {
    const { manifest } = await client.getManifest(`${artifact.repository}@${artifact.digest}`);
    for (const d of [manifest.config, ...(manifest.layers as unknown[])] as Array<{ digest: string; size: number }>) {
      const hex = d.digest.slice("sha256:".length);
      files.set(
        kind === "ggcr"
          ? join(registry.storageDir, "sha256", hex)
          : join(registry.storageDir, "docker/registry/v2/blobs/sha256", hex.slice(0, 2), hex, "data"),
        d.size,
      );
    }
  }
  const diskBytes = [...files.values()].reduce((a, b) => a + b, 0);
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: work,
    NODEKIT_REGISTRY_USERNAME: "bench",
    NODEKIT_REGISTRY_PASSWORD: users.bench,
  };
  const verifyWith = (nvkectl: string) => async () => {
    const before = registryCpu();
    const result = await timed(
      process.execPath,
      [
        ...(cpuProf === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", cpuProf]),
        nvkectl,
        "release",
        "verify",
        published.tagReference,
        "--policy",
        join(work, "policy.yaml"),
        "--plain-http",
        "-o",
        "json",
      ],
      env,
    );
    const out = JSON.parse(result.stdout) as { artifactsChecked: number; bytesChecked: number; blobsChecked: number };
    return {
      ...result,
      registryCpu: registryCpu() - before,
      bytes: out.bytesChecked,
      artifacts: out.artifactsChecked,
      blobs: out.blobsChecked,
    };
  };
  type VerifySample = Awaited<ReturnType<ReturnType<typeof verifyWith>>>;
  type Sample = VerifySample | { seconds: number; rssKiB: number; cpu: number; stdout: string; bytes: number };
  const cases: Record<string, () => Promise<Sample>> = {
    verify: verifyWith(cli),
    ...Object.fromEntries(against.map((a) => [`verify [${a.name}]`, verifyWith(a.cli)])),
    sha256sum: async () => ({ ...(await timed("sha256sum", [...files.keys()])), bytes: diskBytes }),
  };
  const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  // The machine is shared: the one-minute load average before and after the rounds says how much.
  const loadBefore = loadavg()[0] ?? 0;
  for (let round = 0; round <= rounds; round++) {
    const order = Object.keys(cases).sort(() => Math.random() - 0.5);
    for (const name of order) {
      const sample = await cases[name]?.();
      if (round > 0 && sample !== undefined) samples[name]?.push(sample); // round 0 warms up
    }
  }
  const loadAfter = loadavg()[0] ?? 0;
  if (registryPprof !== undefined) {
    if (registry.debugUrl === undefined)
      throw new Error("--registry-pprof: only the distribution registry serves pprof");
    const profile = fetch(`${registry.debugUrl}/debug/pprof/profile?seconds=10`).then(async (r) => {
      if (!r.ok) throw new Error(`pprof answered ${r.status}`);
      return Buffer.from(await r.arrayBuffer());
    });
    let done = false;
    void profile.finally(() => {
      done = true;
    });
    let runs = 0;
    while (!done) {
      await cases.verify?.();
      runs++;
    }
    writeFileSync(registryPprof, await profile);
    process.stderr.write(`the registry's CPU profile over ${runs} verify runs: ${registryPprof}\n`);
  }
  const verifySamples = (name: string) => (samples[name] ?? []) as VerifySample[];
  const verify = verifySamples("verify");
  const first = verify[0];
  const mbps = (s: Sample) => s.bytes / 1e6 / s.seconds;
  const verifyMBps = median(verify.map(mbps));
  const sums = samples.sha256sum ?? [];
  const sumMBps = median(sums.map(mbps));
  const peakMB = Math.max(...verify.map((s) => s.rssKiB)) / 1024;
  const report = {
    rounds,
    loadAverage: { before: loadBefore, after: loadAfter },
    artifacts: first?.artifacts,
    blobs: first?.blobs,
    bytes: first?.bytes,
    diskBytes,
    verify: {
      medianSeconds: median(verify.map((s) => s.seconds)),
      medianCpuSeconds: median(verify.map((s) => s.cpu)),
      medianRegistryCpuSeconds: median(verify.map((s) => s.registryCpu)),
      medianMBps: verifyMBps,
      peakRssMB: peakMB,
    },
    sha256sum: {
      medianSeconds: median(sums.map((s) => s.seconds)),
      medianCpuSeconds: median(sums.map((s) => s.cpu)),
      medianMBps: sumMBps,
    },
    ratio: verifyMBps / sumMBps,
    against: Object.fromEntries(
      against.map((a) => {
        const runs = verifySamples(`verify [${a.name}]`);
        return [
          a.name,
          {
            medianSeconds: median(runs.map((s) => s.seconds)),
            medianCpuSeconds: median(runs.map((s) => s.cpu)),
            medianRegistryCpuSeconds: median(runs.map((s) => s.registryCpu)),
            peakRssMB: Math.max(...runs.map((s) => s.rssKiB)) / 1024,
            ratio: median(runs.map(mbps)) / sumMBps,
          },
        ];
      }),
    ),
  };
  if (args.includes("--json")) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    process.stdout.write(
      [
        `release verify, ${report.artifacts} artifacts, ${report.blobs} blobs, ${((report.bytes ?? 0) / 1e6).toFixed(1)} MB hashed (${kind === "ggcr" ? "go-containerregistry's" : "the distribution"} registry on loopback, token auth), ${rounds} interleaved rounds, load average ${loadBefore.toFixed(1)} → ${loadAfter.toFixed(1)}:`,
        `  nvkectl release verify: median ${report.verify.medianSeconds.toFixed(2)} s (CPU ${report.verify.medianCpuSeconds.toFixed(2)} s; the registry's ${report.verify.medianRegistryCpuSeconds.toFixed(2)} s), ${verifyMBps.toFixed(0)} MB/s, peak RSS ${peakMB.toFixed(0)} MB (target < 150: ${peakMB < 150 ? "met" : "MISSED"})`,
        `  sha256sum of the same ${files.size} blobs from disk (${(diskBytes / 1e6).toFixed(1)} MB): median ${report.sha256sum.medianSeconds.toFixed(2)} s (CPU ${report.sha256sum.medianCpuSeconds.toFixed(2)} s), ${sumMBps.toFixed(0)} MB/s`,
        `  throughput ${report.ratio.toFixed(2)} × sha256sum's (target ≥ 0.7: ${report.ratio >= 0.7 ? "met" : "MISSED"})`,
        ...Object.entries(report.against).map(
          ([name, a]) =>
            `  [${name}] nvkectl release verify: median ${a.medianSeconds.toFixed(2)} s (CPU ${a.medianCpuSeconds.toFixed(2)} s; the registry's ${a.medianRegistryCpuSeconds.toFixed(2)} s), ${a.ratio.toFixed(2)} × sha256sum's, peak RSS ${a.peakRssMB.toFixed(0)} MB`,
        ),
        "",
      ].join("\n"),
    );
  }
} finally {
  await registry.stop();
  rmSync(work, { recursive: true, force: true });
}
