import { createPrivateKey, createPublicKey, X509Certificate } from "node:crypto";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { describe, expect, test } from "vitest";
import {
  createCertificateAuthority,
  createSigningKeyPair,
  issueClientCertificate,
  issueServingCertificate,
  loadCertificateAuthority,
  serialNumber,
} from "./pki.ts";

/** The certificate's extensions by OID, each as its DER value in hex, and its serial's DER octets. */
function parsed(pem: string): { extensions: Map<string, { critical: boolean; hex: string }>; serial: Uint8Array } {
  const der = new X509Certificate(pem).raw;
  const cert = new pkijs.Certificate({ schema: asn1js.fromBER(new Uint8Array(der)).result });
  const extensions = new Map(
    (cert.extensions ?? []).map((e) => [
      e.extnID,
      { critical: e.critical, hex: Buffer.from(e.extnValue.valueBlock.valueHexView).toString("hex") },
    ]),
  );
  return { extensions, serial: cert.serialNumber.valueBlock.valueHexView };
}

const KEY_USAGE = "2.5.29.15";
const SUBJECT_KEY_ID = "2.5.29.14";
const AUTHORITY_KEY_ID = "2.5.29.35";

describe("pki", () => {
  test("client certificates carry the user as CN and each group as O, signed by the CA", async () => {
    // Given a CA, reloaded from PEM as another process would
    const ca = loadCertificateAuthority(await createCertificateAuthority());

    // When a certificate is issued for a user with groups
    const issued = await issueClientCertificate(ca, { user: "alice@example.com", groups: ["devs", "system:ops"] });

    // Then kube-apiserver's reading of it holds: CN user, O groups, client auth, issued by the CA
    const cert = new X509Certificate(issued.certPem);
    expect(cert.subject.split("\n")).toEqual(["CN=alice@example.com", "O=devs", "O=system:ops"]);
    expect(cert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.2"]);
    expect(cert.ca).toBe(false);
    expect(cert.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
    expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(issued.keyPem).toContain("BEGIN PRIVATE KEY");
  });

  test("every key is ECDSA P-256, each certificate's key only signs, and key identifiers link it to the CA", async () => {
    const ca = await createCertificateAuthority();
    const serving = await issueServingCertificate(ca);
    const client = await issueClientCertificate(ca, { user: "bob" });
    const signing = await createSigningKeyPair();

    // P-256 keys, PKCS#8 private (what kube-apiserver, etcd and kubectl load) and SPKI public
    for (const keyPem of [ca.keyPem, serving.keyPem, client.keyPem, signing.privateKeyPem]) {
      expect(keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
      expect(createPrivateKey(keyPem).asymmetricKeyDetails).toEqual({ namedCurve: "prime256v1" });
    }
    expect(createPublicKey(signing.publicKeyPem).asymmetricKeyType).toBe("ec");
    expect(createPublicKey(signing.publicKeyPem).export({ type: "spki", format: "pem" })).toBe(signing.publicKeyPem);

    // The CA signs certificates (keyCertSign, cRLSign) and names its key
    const authority = parsed(ca.certPem);
    expect(authority.extensions.get(KEY_USAGE)).toEqual({ critical: true, hex: "03020186" });
    const caKeyId = authority.extensions.get(SUBJECT_KEY_ID)?.hex.slice(4); // past the OCTET STRING header
    expect(caKeyId).toMatch(/^[0-9a-f]{40}$/);
    for (const { certPem, keyPem } of [serving, client]) {
      const leaf = parsed(certPem);
      // digitalSignature alone: an ECDSA key has no keyEncipherment
      expect(leaf.extensions.get(KEY_USAGE)).toEqual({ critical: true, hex: "03020780" });
      expect(leaf.extensions.get(AUTHORITY_KEY_ID)?.hex).toBe(`30168014${caKeyId}`);
      expect(leaf.extensions.get(SUBJECT_KEY_ID)?.hex).toMatch(/^0414[0-9a-f]{40}$/);
      expect(new X509Certificate(certPem).publicKey.equals(createPublicKey(keyPem))).toBe(true);
      // A minimal positive DER serial, as Go's x509 requires
      expect(leaf.serial).toHaveLength(16);
      expect(leaf.serial[0]).toBeGreaterThanOrEqual(0x01);
      expect(leaf.serial[0]).toBeLessThanOrEqual(0x7f);
    }
  });

  test("the serving certificate is for loopback and the in-cluster names", async () => {
    const ca = await createCertificateAuthority();
    const cert = new X509Certificate((await issueServingCertificate(ca)).certPem);
    expect(cert.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(cert.checkHost("localhost")).toBe("localhost");
    expect(cert.checkHost("kubernetes.default.svc")).toBe("kubernetes.default.svc");
    expect(cert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
    expect(new X509Certificate(ca.certPem).ca).toBe(true);
  });

  test("every serial is a minimal positive DER INTEGER, which Go's x509 requires", () => {
    // A leading 0x00 before a byte below 0x80 (or any first byte ≥ 0x80) makes kube-apiserver exit
    // with "x509: malformed serial number"; 4096 draws make a 1-in-256 regression all but certain to show.
    for (let draw = 0; draw < 4096; draw++) {
      const first = Number.parseInt(serialNumber().slice(0, 2), 16);
      expect(first).toBeGreaterThanOrEqual(0x01);
      expect(first).toBeLessThanOrEqual(0x7f);
    }
  });
});
