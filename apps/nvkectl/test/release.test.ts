import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { chmod, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { envCredentials, OciClient } from "@nodekit/oci";
import { type RunningRegistry, startRegistry } from "@nodekit/registry-harness";
import { generateSigningKeyPair, localKeySigner, parseReleaseDescription, publishRelease } from "@nodekit/release";
import { type PublishedTestRelease, publishTestRelease } from "@nodekit/release-publisher";
import {
  certificateSigner,
  createCertificateAuthority,
  createTimestampAuthority,
  policyYaml,
  testHelm,
  timestampWitness,
  trustedRootFor,
  writeTestChart,
} from "@nodekit/release-publisher/testing";
import { repoRoot } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type CliHome, cliHome } from "./helpers.ts";

// nvkectl release verify / export, the built CLI against a real registry on loopback (ggcr
// with Basic auth, the referrers API) holding releases the publisher signed in the test.

const execFileAsync = promisify(execFile);
const PASSWORD = "publisher-Pw-93kq";
const users = { publisher: PASSWORD };
const publisherKey = generateSigningKeyPair();
const strangerKey = generateSigningKeyPair();

let home: CliHome;
let registry: RunningRegistry;
let published: PublishedTestRelease;
let unsigned: PublishedTestRelease;
let forged: PublishedTestRelease;
let missingRef: string;
/** Keyless: signed by a CI identity's certificate with a timestamp; the same without the timestamp; from a rogue CA. */
let keyless: PublishedTestRelease;
let untimed: PublishedTestRelease;
let rogue: PublishedTestRelease;
// The identity docs/release-policy.md's example trusts (its subjectRegExp matches a tag's workflow).
const SUBJECT = "https://ci.nvkr.example.com/nvke/release.yml@refs/tags/v1.4.0";
const ISSUER = "https://oidc.nvkr.example.com";

const dockerAuth = () => ({
  auths: { [registry.host]: { auth: Buffer.from(`publisher:${PASSWORD}`).toString("base64") } },
});

beforeAll(async () => {
  home = await cliHome("nvkectl-release-");
  const helm = await testHelm(join(home.path, "helm"));
  const chart = await writeTestChart(home.path);
  registry = await startRegistry({ kind: "ggcr", auth: { type: "basic", users } });
  const client = new OciClient({
    plainHttp: true,
    credentials: envCredentials({ NODEKIT_REGISTRY_USERNAME: "publisher", NODEKIT_REGISTRY_PASSWORD: PASSWORD }),
  });
  const signer = localKeySigner(publisherKey.privateKeyPem);
  published = await publishTestRelease({ client, registry: registry.host, charts: [chart], helm, signer });
  unsigned = await publishTestRelease({ client, registry: registry.host, prefix: "unsigned", signer, sign: false });
  forged = await publishTestRelease({
    client,
    registry: registry.host,
    prefix: "forged",
    signer: localKeySigner(strangerKey.privateKeyPem),
  });
  const description = structuredClone(published.description);
  description.images[0] = { reference: description.images[0]?.reference ?? "", digest: `sha256:${"0".repeat(64)}` };
  missingRef = (await publishRelease({ client, reference: `${registry.host}/missing/release:1`, description, signer }))
    .reference;
  await mkdir(join(home.path, ".docker"), { recursive: true });
  await writeFile(join(home.path, ".docker", "config.json"), JSON.stringify(dockerAuth()));
  await writeFile(
    join(home.path, "policy.yaml"),
    policyYaml({ keys: [{ name: "nvkr-release", publicKeyPem: publisherKey.publicKeyPem }] }),
  );
  await writeFile(
    join(home.path, "other-policy.yaml"),
    policyYaml({ keys: [{ name: "someone-else", publicKeyPem: strangerKey.publicKeyPem }] }),
  );

  const [ca, otherCa, tsa] = await Promise.all([
    createCertificateAuthority(),
    createCertificateAuthority({ commonName: "rogue CA" }),
    createTimestampAuthority(),
  ]);
  const keylessSigner = certificateSigner({ ca, subject: SUBJECT, issuer: ISSUER });
  const witnesses = [timestampWitness(tsa)];
  keyless = await publishTestRelease({
    client,
    registry: registry.host,
    prefix: "keyless",
    signer: keylessSigner,
    witnesses,
  });
  untimed = await publishTestRelease({ client, registry: registry.host, prefix: "untimed", signer: keylessSigner });
  rogue = await publishTestRelease({
    client,
    registry: registry.host,
    prefix: "rogue",
    signer: certificateSigner({ ca: otherCa, subject: SUBJECT, issuer: ISSUER }),
    witnesses,
  });
  await writeFile(
    join(home.path, "trusted_root.json"),
    JSON.stringify(trustedRootFor({ certificateAuthorities: [ca], timestampAuthorities: [tsa] })),
  );
  await writeFile(
    join(home.path, "other-identity-policy.yaml"),
    policyYaml({
      identities: [{ subject: "https://ci.nvkr.example.com/forks/release.yml@refs/heads/main", issuer: ISSUER }],
      trustedRoot: "trusted_root.json",
    }),
  );
  await writeFile(
    join(home.path, "bad-policy.yaml"),
    "apiVersion: release.nvke.nodekit.dev/v1\nkind: ReleasePolicy\ntrustedKeys: []\ntransparencyLog: sometimes\n",
  );
}, 120_000);

