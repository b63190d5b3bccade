import { describe, expect, it } from "vitest";
import { CommandFailedError, createExecaRunner, createRecordingRunner, formatCall, Redactor } from "./index.ts";

describe("Redactor", () => {
  it("removes every registered secret, longest first", () => {
    const redactor = new Redactor();
    redactor.add("tok");
    redactor.add("token-abc");
    redactor.add("");
    expect(redactor.size).toBe(2);
    expect(redactor.redact("Bearer token-abc and tok")).toBe("Bearer [REDACTED] and [REDACTED]");
  });
});

describe("formatCall", () => {
  it("shell-quotes arguments and redacts secret env and registered secrets", () => {
    const redactor = new Redactor();
    redactor.add("s3cret");
    const line = formatCall(
      {
        command: "helm",
        args: ["upgrade", "--install", "x", "./chart dir", "--set", "token=s3cret"],
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
    redactor.add("hunter2");
    const runner = createExecaRunner({ redactor, onCall: (line) => echoed.push(line) });
    const result = await runner.run({
      command: process.execPath,
      args: ["-e", "process.stdin.pipe(process.stdout); process.stderr.write(process.env.X)"],
      env: { X: "hunter2" },
      secretEnv: ["X"],
      input: "piped",
    });
    expect(result).toEqual({ exitCode: 0, stdout: "piped", stderr: "[REDACTED]" });
    expect(echoed[0]).toContain("X=[REDACTED]");
  });

  it("rejects with the exit code and redacted stderr, or resolves when failure is allowed", async () => {
    const redactor = new Redactor();
    redactor.add("pw-123");
    const runner = createExecaRunner({ redactor });
    const call = { command: process.execPath, args: ["-e", "console.error('bad pw-123'); process.exit(3)"] };
    const error = await runner.run(call).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommandFailedError);
    expect((error as CommandFailedError).exitCode).toBe(3);
    expect((error as CommandFailedError).message).toContain("bad [REDACTED]");
    expect((error as CommandFailedError).message).not.toContain("pw-123");
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
