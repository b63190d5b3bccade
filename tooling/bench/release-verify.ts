/**
 * `verifyRelease` of a 200-artifact release against each loopback registry (distribution:
 * referrers through the tag schema; go-containerregistry: through the referrers API), both
 * with token auth. Warm: registries started and the release published first, then each
 * round verifies with a fresh client (so every round fetches its tokens again). Then the same
 * through the built CLI, `nvkectl release verify` as a subprocess per round (Node's start-up,
 * the command's imports, the policy file read and the whole verification; apps/nvkectl must
 * be built).
 *
 *   node --conditions=source tooling/bench/release-verify.ts [--rounds N] [--json] [--cli other/apps/nvkectl/bin/run.js]
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { envCredentials, OciClient } from "@nodekit/oci";
import { type RegistryKind, startRegistry } from "@nodekit/registry-harness";
import { generateSigningKeyPair, localKeySigner, verifyRelease } from "@nodekit/release";
import { publishTestRelease } from "@nodekit/release-publisher";
import { policyFrom, policyYaml } from "@nodekit/release-publisher/testing";

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf("--rounds") + 1] ?? "") || 15;
const users = { bench: "bench-pw" };
const credentials = envCredentials({ NODEKIT_REGISTRY_USERNAME: "bench", NODEKIT_REGISTRY_PASSWORD: users.bench });
const key = generateSigningKeyPair();
const trusted = { keys: [{ name: "bench", publicKeyPem: key.publicKeyPem }] };
const policyText = policyYaml(trusted);
const policy = policyFrom(trusted);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
// --cli PATH times another checkout's built nvkectl (its bin/run.js) against the same registries.
const cli =
  args.indexOf("--cli") >= 0
    ? (args[args.indexOf("--cli") + 1] ?? "")
    : join(dirname(fileURLToPath(import.meta.url)), "../../apps/nvkectl/bin/run.js");
const work = mkdtempSync(join(tmpdir(), "nodekit-bench-release-"));
writeFileSync(join(work, "policy.yaml"), policyText);
const results: Array<{
  kind: RegistryKind;
  artifacts: number;
  medianMs: number;
  minMs: number;
  maxMs: number;
  cliMedianMs?: number;
}> = [];
for (const kind of ["distribution", "ggcr"] as const) {
  const registry = await startRegistry({ kind, auth: { type: "token", users } });
  try {
    const publisher = new OciClient({ plainHttp: true, credentials });
    // 195 images + 1 provider + profiles + 2 nvkectl platforms + ... = 200 pinned artifacts.
    const images = Array.from({ length: 196 }, (_, i) => `image-${i}`);
    const published = await publishTestRelease({
      client: publisher,
      registry: registry.host,
      images,
      signer: localKeySigner(key.privateKeyPem),
    });
    const times: number[] = [];
    let artifacts = 0;
    for (let i = 0; i < rounds + 2; i++) {
      const client = new OciClient({ plainHttp: true, credentials });
      const start = performance.now();
      const verified = await verifyRelease({ client, reference: published.tagReference, policy });
      const ms = performance.now() - start;
      artifacts = verified.artifactsChecked;
      if (i >= 2) times.push(ms); // two warm-up rounds
    }
    const cliTimes: number[] = [];
    for (let i = 0; i < rounds + 1; i++) {
      const start = performance.now();
      // Asynchronous: the token server runs in this process and must keep answering.
      await promisify(execFile)(
        process.execPath,
        [cli, "release", "verify", published.tagReference, "--policy", join(work, "policy.yaml"), "--plain-http"],
        {
          encoding: "utf8",
          timeout: 60_000,
          env: {
            PATH: process.env.PATH ?? "",
            HOME: work,
            NODEKIT_REGISTRY_USERNAME: "bench",
            NODEKIT_REGISTRY_PASSWORD: users.bench,
          },
        },
      );
      const ms = performance.now() - start;
      if (i >= 1) cliTimes.push(ms); // one warm-up round
    }
    results.push({
      kind,
      artifacts,
      medianMs: median(times),
      minMs: Math.min(...times),
      maxMs: Math.max(...times),
      cliMedianMs: median(cliTimes),
    });
  } finally {
    await registry.stop();
  }
}
rmSync(work, { recursive: true, force: true });

if (args.includes("--json")) {
  process.stdout.write(`${JSON.stringify({ rounds, results }, null, 2)}\n`);
} else {
  for (const r of results) {
    process.stdout.write(
      `release verify, ${r.artifacts} artifacts, ${r.kind} registry with token auth: median ${r.medianMs.toFixed(0)} ms (min ${r.minMs.toFixed(0)}, max ${r.maxMs.toFixed(0)}; target < 1000 ms: ${r.medianMs < 1000 ? "met" : "MISSED"}); nvkectl release verify (built CLI, subprocess): median ${r.cliMedianMs?.toFixed(0)} ms\n`,
    );
  }
}
