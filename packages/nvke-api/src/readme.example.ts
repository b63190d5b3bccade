// Generated from packages/nvke-api/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { formatUserError, isUserError } from "@nodekit/errors";
import { createNvkeClient } from "@nodekit/nvke-api";

const client = createNvkeClient({ baseUrl: "http://127.0.0.1:30080", token: async () => process.env.NVKE_TOKEN });
try {
  for await (const cluster of client.listClusters()) console.log(cluster.name, cluster.id, cluster.status.phase);
  const cluster = await client.getClusterByName("capd-demo");
  const pool = await client.getNodePoolByName(cluster.id, "workers");
  console.log((await client.scaleNodePool(pool.id, 5)).status);
} catch (error) {
  if (!isUserError(error)) throw error;
  console.error(formatUserError(error)); // the controller's own message, why, next steps
  process.exitCode = error.exitCode;
}

export {};
