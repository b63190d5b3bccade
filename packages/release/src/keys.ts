import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign } from "node:crypto";
import type { Signer } from "@sigstore/sign";

/** cosign's key hint: base64 of the SHA-256 of the public key's SPKI DER. */
export function keyHint(publicKeyPem: string): string {
  const der = createPublicKey(publicKeyPem).export({ type: "spki", format: "der" });
  return createHash("sha256").update(der).digest("base64");
}

/** A new ECDSA P-256 key pair, PEM (PKCS#8 private, SPKI public), as `cosign generate-key-pair` makes (unencrypted). */
export function generateSigningKeyPair(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return {
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
  };
}

/** A Sigstore signer over a local private key (PEM): the bundle names the key by its hint. */
export function localKeySigner(
  privateKeyPem: string,
): Signer & { readonly publicKeyPem: string; readonly hint: string } {
  const privateKey = createPrivateKey(privateKeyPem);
  const publicKeyPem = createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString();
  const hint = keyHint(publicKeyPem);
  return {
    publicKeyPem,
    hint,
    sign: async (data) => ({
      signature: sign("sha256", data, privateKey),
      key: { $case: "publicKey", publicKey: publicKeyPem, hint },
    }),
  };
}
