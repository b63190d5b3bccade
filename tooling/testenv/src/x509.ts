import { createHash, randomBytes } from "node:crypto";

// The X.509 facts the test tier's two certificate authorities share: testenv's control-plane
// PKI (pki.ts) and release-publisher's offline Fulcio-like CA (keyless.ts). Both build their
// certificates with pkijs; what is here needs no library, so pki.ts can still load pkijs only
// when it first issues a certificate.

/** Object identifiers of RFC 5280 (names, extensions, extended key usages). */
export const X509_OID = {
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  basicConstraints: "2.5.29.19",
  keyUsage: "2.5.29.15",
  extKeyUsage: "2.5.29.37",
  subjectAltName: "2.5.29.17",
  subjectKeyIdentifier: "2.5.29.14",
  authorityKeyIdentifier: "2.5.29.35",
  serverAuth: "1.3.6.1.5.5.7.3.1",
  clientAuth: "1.3.6.1.5.5.7.3.2",
  codeSigning: "1.3.6.1.5.5.7.3.3",
  timeStamping: "1.3.6.1.5.5.7.3.8",
} as const;

/** KeyUsage bits (RFC 5280 §4.2.1.3), most significant first. */
export const KEY_USAGE = { digitalSignature: 0, keyCertSign: 5, cRLSign: 6 } as const;

/** A KeyUsage BIT STRING's content for these bits: one byte, DER's trailing zero bits dropped. */
export function keyUsageBits(bits: readonly number[]): { valueHex: ArrayBuffer; unusedBits: number } {
  let value = 0;
  for (const bit of bits) value |= 0x80 >> bit;
  return { valueHex: new Uint8Array([value]).buffer, unusedBits: 7 - Math.max(...bits) };
}

/** A key identifier by RFC 5280's method 1: the SHA-1 of the subjectPublicKey bits. */
export function keyIdentifier(subjectPublicKey: Uint8Array): ArrayBuffer {
  const digest = createHash("sha1").update(subjectPublicKey).digest();
  return digest.buffer.slice(digest.byteOffset, digest.byteOffset + digest.byteLength) as ArrayBuffer;
}

/**
 * Random bytes for a positive INTEGER whose DER is minimal: first byte 0x01–0x7f. A first byte
 * of 0x00 followed by one below 0x80 is a non-minimal encoding, which Go's x509 (kube-apiserver,
 * etcd) refuses with "x509: malformed serial number", and so does Go's asn1 (a timestamp's nonce).
 */
export function minimalPositiveInteger(length: number): Buffer {
  const bytes = randomBytes(length);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return bytes;
}
