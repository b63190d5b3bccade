import { afterEach, describe, expect, it, vi } from "vitest";
import {
  CommandFailedError,
  childEnv,
  createExecaRunner,
  createRecordingRunner,
  formatCall,
  MIN_SECRET_LENGTH,
  Redactor,
  redactCredentialFields,
} from "./index.ts";

describe("redactCredentialFields", () => {
  it("blanks credential-looking fields in YAML, JSON and headers, and leaves other text alone", () => {
    const text = [
      "    token: eyJhbGciOiJSUzI1NiJ9.abc",
      '  "client-key-data": "LS0tLS1CRUdJTiBFQw=="',
      "Authorization: Bearer abcdef123456",
      'password="hunter2hunter2"',
      "name: nke-controller",
      "secret: abc",
    ].join("\n");
    expect(redactCredentialFields(text).split("\n")).toEqual([
      "    token: [REDACTED]",
      '  "client-key-data": "[REDACTED]"',
      "Authorization: [REDACTED]",
      'password="[REDACTED]"',
      "name: nke-controller",
      "secret: abc",
    ]);
  });
});

describe("Redactor", () => {
  it("removes every registered secret, longest first", () => {
    const redactor = new Redactor();
    redactor.add("token-ab");
    redactor.add("token-abc-123");
    redactor.add("");
    expect(redactor.size).toBe(2);
    expect(redactor.redact("Bearer token-abc-123 and token-ab")).toBe("Bearer [REDACTED] and [REDACTED]");
  });

  it("does not redact a value shorter than 8 characters (it would mangle every line and show the secret by its gaps): reports it once, by name, never the value", () => {
    const reported: (string | undefined)[] = [];
    const redactor = new Redactor({ onShortSecret: (what) => reported.push(what) });
    const line = "GET /api/v1/clusters/a1b2 200 in 12 ms; kubectl apply -f site.yaml";
    for (const short of ["a", "1", "e", "ab", "api", "site.ya", "s3cr3t7"]) {
      expect(redactor.add(short, `the ${short.length}-character secret`)).toBe(false);
    }
    expect(redactor.add("api", "the 3-character secret")).toBe(false);
    expect(redactor.add("YTpi")).toBe(false);
    expect(redactor.add("YTpi")).toBe(false);
    expect(redactor.size).toBe(0);
    expect(redactor.redact(line)).toBe(line);
    // Once per name, or per value when unnamed: a value is never passed on.
    expect(reported).toEqual([
      "the 1-character secret",
      "the 2-character secret",
      "the 3-character secret",
      "the 7-character secret",
      undefined,
    ]);
    // Eight characters and more are redacted, and say so.
    expect(redactor.add("12345678", "the password")).toBe(true);
    expect(redactor.redact("pw 12345678 and 1234567")).toBe("pw [REDACTED] and 1234567");
    expect(reported).toHaveLength(5);
    // Without a callback, a short value is simply not redacted.
    const quiet = new Redactor();
    expect(quiet.add("hunter2")).toBe(false);
    expect(quiet.redact("hunter2 here")).toBe("hunter2 here");
    expect(MIN_SECRET_LENGTH).toBe(8);
  });
});

describe("formatCall", () => {
  it("shell-quotes arguments and redacts secret env and registered secrets", () => {
    const redactor = new Redactor();
    redactor.add("s3cret-token");
    const line = formatCall(
      {
        command: "helm",
        args: ["upgrade", "--install", "x", "./chart dir", "--set", "token=s3cret-token"],
        env: { KUBECONFIG: "/tmp/k", PVE_TOKEN: "abc" },
        secretEnv: ["PVE_TOKEN"],
        input: "hello",
      },
      redactor,
    );
    expect(line).toBe(
      "KUBECONFIG=/tmp/k PVE_TOKEN=[REDACTED] helm upgrade --install x './chart dir' --set token=[REDACTED] <<<(stdin: 5 bytes)",
    );
  });
});

describe("createRecordingRunner", () => {
  it("records calls in order and, without an inner runner, runs nothing", async () => {
    const recorder = createRecordingRunner({
      respond: (call) => (call.args[0] === "get" ? { exitCode: 0, stdout: "amd64\n", stderr: "" } : undefined),
    });
    await recorder.run({ command: "kubectl", args: ["apply", "-f", "a.yaml"] });
    const read = await recorder.run({ command: "kubectl", args: ["get", "nodes"] });
    expect(read.stdout).toBe("amd64\n");
    expect(recorder.calls.map((c) => c.line)).toEqual(["kubectl apply -f a.yaml", "kubectl get nodes"]);
  });
});

describe("createRecordingRunner with an inner runner", () => {
  it("records each call and runs it for real", async () => {
    const recorder = createRecordingRunner({ inner: createExecaRunner() });
    const result = await recorder.run({ command: process.execPath, args: ["-e", "process.stdout.write('ran')"] });
    expect(result.stdout).toBe("ran");
    expect(recorder.calls).toHaveLength(1);
    expect(recorder.calls[0]?.line).toContain("-e 'process.stdout.write('\\''ran'\\'')'");
  });
});