afterAll(async () => {
  await registry?.stop();
  await home?.cleanup();
});

/** `nvkectl release verify REF --policy POLICY --plain-http`, then `flags` (--json-logs unless given, for failureCode). */
const verify = (ref: string, policy = "policy.yaml", env: Record<string, string> = {}, flags = ["--json-logs"]) =>
  home.nvkectl(["release", "verify", ref, "--policy", policy, "--plain-http", ...flags], { env });

/** The code of the failure a --json-logs run reported. */
const failureCode = (stderr: string) => {
  const line = stderr
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { level?: string; code?: string })
    .find((l) => l.level === "error");
  return line?.code;
};

describe("nvkectl release verify", () => {
  test("prints the verified reference, with credentials from docker's config; the password appears nowhere", async () => {
    const result = await verify(published.tagReference, "policy.yaml", {}, ["-v"]);
    expect(result.stderr).toContain("signed by key nvkr-release");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`${registry.host}/nvke/release@${published.digest}\n`);
    expect(result.stderr).toMatch(
      /all 6 artifacts it lists match their digests, every byte \(\d+ blobs, \d+\.\d MiB\)/,
    );
    expect(result.stdout + result.stderr).not.toContain(PASSWORD);
  });

  test("-o json, credentials from the environment (no config file), pinned by digest", async () => {
    const env = {
      HOME: join(home.path, "elsewhere"),
      NODEKIT_REGISTRY_USERNAME: "publisher",
      NODEKIT_REGISTRY_PASSWORD: PASSWORD,
    };
    const result = await verify(`${registry.host}/nvke/release@${published.digest}`, "policy.yaml", env, [
      "-o",
      "json",
    ]);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      reference: `${registry.host}/nvke/release@${published.digest}`,
      digest: published.digest,
      signer: "key nvkr-release",
      artifactsChecked: 6,
      blobsChecked: expect.any(Number),
      bytesChecked: expect.any(Number),
    });
    expect(result.stdout + result.stderr).not.toContain(PASSWORD);
  });

  test.each([
    [
      "untrusted signer (a policy naming another key)",
      () => published.tagReference,
      "other-policy.yaml",
      "RELEASE_UNTRUSTED_SIGNER",
      1,
    ],
    ["re-signed with an untrusted key", () => forged.tagReference, "policy.yaml", "RELEASE_UNTRUSTED_SIGNER", 1],
    ["unsigned", () => unsigned.tagReference, "policy.yaml", "RELEASE_UNSIGNED", 1],
    ["an artifact missing", () => missingRef, "policy.yaml", "RELEASE_ARTIFACT_MISSING", 4],
    ["a malformed policy", () => published.tagReference, "bad-policy.yaml", "RELEASE_POLICY_INVALID", 3],
    ["no such release", () => `${registry.host}/nvke/release:9.9.9`, "policy.yaml", "RELEASE_NOT_FOUND", 4],
  ])("%s: its own code and exit code", async (_name, ref, policy, code, exitCode) => {
    const result = await verify(ref(), policy);
    expect(failureCode(result.stderr)).toBe(code);
    expect(result.exitCode).toBe(exitCode);
    expect(result.stdout).toBe("");
  });

  test("a malformed policy names its lines and fields", async () => {
    const result = await verify(published.tagReference, "bad-policy.yaml", {}, []);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain("bad-policy.yaml:4: field transparencyLog");
    expect(result.stderr).toMatch(/bad-policy.yaml(:\d+)?: field timestamps/);
  });

  test("the registry refusing the credentials: RELEASE_REGISTRY_AUTH_REFUSED, exit 7, the password nowhere", async () => {
    const wrong = "wrong-Pw-77x";
    const result = await verify(published.tagReference, "policy.yaml", {
      HOME: join(home.path, "elsewhere"),
      NODEKIT_REGISTRY_USERNAME: "publisher",
      NODEKIT_REGISTRY_PASSWORD: wrong,
    });
    expect(failureCode(result.stderr)).toBe("RELEASE_REGISTRY_AUTH_REFUSED");
    expect(result.exitCode).toBe(7);
    expect(result.stderr).not.toContain(wrong);
  });

  test("a registry that is not there: RELEASE_REGISTRY_UNREACHABLE, exit 6", async () => {
    const result = await verify("127.0.0.1:9/nvke/release:1");
    expect(failureCode(result.stderr)).toBe("RELEASE_REGISTRY_UNREACHABLE");
    expect(result.exitCode).toBe(6);
  });
});

