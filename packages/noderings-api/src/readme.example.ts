// Generated from packages/noderings-api/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { formatUserError, isUserError } from "@nodekit/errors";
import { createNodeRingsClient } from "@nodekit/noderings-api";
import { fetchPins } from "@nodekit/version-pins";

// NR_API_URL=$(pnpm emulator:noderings | head -1) NR_API_TOKEN=nr-emulator-dev-token node example.ts
const api = createNodeRingsClient({ baseUrl: process.env.NR_API_URL ?? "", token: () => process.env.NR_API_TOKEN });
try {
  const { agent, created } = await api.ensureAgent({ name: "pve-node-1", architecture: "amd64" });
  console.log(created ? "created" : "reused", agent.name, agent.id, agent.state);
  const pins = await fetchPins(api, { arch: "amd64" }); // validated, every problem located
  console.log(pins.pins.name, pins.pins.tools.liqo.version, pins.hash);
} catch (error) {
  if (!isUserError(error)) throw error;
  console.error(formatUserError(error)); // the service's own message, why, next steps
  process.exitCode = error.exitCode;
}

export {};