describe("createExecaRunner", () => {
  it("runs a real program, passing stdin and env, and echoes the redacted line", async () => {
    const echoed: string[] = [];
    const redactor = new Redactor();
    redactor.add("hunter2-hunter2");
    const runner = createExecaRunner({ redactor, onCall: (line) => echoed.push(line) });
    const result = await runner.run({
      command: process.execPath,
      args: ["-e", "process.stdin.pipe(process.stdout); process.stderr.write(process.env.X)"],
      env: { X: "hunter2-hunter2" },
      secretEnv: ["X"],
      input: "piped",
    });
    expect(result).toEqual({ exitCode: 0, stdout: "piped", stderr: "[REDACTED]" });
    expect(echoed[0]).toContain("X=[REDACTED]");
  });

  it("rejects with the exit code and redacted stderr, or resolves when failure is allowed", async () => {
    const redactor = new Redactor();
    redactor.add("pw-123456");
    const runner = createExecaRunner({ redactor });
    const call = { command: process.execPath, args: ["-e", "console.error('bad pw-123456'); process.exit(3)"] };
    const error = await runner.run(call).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommandFailedError);
    expect((error as CommandFailedError).exitCode).toBe(3);
    expect((error as CommandFailedError).message).toContain("bad [REDACTED]");
    expect((error as CommandFailedError).message).not.toContain("pw-123456");
    expect((await runner.run(call, { allowFailure: true })).exitCode).toBe(3);
  });

  it("says when the program is not on PATH", async () => {
    const error = await createExecaRunner()
      .run({ command: "definitely-not-a-program-nodekit", args: [] })
      .catch((e: unknown) => e);
    expect((error as CommandFailedError).notFound).toBe(true);
    expect((error as Error).message).toBe("definitely-not-a-program-nodekit was not found on PATH");
  });
});

describe("shellQuote", () => {
  it("leaves plain words alone and single-quotes the rest so they paste back", async () => {
    const { shellQuote } = await import("./index.ts");
    expect(shellQuote("--set=a.b=c")).toBe("--set=a.b=c");
    expect(shellQuote("")).toBe("''");
    expect(shellQuote("it's here")).toBe(`'it'\\''s here'`);
  });
});

describe("the environment a child gets (issue 22, item 4)", () => {
  // The secrets nr and nvkectl read from their environment, as canaries.
  const CANARIES = {
    NR_API_TOKEN: "canary-nr-api-token-4f1c",
    NR_PROXMOX_TOKEN_SECRET: "canary-proxmox-secret-77a2",
    NODEKIT_REGISTRY_PASSWORD: "canary-registry-password-9d0e",
    NVKE_NICO_API_KEY: "canary-nico-key-31b8",
    HELM_KUBETOKEN: "canary-helm-kubetoken-c5e7",
    KUBECONFIG: "/canary/other-cluster.kubeconfig",
  };
  const printEnv = ["-e", "process.stdout.write(JSON.stringify(process.env))"];
  afterEach(() => vi.unstubAllEnvs());

  it("holds none of the parent's secrets, and what every call and this call need", async () => {
    for (const [name, value] of Object.entries(CANARIES)) vi.stubEnv(name, value);
    vi.stubEnv("HTTPS_PROXY", "http://proxy.invalid:3128");
    vi.stubEnv("LC_ALL", "C.UTF-8");
    vi.stubEnv("CONTAINERD_HTTP_PROXY", "http://proxy.invalid:3128");
    vi.stubEnv("GOMEMLIMIT", "512MiB");
    vi.stubEnv("GOPROXY", "http://proxy.invalid/go");
    vi.stubEnv("KUBECACHEDIR", "/tmp/operator-kube-cache");

    const result = await createExecaRunner().run({
      command: process.execPath,
      args: printEnv,
      env: { INSTALL_K3S_VERSION: "v1.33.5+k3s1", HOME: "/tmp/helm-home" },
      inheritEnv: ["CONTAINERD_*"],
    });
    const seen = JSON.parse(result.stdout) as Record<string, string>;

    for (const [name, value] of Object.entries(CANARIES)) {
      expect(seen[name], name).toBeUndefined();
      expect(result.stdout).not.toContain(value);
    }
    expect(seen.PATH).toBe(process.env.PATH);
    expect(seen).toMatchObject({
      HTTPS_PROXY: "http://proxy.invalid:3128",
      LC_ALL: "C.UTF-8",
      CONTAINERD_HTTP_PROXY: "http://proxy.invalid:3128",
      INSTALL_K3S_VERSION: "v1.33.5+k3s1",
      HOME: "/tmp/helm-home",
      // The Go runtime's settings, as kubectl gets them in the operator's shell; not the go command's.
      GOMEMLIMIT: "512MiB",
      // kubectl's caches where the operator keeps them.
      KUBECACHEDIR: "/tmp/operator-kube-cache",
    });
    expect(seen.GOPROXY).toBeUndefined();
  });

  it("starts from the environment the runner is given", async () => {
    const runner = createExecaRunner({ env: { PATH: process.env.PATH, NR_API_TOKEN: "x-secret", TZ: "UTC" } });
    const seen = JSON.parse((await runner.run({ command: process.execPath, args: printEnv })).stdout);
    expect(Object.keys(seen).sort()).toEqual(["PATH", "TZ"]);
  });

  it("childEnv: prefixes, exact names, and the call's values over the parent's", () => {
    const parent = { XDG_RUNTIME_DIR: "/run/user/0", LCX: "no", LC_TIME: "C", HOME: "/root", SECRET: "s" };
    expect(childEnv(parent, { env: { HOME: "/h" }, inheritEnv: ["SECRET_NOT"] })).toEqual({
      XDG_RUNTIME_DIR: "/run/user/0",
      LC_TIME: "C",
      HOME: "/h",
    });
  });
});
