import { join } from "node:path";
import { portPicker, squattedPort } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { binaries } from "./binaries.ts";
import { startFluxControllers } from "./flux-controllers.ts";
import { run } from "./int-helpers.ts";
import { useControlPlane } from "./vitest.ts";

// startFluxControllers on a port that another process took between freePort() and the
// controller's bind. source-controller answers its readiness probe before it binds its
// artifact server (main.go starts that server after `<-mgr.Elected()`) and exits when that
// bind fails: a CI run saw every OCIRepository stay without a Ready condition after exactly that.

describe("startFluxControllers", () => {
  test("a storage port taken before source-controller binds it: it starts again on new ports and says so", async () => {
    // Given a cluster with Flux's CRDs, and a port handed out while something else listens on it
    const plane = await useControlPlane({ dedicated: true });
    const kubeconfig = plane.adminKubeconfigPath;
    const crds = join(await binaries("flux"), "crds");
    await run("kubectl", ["--kubeconfig", kubeconfig, "apply", "--server-side", "--filename", crds]);
    const taken = await squattedPort();
    const picker = portPicker(taken.port);
    const lines: string[] = [];
    try {
      // When the controllers start with it as source-controller's storage port (its first pick)
      const flux = await startFluxControllers({
        kubeconfig,
        log: (line) => lines.push(line),
        pickPort: picker.pick,
      });
      try {
        // Then source-controller started again on other ports, after saying why, and serves
        // its artifacts from a port of its own
        expect(lines.join("\n")).toMatch(
          /source-controller found a port taken \(.*address already in use.*\); trying new ports/,
        );
        expect(picker.picks).toBeGreaterThanOrEqual(8); // storage, metrics, health twice; kustomize-controller's two
        expect(flux.storageAddress).not.toBe(`127.0.0.1:${taken.port}`);
        const answer = await fetch(`http://${flux.storageAddress}/`);
        expect(answer.status).toBe(200);
        expect(await answer.text()).toMatch(/^<!doctype html>\n.*<pre>/s); // Go's http.FileServer listing
      } finally {
        await flux.stop();
      }
    } finally {
      await taken.close();
    }
  });
});
