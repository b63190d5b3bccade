import { describe, expect, it } from "vitest";
import { calicoManifests } from "./calico.ts";

describe("Calico's manifests per release (issue 23, item 10)", () => {
  const base = "https://raw.githubusercontent.com/projectcalico/calico/vX/manifests/";
  it("up to 3.31 the CRDs are operator-crds.yaml; from 3.32 on, v1_crd_projectcalico_org.yaml", () => {
    for (const [version, crds] of [
      ["v3.30.3", "operator-crds.yaml"],
      ["v3.31.2", "operator-crds.yaml"],
      ["v3.32.0", "v1_crd_projectcalico_org.yaml"],
      ["v3.32.2", "v1_crd_projectcalico_org.yaml"],
      ["v4.0.0", "v1_crd_projectcalico_org.yaml"],
    ] as const) {
      expect(calicoManifests(base, version), version).toEqual({
        crds: `${base}${crds}`,
        operator: `${base}tigera-operator.yaml`,
      });
    }
  });
});
