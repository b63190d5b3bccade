import { describe, expect, test } from "vitest";
import { clientsFor } from "./kube.ts";
import { useControlPlane } from "./vitest.ts";

describe("ServiceAccount tokens (TokenRequest → TokenReview)", () => {
  test("a token minted for an audience validates for that audience and not for another", async () => {
    // Given a ServiceAccount in a fresh namespace
    const plane = await useControlPlane();
    const namespace = await plane.createNamespace("tokens");
    const { core, authn } = clientsFor(plane.adminKubeconfigPath);
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: "robot" } } });

    // When a token is minted for the audience "nvke-controller"
    const request = await core.createNamespacedServiceAccountToken({
      name: "robot",
      namespace,
      body: { spec: { audiences: ["nvke-controller"], expirationSeconds: 600 } },
    });
    const token = request.status?.token ?? "";
    expect(token).not.toBe("");

    // Then a TokenReview for that audience authenticates it as the ServiceAccount
    const accepted = await authn.createTokenReview({ body: { spec: { token, audiences: ["nvke-controller"] } } });
    expect(accepted.status?.authenticated).toBe(true);
    expect(accepted.status?.user?.username).toBe(`system:serviceaccount:${namespace}:robot`);
    expect(accepted.status?.user?.groups).toContain(`system:serviceaccounts:${namespace}`);
    expect(accepted.status?.audiences).toEqual(["nvke-controller"]);

    // And a TokenReview for another audience does not
    const rejected = await authn.createTokenReview({ body: { spec: { token, audiences: ["someone-else"] } } });
    expect(rejected.status?.authenticated).toBeFalsy();
    expect(rejected.status?.error).toMatch(/audience/i);
  });

  test("a token for a ServiceAccount that is deleted stops validating", async () => {
    const plane = await useControlPlane();
    const namespace = await plane.createNamespace("tokens-deleted");
    const { core, authn } = clientsFor(plane.adminKubeconfigPath);
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: "gone" } } });
    const request = await core.createNamespacedServiceAccountToken({
      name: "gone",
      namespace,
      body: { spec: { audiences: ["nvke-controller"] } },
    });
    await core.deleteNamespacedServiceAccount({ name: "gone", namespace });

    const review = await authn.createTokenReview({
      body: { spec: { token: request.status?.token ?? "", audiences: ["nvke-controller"] } },
    });
    expect(review.status?.authenticated).toBeFalsy();
  });
});
