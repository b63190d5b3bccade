import { generateKeyPair, randomBytes } from "node:crypto";
import { promisify } from "node:util";
import forge from "node-forge";

/** A PEM certificate and its PKCS#8 PEM private key. */
export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

/** A throwaway certificate authority: signs the serving and client certificates. */
export interface CertificateAuthority extends KeyPairPem {
  readonly cert: forge.pki.Certificate;
  readonly key: forge.pki.rsa.PrivateKey;
}

export interface ClientIdentity {
  /** Becomes the certificate's CN, which kube-apiserver takes as the user name. */
  user: string;
  /** Become the certificate's O attributes, which kube-apiserver takes as groups. */
  groups?: readonly string[];
}

export interface PkiOptions {
  now?: Date;
  /** The CA's common name (default `nodekit-testenv-ca`). */
  commonName?: string;
}

const generateKeyPairAsync = promisify(generateKeyPair);

// Keys come from node:crypto (native, ~0.2 s per RSA-2048 key off the main thread);
// node-forge only assembles and signs the certificates.
async function rsaKeyPair(): Promise<{ privateKeyPem: string; publicKeyPem: string }> {
  const { privateKey, publicKey } = await generateKeyPairAsync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/**
 * A random positive serial whose DER INTEGER is minimal: first byte 0x01–0x7f. A first byte of 0x00
 * followed by one below 0x80 is a non-minimal encoding, which Go's x509 (kube-apiserver, etcd) refuses
 * with "x509: malformed serial number": one certificate in 256 made the control plane fail to start.
 */
export function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return bytes.toString("hex");
}

// UTF8String, not forge's default PrintableString, so names like `alice@example.com` survive.
function attribute(shortName: "CN" | "O", value: string): forge.pki.CertificateField {
  return { shortName, value, valueTagClass: forge.asn1.Type.UTF8 as unknown as forge.asn1.Class };
}

function newCertificate(publicKeyPem: string, now: Date): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKeyPem);
  cert.serialNumber = serialNumber();
  // An hour of slack before now for clock skew; a year after, so a sandbox left running survives.
  cert.validity.notBefore = new Date(now.getTime() - 3_600_000);
  cert.validity.notAfter = new Date(now.getTime() + 365 * 86_400_000);
  return cert;
}

export async function createCertificateAuthority(options: PkiOptions = {}): Promise<CertificateAuthority> {
  const keys = await rsaKeyPair();
  const key = forge.pki.privateKeyFromPem(keys.privateKeyPem) as forge.pki.rsa.PrivateKey;
  const cert = newCertificate(keys.publicKeyPem, options.now ?? new Date());
  const name = [attribute("CN", options.commonName ?? "nodekit-testenv-ca")];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(key, forge.md.sha256.create());
  return { cert, key, certPem: forge.pki.certificateToPem(cert), keyPem: keys.privateKeyPem };
}

async function issue(
  ca: CertificateAuthority,
  subject: forge.pki.CertificateField[],
  extensions: object[],
  options: PkiOptions,
): Promise<KeyPairPem> {
  const keys = await rsaKeyPair();
  const cert = newCertificate(keys.publicKeyPem, options.now ?? new Date());
  cert.setSubject(subject);
  cert.setIssuer(ca.cert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "authorityKeyIdentifier", keyIdentifier: ca.cert.generateSubjectKeyIdentifier().getBytes() },
    ...extensions,
  ]);
  cert.sign(ca.key, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.privateKeyPem };
}

/** A serving certificate for kube-apiserver on loopback (and its in-cluster names). */
export function issueServingCertificate(ca: CertificateAuthority, options: PkiOptions = {}): Promise<KeyPairPem> {
  const dnsNames = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"];
  return issue(
    ca,
    [attribute("CN", "kube-apiserver")],
    [
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 7, ip: "127.0.0.1" },
          { type: 7, ip: "10.0.0.1" }, // the `kubernetes` Service's cluster IP in 10.0.0.0/24
          ...dnsNames.map((value) => ({ type: 2, value })),
        ],
      },
    ],
    options,
  );
}

/** A client certificate for a user and groups, as kube-apiserver's x509 authenticator reads them. */
export function issueClientCertificate(
  ca: CertificateAuthority,
  identity: ClientIdentity,
  options: PkiOptions = {},
): Promise<KeyPairPem> {
  return issue(
    ca,
    [attribute("CN", identity.user), ...(identity.groups ?? []).map((group) => attribute("O", group))],
    [
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", clientAuth: true },
    ],
    options,
  );
}

/** Reads back a CA written by {@link createCertificateAuthority}, so another process can issue client certificates. */
export function loadCertificateAuthority(pem: KeyPairPem): CertificateAuthority {
  return {
    cert: forge.pki.certificateFromPem(pem.certPem),
    key: forge.pki.privateKeyFromPem(pem.keyPem) as forge.pki.rsa.PrivateKey,
    certPem: pem.certPem,
    keyPem: pem.keyPem,
  };
}

/** The service-account token signing key pair (PKCS#8 private key, SPKI public key): tokens are RS256. */
export function createSigningKeyPair(): Promise<{ privateKeyPem: string; publicKeyPem: string }> {
  return rsaKeyPair();
}
