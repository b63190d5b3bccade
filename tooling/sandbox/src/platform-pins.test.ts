import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { repoRoot } from "./layout.ts";
import { MOVED, nextPins } from "./platform-pins.ts";

/** A served pin set as NodeRings serves one (the shape nextPins reads; the rest rides along untouched). */
const SERVED = {
  name: "emulator-v1.33.5+k3s1",
  tools: {
    k3s: { version: "v1.33.5+k3s1" },
    calico: { version: "v3.30.3" },
    liqo: { version: "v1.0.1" },
    liqoctl: { version: "v1.0.1", artifacts: { amd64: { url: "https://example.invalid/liqoctl", sha256: "00" } } },
  },
};

const next = JSON.parse(readFileSync(join(repoRoot, "tooling/nr-standins/fixtures/pins-next.json"), "utf8")) as {
  versions: Record<string, string>;
};

test("next moves k3s and Calico to the fixture's versions, under a name of its own, and nothing else", () => {
  const served = structuredClone(SERVED);
  const moved = nextPins(served, next.versions);
  expect(moved.name).toBe(`${served.name}-next`);
  expect(moved.tools.k3s.version).toBe("v1.34.1+k3s1");
  expect(moved.tools.calico.version).toBe("v3.30.4");
  for (const [tool, pin] of Object.entries(served.tools)) {
    if ((MOVED as readonly string[]).includes(tool)) continue;
    expect(moved.tools[tool as keyof typeof moved.tools], tool).toEqual(pin);
  }
  // the served set itself is left as it was (it is put back by `pins served`)
  expect(served).toEqual(SERVED);
});

test("a component the next set does not name is refused, not served half-moved", () => {
  expect(() => nextPins(structuredClone(SERVED), { k3s: "v1.34.1+k3s1" })).toThrow(/calico/);
});
