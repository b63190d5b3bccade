// Generated from packages/http/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { classifyTransportError, createTransport, request, TransportError } from "@nodekit/http";

const transport = createTransport({ keepAlive: true }); // the system's CAs; `ca` names your own
try {
  const answer = await request({ url: "http://127.0.0.1:8080/healthz", transport, timeoutMs: 5_000 });
  console.log(answer.status, answer.text()); // 200 {"status":"ok"}
} catch (error) {
  if (!(error instanceof TransportError)) throw error;
  console.log(classifyTransportError(error).reason); // "connection refused", "the host name does not resolve", …
} finally {
  transport.close();
}

export {};
