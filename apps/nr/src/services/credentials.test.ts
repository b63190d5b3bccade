import { formatUserError } from "@nodekit/errors";
import { testdir, userErrorOf } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { readProxmoxCredentials } from "./credentials.ts";

const SECRET = "0b7e7a52-canary-4d1f-9c7e-secret";

describe("Proxmox credentials", () => {
  it("reads a file, and registers the secret before anything else", async () => {
    const dir = await testdir({
      "pve.yaml": `url: https://pve.example:8006/api2/json\ntokenId: root@pam!nr\ntokenSecret: ${SECRET}\n`,
    });
    const secrets: string[] = [];
    const credentials = await readProxmoxCredentials({
      file: dir.path("pve.yaml"),
      onSecret: (s) => secrets.push(s),
      env: {},
    });
    expect(credentials).toEqual({
      url: "https://pve.example:8006/api2/json",
      tokenId: "root@pam!nr",
      tokenSecret: SECRET,
      source: `file ${dir.path("pve.yaml")}`,
    });
    expect(secrets).toContain(SECRET);
  });

  it("reads standard input with -", async () => {
    const credentials = await readProxmoxCredentials({
      file: "-",
      readStdin: async () =>
        JSON.stringify({ url: "https://pve:8006/api2/json", tokenId: "nr@pve!op", tokenSecret: SECRET }),
      onSecret: () => {},
      env: {},
    });
    expect(credentials.source).toBe("standard input");
  });

  it("reads the environment, the URL and token id also from flags", async () => {
    const credentials = await readProxmoxCredentials({
      url: "https://pve:8006/api2/json",
      env: { NR_PROXMOX_TOKEN_ID: "root@pam!nr", NR_PROXMOX_TOKEN_SECRET: SECRET },
      onSecret: () => {},
    });
    expect(credentials).toMatchObject({ tokenId: "root@pam!nr", source: "environment" });
  });

  it("asks on a terminal for what is missing, the secret masked", async () => {
    const asked: Array<{ message: string; secret: boolean }> = [];
    const credentials = await readProxmoxCredentials({
      env: { NR_PROXMOX_URL: "https://pve:8006/api2/json" },
      prompt: async (question) => {
        asked.push(question);
        return question.secret ? SECRET : "root@pam!nr";
      },
      onSecret: () => {},
    });
    expect(asked.map((q) => q.secret)).toEqual([false, true]);
    expect(credentials.source).toBe("prompt");
  });

  it("without a terminal, says what is missing and where it may come from", async () => {
    const error = await userErrorOf(readProxmoxCredentials({ env: {}, onSecret: () => {} }));
    expect(error.code).toBe("PROXMOX_CREDENTIALS_MISSING");
    expect(error.why).toContain("NR_PROXMOX_TOKEN_SECRET");
    expect(error.next.join("\n")).toContain("--skip-operator-install");
  });

  it("a malformed file lists every problem, and never the secret", async () => {
    const dir = await testdir({
      "pve.yaml": `url: not a url\ntokenId: root\ntokenSecret: ${SECRET}\nextra: ${SECRET}\n`,
    });
    const error = await userErrorOf(
      readProxmoxCredentials({ file: dir.path("pve.yaml"), env: {}, onSecret: () => {} }),
    );
    expect(error.code).toBe("PROXMOX_CREDENTIALS_INVALID");
    expect(error.problems.map((p) => p.path?.[0])).toEqual(["url", "tokenId", "extra"]);
    expect(formatUserError(error)).not.toContain(SECRET);
  });
});
