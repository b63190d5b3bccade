import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { ExitCode } from "@nodekit/errors";
import { loopbackServers, userErrorOf } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { OciClient } from "./client.ts";
import { envCredentials } from "./credentials.ts";
import { MediaType } from "./media-types.ts";

// A registry that misbehaves, on loopback: the client's answer to each fault (issue 22 items
// 3, 8, 9 and 10). The well-behaved registries are in client.test.ts.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const { listen } = loopbackServers();
const serve = async (handler: Handler) => new URL(await listen(createServer(handler))).host;
const credentials = envCredentials({ NODEKIT_REGISTRY_USERNAME: "alice", NODEKIT_REGISTRY_PASSWORD: "alice-pw" });
const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;
const waits = () => {
  const seen: number[] = [];
  return { seen, sleep: async (ms: number) => void seen.push(ms) };
};

describe("a token realm on another host or scheme (issue 22 item 3)", () => {
  /** A registry whose Bearer challenge names `realm`; a token service that counts who asked. */
  async function registryWithRealm(realmFor: (tokenPort: number) => string) {
    const asked: Array<string | undefined> = [];
    const tokenHost = await serve((req, res) => {
      asked.push(req.headers.authorization);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ token: "t0ken" }));
    });
    const tokenPort = Number(tokenHost.split(":")[1]);
    const host = await serve((req, res) => {
      if (req.headers.authorization !== "Bearer t0ken") {
        res
          .writeHead(401, { "www-authenticate": `Bearer realm="${realmFor(tokenPort)}",service="reg"` })
          .end('{"errors":[{"code":"UNAUTHORIZED"}]}');
        return;
      }
      res.writeHead(404, { "content-type": "application/json" }).end('{"errors":[{"code":"MANIFEST_UNKNOWN"}]}');
    });
    return { host, tokenPort, asked };
  }

  test("another host name gets nothing (exit 7); allowed, it is used with a warning", async () => {
    // localhost and 127.0.0.1: the same machine, another host name, as an attacker's realm would be.
    const { host, tokenPort, asked } = await registryWithRealm((port) => `http://localhost:${port}/token`);
    const client = new OciClient({ plainHttp: true, credentials });
    const error = await userErrorOf(client.getManifest(`${host}/x/y:v1`));
    expect([error.code, error.exitCode]).toEqual(["OCI_TOKEN_REALM_REFUSED", ExitCode.Unauthorized]);
    expect(error.message).toBe(
      `${host} asks for its tokens to be fetched from http://localhost:${tokenPort}, on another host; nothing was sent there`,
    );
    expect(asked).toEqual([]);
    const warnings: string[] = [];
    const allowing = new OciClient({
      plainHttp: true,
      credentials,
      allowTokenRealms: [`localhost:${tokenPort}`],
      onWarning: (message) => warnings.push(message),
    });
    expect((await userErrorOf(allowing.getManifest(`${host}/x/y:v1`))).code).toBe("OCI_NOT_FOUND");
    expect(asked).toEqual([`Basic ${Buffer.from("alice:alice-pw").toString("base64")}`]);
    expect(warnings).toEqual([
      `${host} fetches its tokens from http://localhost:${tokenPort} (on another host, as allowed): the registry's credentials are sent there`,
    ]);
  });

  test("another scheme on the registry's own host is refused too", async () => {
    const { host, asked } = await registryWithRealm((port) => `https://127.0.0.1:${port}/token`);
    const error = await userErrorOf(new OciClient({ plainHttp: true, credentials }).getManifest(`${host}/x/y:v1`));
    expect(error.code).toBe("OCI_TOKEN_REALM_REFUSED");
    expect(error.message).toContain(", over https; nothing was sent there");
    expect(asked).toEqual([]);
  });
});

