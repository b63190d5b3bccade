import { writeFile } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { ExitCode } from "@nodekit/errors";
import { tempDir, tokenKubeconfig, userErrorOf } from "@nodekit/test-utils";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { discoverAudience } from "./discover.ts";
import { mintToken } from "./mint.ts";

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ path: dir, cleanup } = await tempDir("k8s-auth-kube-"));
});
afterEach(() => cleanup());

/** A port that refuses connections: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe("the kubeconfig", () => {
  test("a missing file is KUBECONFIG_NOT_FOUND (NotFound), naming it", async () => {
    const path = join(dir, "nope.kubeconfig");
    const error = await userErrorOf(discoverAudience(path));
    expect(error.code).toBe("KUBECONFIG_NOT_FOUND");
    expect(error.exitCode).toBe(ExitCode.NotFound);
    expect(error.message).toContain(path);
  });

  test("a file that is not a kubeconfig is KUBECONFIG_INVALID (InvalidInput)", async () => {
    const path = join(dir, "bad.kubeconfig");
    await writeFile(path, "clusters: [unclosed\n");
    const error = await userErrorOf(mintToken(path, { audience: "a" }));
    expect(error).toMatchObject({ code: "KUBECONFIG_INVALID", exitCode: ExitCode.InvalidInput });
    expect(error.message).toContain(path);
  });

  test("a kubeconfig without a current cluster is KUBECONFIG_INVALID", async () => {
    const path = join(dir, "empty.kubeconfig");
    await writeFile(path, "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n");
    const error = await userErrorOf(discoverAudience(path));
    expect(error).toMatchObject({ code: "KUBECONFIG_INVALID", exitCode: ExitCode.InvalidInput });
    expect(error.message).toMatch(/has no current cluster/);
  });
});

describe("an unreachable cluster", () => {
  test("connection refused is KUBE_UNREACHABLE (Unreachable), naming the kubeconfig and the server", async () => {
    // Given a kubeconfig whose server refuses connections
    const server = `https://127.0.0.1:${await closedPort()}`;
    const path = join(dir, "site.kubeconfig");
    await writeFile(path, tokenKubeconfig({ server, token: "not-a-real-token", insecure: true }));

    // When the audience is looked up
    const error = await userErrorOf(discoverAudience(path));

    // Then the error says which cluster and which kubeconfig, and what to check
    expect(error.code).toBe("KUBE_UNREACHABLE");
    expect(error.exitCode).toBe(ExitCode.Unreachable);
    expect(error.message).toBe(`cannot reach the site cluster at ${server}`);
    expect(error.why).toContain("ECONNREFUSED");
    expect(error.why).toContain(path);
    expect(error.next.join("\n")).toContain(`kubectl --kubeconfig ${path} get --raw /readyz`);
  });

  describe("a server that accepts connections and never answers", () => {
    let hung: Server;
    const sockets: Socket[] = [];
    beforeEach(async () => {
      hung = createServer((socket) => sockets.push(socket));
      await new Promise<void>((r) => hung.listen(0, "127.0.0.1", r));
    });
    afterEach(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((r) => hung.close(() => r()));
    });

    test("times out after requestTimeoutMs as KUBE_UNREACHABLE", async () => {
      const address = hung.address();
      const port = typeof address === "object" && address ? address.port : 0;
      const path = join(dir, "hung.kubeconfig");
      await writeFile(
        path,
        tokenKubeconfig({ server: `https://127.0.0.1:${port}`, token: "not-a-real-token", insecure: true }),
      );

      const started = Date.now();
      const error = await userErrorOf(discoverAudience(path, { requestTimeoutMs: 300 }));

      expect(Date.now() - started).toBeLessThan(5_000);
      expect(error).toMatchObject({ code: "KUBE_UNREACHABLE", exitCode: ExitCode.Unreachable });
      expect(error.why).toMatch(/no answer in time/);
    });
  });
});
