import { X509Certificate } from "node:crypto";
import { describe, expect, test } from "vitest";
import {
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
  loadCertificateAuthority,
  serialNumber,
} from "./pki.ts";

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
