// `./run sandbox pins next|served`: the platform publishing new pins, on the sandbox. NodeRings
// serves an agent its pin set (GET /api/v1/pins); `nr cluster upgrade` compares it with what
// the registration installed. `next` makes the sandbox's NodeRings emulator serve the served
// set with k3s and Calico one step on (tooling/nr-standins/fixtures/pins-next.json: k3s one
// minor, Calico one patch, both inside nr's skew rules), through the emulator's control route
// `/_emulator/pins` and its admin token; `served` puts back what it served before.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SandboxError } from "./errors.ts";
import { repoRoot, sandboxLayout } from "./layout.ts";

/** The components `next` moves: what an upgrade plan on the sandbox then shows changing. */
export const MOVED = ["k3s", "calico"] as const;

interface PinsLike {
  name: string;
  tools: Record<string, { version: string }>;
}

/** The served pin set with MOVED at the next versions, under a name of its own (pure). */
export function nextPins<T extends PinsLike>(served: T, next: Record<string, string>): T {
  const pins = structuredClone(served);
  pins.name = `${served.name}-next`;
  for (const component of MOVED) {
    const version = next[component];
    const tool = pins.tools[component];
    if (version === undefined || tool === undefined) throw new Error(`no next version or pin for ${component}`);
    tool.version = version;
  }
  return pins;
}

/** Makes the sandbox's NodeRings serve the next pins, or what it served before; returns the name now served. */
export async function setPlatformPins(options: {
  dir: string;
  url: string;
  which: "next" | "served";
}): Promise<string> {
  const layout = sandboxLayout(options.dir);
  const saved = join(layout.root, "noderings", "pins-served.json");
  const read = async (file: string) => (await readFile(file, "utf8")).trim();
  const [token, adminToken] = [await read(layout.noderingsToken), await read(layout.noderingsAdminToken)];
  const ask = async (path: string, init: RequestInit & { bearer: string }) => {
    const response = await fetch(new URL(path, options.url), {
      ...init,
      headers: { authorization: `Bearer ${init.bearer}`, "content-type": "application/json" },
    });
    if (!response.ok)
      throw new SandboxError(`the NodeRings emulator answered ${path} with ${response.status}`, {
        why: await response.text(),
      });
    return response.json() as Promise<unknown>;
  };
  let served: PinsLike;
  try {
    served = JSON.parse(await readFile(saved, "utf8")) as PinsLike;
  } catch {
    served = (await ask("/api/v1/pins?arch=amd64", { bearer: token })) as PinsLike;
    await writeFile(saved, `${JSON.stringify(served, null, 2)}\n`, { mode: 0o600 });
  }
  const { versions } = JSON.parse(
    await readFile(join(repoRoot, "tooling/nr-standins/fixtures/pins-next.json"), "utf8"),
  ) as { versions: Record<string, string> };
  const pins = options.which === "next" ? nextPins(served, versions) : served;
  await ask("/_emulator/pins", { method: "POST", body: JSON.stringify({ pins }), bearer: adminToken });
  return pins.name;
}
