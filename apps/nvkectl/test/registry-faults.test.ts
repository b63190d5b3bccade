import { createHash } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { generateSigningKeyPair } from "@nodekit/release";
import { policyYaml } from "@nodekit/release-publisher/testing";
import { loopbackServers } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type CliHome, cliHome } from "./helpers.ts";

// The release commands against a registry that misbehaves, on loopback (issue 22 items 3 and
// 9): the built CLI's exit code and what it says. The OCI client's own answers to each fault
// are in packages/oci/src/faults.test.ts.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const { listen } = loopbackServers();
const serve = async (handler: Handler) => new URL(await listen(createServer(handler))).host;
const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

let home: CliHome;
beforeAll(async () => {
  home = await cliHome("nvkectl-registry-faults-");
  const key = generateSigningKeyPair();
  await writeFile(
    join(home.path, "policy.yaml"),
    policyYaml({ keys: [{ name: "k", publicKeyPem: key.publicKeyPem }] }),
  );
});
afterAll(() => home?.cleanup());

describe("a release manifest whose layers is not a list (issue 22 item 9)", () => {
  test("release export and release verify exit 1 with OCI_MANIFEST_INVALID, not 70", async () => {
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      artifactType: "application/vnd.nvke.release.v1",
      config: { mediaType: "application/vnd.oci.empty.v1+json", digest: sha256("{}"), size: 2 },
      layers: { mediaType: "application/vnd.nvke.release.description.v1+yaml" },
    });
    const host = await serve((_req, res) =>
      res
        .writeHead(200, {
          "content-type": "application/vnd.oci.image.manifest.v1+json",
          "docker-content-digest": sha256(manifest),
        })
        .end(manifest),
    );
    const exported = await home.nvkectl(["release", "export", `${host}/nvke/release:1`, "--plain-http"]);
    expect(exported.exitCode, exported.stderr).toBe(1);
    expect(exported.stderr).toContain("is not a valid application/vnd.oci.image.manifest.v1+json");
    expect(exported.stderr).toContain("layers");
    const verified = await home.nvkectl([
      "release",
      "verify",
      `${host}/nvke/release:1`,
      "--policy",
      "policy.yaml",
      "--plain-http",
    ]);
    expect(verified.exitCode, verified.stderr).toBe(1);
    expect(verified.stderr).toContain("is not a valid application/vnd.oci.image.manifest.v1+json");
  });
});

describe("a token realm on another host (issue 22 item 3)", () => {
  test("is refused with the registry's credentials (exit 7); --allow-token-realm lets it be used, with a warning", async () => {
    const asked: Array<string | undefined> = [];
    const tokenHost = await serve((req, res) => {
      asked.push(req.headers.authorization);
      res.writeHead(200, { "content-type": "application/json" }).end('{"token":"t0ken"}');
    });
    const realm = `localhost:${tokenHost.split(":")[1]}`;
    const host = await serve((req, res) => {
      if (req.headers.authorization === "Bearer t0ken") {
        res.writeHead(404, { "content-type": "application/json" }).end('{"errors":[{"code":"MANIFEST_UNKNOWN"}]}');
      } else {
        res.writeHead(401, { "www-authenticate": `Bearer realm="http://${realm}/token",service="reg"` }).end();
      }
    });
    const env = { NODEKIT_REGISTRY_USERNAME: "alice", NODEKIT_REGISTRY_PASSWORD: "alice-Pw-5521" };
    const refused = await home.nvkectl(["release", "export", `${host}/nvke/release:1`, "--plain-http"], { env });
    expect(refused.exitCode, refused.stderr).toBe(7);
    expect(refused.stderr).toContain(`fetched from http://${realm}, on another host; nothing was sent there`);
    expect(refused.stderr).toContain(`--allow-token-realm ${realm}`);
    expect(asked).toEqual([]);
    const allowed = await home.nvkectl(
      ["release", "export", `${host}/nvke/release:1`, "--plain-http", "--allow-token-realm", realm],
      { env },
    );
    expect(allowed.exitCode, allowed.stderr).toBe(4);
    expect(allowed.stderr).toContain(
      `warning: ${host} fetches its tokens from http://${realm} (on another host, as allowed)`,
    );
    expect(asked).toHaveLength(1);
    expect(`${refused.stderr}${allowed.stderr}`).not.toContain(env.NODEKIT_REGISTRY_PASSWORD);
  });
});