describe("nvkectl release verify, keyless: certificate identities and a trusted root, offline", () => {
  /** docs/release-policy.md's identity example, as written, beside the test's trusted root. */
  const docPolicy = async () => {
    const doc = await readFile(join(repoRoot, "docs/release-policy.md"), "utf8");
    const example = /## A complete example: certificate identities\n[\s\S]*?```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    if (example === undefined) throw new Error("docs/release-policy.md has no identity example");
    await writeFile(join(home.path, "identity-policy.yaml"), example);
    return "identity-policy.yaml";
  };

  test("docs/release-policy.md's example accepts a release the named identity signed, and prints its digest", async () => {
    const result = await verify(keyless.tagReference, await docPolicy(), {}, ["-v"]);
    expect(result.stderr).toContain(`signed by ${SUBJECT} (issuer ${ISSUER})`);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`${registry.host}/keyless/release@${keyless.digest}\n`);
  });

  test.each([
    [
      "a policy naming another identity",
      () => keyless.tagReference,
      "other-identity-policy.yaml",
      "RELEASE_UNTRUSTED_SIGNER",
      `its certificate names ${SUBJECT}`,
    ],
    [
      "a certificate from a CA not in the trusted root",
      () => rogue.tagReference,
      "",
      "RELEASE_UNTRUSTED_SIGNER",
      "does not chain to a certificate authority",
    ],
    [
      "no timestamp where the policy requires one",
      () => untimed.tagReference,
      "",
      "RELEASE_POLICY_UNMET",
      "(timestamps: required)",
    ],
  ])("%s: its own code, exit 1, nothing on stdout", async (_name, ref, policy, code, why) => {
    const result = await verify(ref(), policy || (await docPolicy()));
    expect(failureCode(result.stderr)).toBe(code);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(why);
  });
});