describe("a manifest of the wrong shape (issue 22 item 9)", () => {
  test("layers that are not a list are a located problem (exit 1), not a crash", async () => {
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaType.ImageManifest,
      config: { mediaType: MediaType.Empty, digest: sha256("{}"), size: 2 },
      layers: { "0": "not a list" },
    });
    const host = await serve((_req, res) =>
      res
        .writeHead(200, { "content-type": MediaType.ImageManifest, "docker-content-digest": sha256(manifest) })
        .end(manifest),
    );
    const error = await userErrorOf(new OciClient({ plainHttp: true }).getManifest(`${host}/x/y:v1`));
    expect([error.code, error.exitCode]).toEqual(["OCI_MANIFEST_INVALID", ExitCode.CheckFailed]);
    expect(error.problems.map((p) => p.path)).toEqual([["layers"]]);
  });

  test("an index whose manifests hold something else than descriptors", async () => {
    const index = JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ImageIndex, manifests: [{ digest: 7 }] });
    const host = await serve((_req, res) => res.writeHead(200, { "content-type": MediaType.ImageIndex }).end(index));
    const error = await userErrorOf(new OciClient({ plainHttp: true }).getManifest(`${host}/x/y@${sha256(index)}`));
    expect(error.code).toBe("OCI_MANIFEST_INVALID");
    expect(error.problems.map((p) => p.path?.join("."))).toEqual([
      "manifests.0.mediaType",
      "manifests.0.digest",
      "manifests.0.size",
    ]);
  });
});

describe("a busy or failing registry (issue 22 item 10)", () => {
  test("a read answered 503 and 429 waits as Retry-After says and succeeds", async () => {
    let calls = 0;
    const digest = sha256("blob");
    const host = await serve((_req, res) => {
      calls++;
      if (calls === 1) res.writeHead(503, { "retry-after": "1" }).end();
      else if (calls === 2) res.writeHead(429, { "retry-after": "2" }).end();
      else res.writeHead(200, { "content-length": "4" }).end("blob");
    });
    const { seen, sleep } = waits();
    const bytes = await new OciClient({ plainHttp: true, sleep }).getBlob(`${host}/x/y`, digest);
    expect([new TextDecoder().decode(bytes), calls, seen]).toEqual(["blob", 3, [1000, 2000]]);
  });

  test("a registry that stays busy is exit 6 after the retries, saying what it said", async () => {
    let calls = 0;
    const host = await serve((_req, res) => {
      calls++;
      res
        .writeHead(503, { "content-type": "application/json" })
        .end('{"errors":[{"code":"UNAVAILABLE","message":"down for maintenance"}]}');
    });
    const { seen, sleep } = waits();
    const error = await userErrorOf(new OciClient({ plainHttp: true, sleep }).getManifest(`${host}/x/y:v1`));
    expect([error.code, error.exitCode, calls, seen]).toEqual([
      "OCI_REGISTRY_UNAVAILABLE",
      ExitCode.Unreachable,
      4,
      [500, 1000, 2000],
    ]);
    expect(error.why).toBe("It said: UNAVAILABLE: down for maintenance");
  });

  test("a write is never sent twice", async () => {
    let puts = 0;
    const host = await serve((req, res) => {
      if (req.method === "PUT") puts++;
      req.resume();
      res.writeHead(503, { "retry-after": "1" }).end();
    });
    const error = await userErrorOf(
      new OciClient({ plainHttp: true, sleep: async () => {} }).putManifest(
        `${host}/x/y`,
        { schemaVersion: 2 },
        { tag: "v1" },
      ),
    );
    expect([error.code, puts]).toEqual(["OCI_REGISTRY_UNAVAILABLE", 1]);
  });
});

describe("an endless error body (issue 22 item 8)", () => {
  test("is read to 64 KiB and cut: the error comes at once, memory stays flat", async () => {
    let offered = 0;
    const host = await serve((_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(64 * 1024, 120);
      const more = () => {
        // Up to 4 GiB, for as long as the client reads.
        while (offered < 4 * 1024 ** 3 && !res.destroyed) {
          offered += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", more);
        }
        res.end();
      };
      res.on("error", () => {});
      more();
    });
    const before = process.memoryUsage().rss;
    const started = Date.now();
    const error = await userErrorOf(
      new OciClient({ plainHttp: true, sleep: async () => {}, retry: { attempts: 0 } }).getManifest(`${host}/x/y:v1`),
    );
    expect(error.code).toBe("OCI_REGISTRY_UNAVAILABLE");
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(offered).toBeLessThan(64 * 1024 ** 2);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 ** 2);
    expect(error.why?.length).toBeLessThan(400);
  });
});