describe("nvkectl release export", () => {
  test("writes the description as published, says on stderr that it verified nothing, takes REF@sha256", async () => {
    const pinned = `${registry.host}/nvke/release@${published.digest}`;
    const result = await home.nvkectl(["release", "export", pinned, "--plain-http", "--output-file", "release.json"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("export verifies nothing");
    const text = await readFile(join(home.path, "release.json"), "utf8");
    expect(parseReleaseDescription(text, { source: "release.json" }).value).toEqual(published.description);
    // To stdout, from the tag, even when unsigned: export checks no signature (and says so).
    const loose = await home.nvkectl(["release", "export", unsigned.tagReference, "--plain-http"]);
    expect(loose.exitCode).toBe(0);
    expect(JSON.parse(loose.stdout)).toEqual(unsigned.description);
    expect(loose.stderr).toContain("no signature");
  });

  test("--nvkectl PLATFORM writes nvkectl's executable as the release lists it (0755, checked), and runs", async () => {
    // Given a release whose nvkectl for linux/amd64 is an executable file
    const script = join(home.path, "nvkectl-linux-x64");
    await writeFile(script, "#!/bin/sh\necho nvkectl from the release\n");
    const client = new OciClient({
      plainHttp: true,
      credentials: envCredentials({ NODEKIT_REGISTRY_USERNAME: "publisher", NODEKIT_REGISTRY_PASSWORD: PASSWORD }),
    });
    const carrying = await publishTestRelease({
      client,
      registry: registry.host,
      prefix: "executables",
      executables: [{ platform: "linux/amd64", file: script }],
      signer: localKeySigner(publisherKey.privateKeyPem),
    });
    const verified = await verify(carrying.tagReference);
    expect(verified.exitCode, verified.stderr).toBe(0);
    // When export takes it from the reference verify printed
    const result = await home.nvkectl([
      "release",
      "export",
      verified.stdout.trim(),
      "--plain-http",
      "--nvkectl",
      "linux/amd64",
      "--output-file",
      "nvkectl-taken",
    ]);
    // Then the file is the executable's bytes, mode 0755, its digest said on stderr, and it runs
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe("");
    const taken = join(home.path, "nvkectl-taken");
    expect(await readFile(taken, "utf8")).toBe(await readFile(script, "utf8"));
    expect((await stat(taken)).mode & 0o777).toBe(0o755);
    const digest = `sha256:${createHash("sha256")
      .update(await readFile(script))
      .digest("hex")}`;
    expect(result.stderr).toContain(digest);
    expect((await execFileAsync(taken)).stdout).toBe("nvkectl from the release\n");
    // A platform it does not carry: RELEASE_PLATFORM_NOT_LISTED, exit 4, naming the ones it has; nothing written
    const other = await home.nvkectl([
      "release",
      "export",
      carrying.tagReference,
      "--plain-http",
      "--nvkectl",
      "linux/arm64",
      "--output-file",
      "nvkectl-arm64",
      "--json-logs",
    ]);
    expect(other.exitCode).toBe(4);
    expect(failureCode(other.stderr)).toBe("RELEASE_PLATFORM_NOT_LISTED");
    expect(other.stderr).toContain("linux/amd64");
    await expect(stat(join(home.path, "nvkectl-arm64"))).rejects.toThrow();
  });

  test("its help says to run it only on a reference verify accepted", async () => {
    const help = await home.nvkectl(["release", "export", "--help"]);
    expect(help.stdout.replace(/\s+/g, " ")).toContain("run it only on a reference release verify accepted");
  });
});

describe("docs/release-artifacts.md", () => {
  const doc = () => readFile(join(repoRoot, "docs/release-artifacts.md"), "utf8");
  const blocks = async () => [...(await doc()).matchAll(/```sh(?: [^\n]*)?\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");

  test("every nvkectl command in it exists and takes the flags it is given", async () => {
    const manifest = JSON.parse(await readFile(join(repoRoot, "apps/nvkectl/oclif.manifest.json"), "utf8")) as {
      commands: Record<string, { flags: Record<string, unknown> }>;
    };
    const lines = (await blocks())
      .flatMap((block) => block.split("\n"))
      .flatMap((line) => [...line.matchAll(/nvkectl ([^)\n]*)/g)].map((m) => m[1] ?? ""));
    expect(lines.length).toBeGreaterThanOrEqual(5);
    for (const line of lines) {
      const words = line.split(/\s+/);
      // The CLI's own flags, which no command carries.
      if (words[0] === "--version" || words[0] === "--help") continue;
      const two = `${words[0]}:${words[1]}`;
      const id = manifest.commands[two] ? two : (words[0] ?? "");
      expect(manifest.commands[id], `nvkectl ${line}: no such command`).toBeDefined();
      for (const flag of words.filter((w) => w.startsWith("--")).map((w) => w.slice(2))) {
        expect(Object.keys(manifest.commands[id]?.flags ?? {}), `nvkectl ${line}: no --${flag}`).toContain(flag);
      }
    }
  });

  test("its verify and export blocks run as written against a published release", async () => {
    // Given the guide's names: the release at its tag, the policy in release-policy.yaml, and
    // nvkectl on PATH (talking plain HTTP to the loopback registry)
    const bin = join(home.path, "bin");
    await mkdir(bin, { recursive: true });
    await writeFile(
      join(bin, "nvkectl"),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(repoRoot, "apps/nvkectl/bin/run.js"))} "$@" --plain-http\n`,
    );
    await chmod(join(bin, "nvkectl"), 0o755);
    await writeFile(join(home.path, "release-policy.yaml"), await readFile(join(home.path, "policy.yaml")));
    // The real-site blocks (`sh doctest:syntax`); the sandbox's (`sh doctest`) run against a
    // sandbox in the doc-tests.
    const realSite = [...(await doc()).matchAll(/```sh doctest:syntax\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
    const script = realSite
      .filter((block) => block.includes("nvkectl release"))
      .join("\n")
      .replaceAll("registry.example.com/nvke/release:1.4.0", published.tagReference);
    // When they run
    const { stdout } = await execFileAsync("bash", ["-euo", "pipefail", "-c", script], {
      cwd: home.path,
      env: { PATH: `${bin}:${process.env.PATH}`, HOME: home.path, NO_COLOR: "1" },
    });
    // Then the first block printed the verified reference, and release.json is the description
    expect(stdout).toBe(`${registry.host}/nvke/release@${published.digest}\n`);
    const text = await readFile(join(home.path, "release.json"), "utf8");
    expect(parseReleaseDescription(text, { source: "release.json" }).value).toEqual(published.description);
    // and nvkectl-linux-x64 is the release's nvkectl for linux/amd64 (the test publisher's stand-in)
    expect(await readFile(join(home.path, "nvkectl-linux-x64"), "utf8")).toMatch(/^nvkectl \S+ for linux\/amd64\n$/);
  });
});
