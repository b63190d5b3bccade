import { createPrivateKey, generateKeyPair, type KeyObject, X509Certificate } from "node:crypto";
import { promisify } from "node:util";
import { KEY_USAGE, keyIdentifier, keyUsageBits, minimalPositiveInteger, X509_OID as OID } from "./x509.ts";

/** A PEM certificate and its PKCS#8 PEM private key. */
export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

/** A throwaway certificate authority: signs the serving and client certificates. */
export interface CertificateAuthority extends KeyPairPem {
  readonly cert: X509Certificate;
  readonly key: KeyObject;
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

// ECDSA P-256 throughout: a key costs well under a millisecond (RSA-2048 took ~0.2 s), and so does
// each TLS handshake's signature, which kube-apiserver pays for every kubectl and new connection.
const P256 = { name: "ECDSA", namedCurve: "P-256" } as const;

// pkijs (the X.509 library tooling/release-publisher uses too) is loaded on first use: most processes
// that import this module (test workers through client.ts) never issue a certificate.
let libraries: Promise<[typeof import("asn1js"), typeof import("pkijs")]> | undefined;
const load = () => {
  libraries ??= Promise.all([import("asn1js"), import("pkijs")]);
  return libraries;
};
type Asn1 = typeof import("asn1js");
type Pkijs = typeof import("pkijs");
type Extension = import("pkijs").Extension;

interface EcKeyPair {
  privateKey: KeyObject;
  publicKeyDer: Buffer;
}

async function ecKeyPair(): Promise<EcKeyPair> {
  const { privateKey, publicKey } = await generateKeyPairAsync("ec", { namedCurve: "prime256v1" });
  return { privateKey, publicKeyDer: publicKey.export({ type: "spki", format: "der" }) };
}

const pkcs8Pem = (key: KeyObject): string => key.export({ type: "pkcs8", format: "pem" }).toString();

const arrayBuffer = (view: Uint8Array): ArrayBuffer =>
  view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength) as ArrayBuffer;

/** A random positive serial, minimal in DER (see {@link minimalPositiveInteger}): Go refuses any other. */
export function serialNumber(): string {
  return minimalPositiveInteger(16).toString("hex");
}

/**
 * A distinguished name with one attribute per RDN, each a UTF8String (so names like
 * `alice@example.com` survive). Made as DER and read back, so pkijs writes it as given rather
 * than folding every attribute into one multi-valued RDN.
 */
function distinguishedName(
  asn1: Asn1,
  pkijs: Pkijs,
  attributes: readonly [oid: string, value: string][],
): import("pkijs").RelativeDistinguishedNames {
  const der = new asn1.Sequence({
    value: attributes.map(
      ([type, value]) =>
        new asn1.Set({
          value: [new pkijs.AttributeTypeAndValue({ type, value: new asn1.Utf8String({ value }) }).toSchema()],
        }),
    ),
  }).toBER(false);
  return new pkijs.RelativeDistinguishedNames({ schema: asn1.fromBER(der).result });
}

const keyIdentifierOf = (spki: import("pkijs").PublicKeyInfo): ArrayBuffer =>
  keyIdentifier(spki.subjectPublicKey.valueBlock.valueHexView);

const keyUsage = (asn1: Asn1, bits: readonly number[]): import("asn1js").BitString =>
  new asn1.BitString(keyUsageBits(bits));

/** What builds a certificate's extensions: the loaded libraries and a helper that wraps a DER value. */
interface Builder {
  asn1: Asn1;
  pkijs: Pkijs;
  extension(extnID: string, critical: boolean, value: import("asn1js").AsnType): Extension;
}

interface Request {
  subject: readonly [oid: string, value: string][];
  /** The issuer's certificate (DER), or none for a self-signed one. */
  issuerDer?: Uint8Array;
  publicKeyDer: Uint8Array;
  signingKey: KeyObject;
  now: Date;
  extensions: (builder: Builder) => Extension[];
}

async function sign(request: Request): Promise<string> {
  const [asn1, pkijs] = await load();
  const extension: Builder["extension"] = (extnID, critical, value) =>
    new pkijs.Extension({ extnID, critical, extnValue: value.toBER(false) });
  const issuer =
    request.issuerDer === undefined
      ? undefined
      : new pkijs.Certificate({ schema: asn1.fromBER(arrayBuffer(request.issuerDer)).result });

  const cert = new pkijs.Certificate();
  cert.version = 2;
  cert.serialNumber = new asn1.Integer({ valueHex: arrayBuffer(Buffer.from(serialNumber(), "hex")) });
  cert.subject = distinguishedName(asn1, pkijs, request.subject);
  // The CA's subject as its certificate holds it, byte for byte: Go matches issuer to subject by their DER.
  cert.issuer = issuer?.subject ?? cert.subject;
  // An hour of slack before now for clock skew; a year after, so a sandbox left running survives.
  cert.notBefore.value = new Date(request.now.getTime() - 3_600_000);
  cert.notAfter.value = new Date(request.now.getTime() + 365 * 86_400_000);
  cert.subjectPublicKeyInfo = new pkijs.PublicKeyInfo({
    schema: asn1.fromBER(arrayBuffer(request.publicKeyDer)).result,
  });
  cert.extensions = [
    ...request.extensions({ asn1, pkijs, extension }),
    extension(
      OID.subjectKeyIdentifier,
      false,
      new asn1.OctetString({ valueHex: keyIdentifierOf(cert.subjectPublicKeyInfo) }),
    ),
    // An issued certificate names its CA's key (a self-signed CA needs no such pointer to itself).
    ...(issuer === undefined
      ? []
      : [
          extension(
            OID.authorityKeyIdentifier,
            false,
            new pkijs.AuthorityKeyIdentifier({
              keyIdentifier: new asn1.OctetString({ valueHex: keyIdentifierOf(issuer.subjectPublicKeyInfo) }),
            }).toSchema(),
          ),
        ]),
  ];
  const signingKey = await globalThis.crypto.subtle.importKey(
    "pkcs8",
    request.signingKey.export({ type: "pkcs8", format: "der" }),
    P256,
    false,
    ["sign"],
  );
  await cert.sign(signingKey, "SHA-256");
  return new X509Certificate(Buffer.from(cert.toSchema(true).toBER(false))).toString();
}

export async function createCertificateAuthority(options: PkiOptions = {}): Promise<CertificateAuthority> {
  const keys = await ecKeyPair();
  const certPem = await sign({
    subject: [[OID.commonName, options.commonName ?? "nodekit-testenv-ca"]],
    publicKeyDer: keys.publicKeyDer,
    signingKey: keys.privateKey,
    now: options.now ?? new Date(),
    extensions: ({ asn1, pkijs, extension }) => [
      extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: true }).toSchema()),
      extension(
        OID.keyUsage,
        true,
        keyUsage(asn1, [KEY_USAGE.digitalSignature, KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign]),
      ),
    ],
  });
  return { cert: new X509Certificate(certPem), key: keys.privateKey, certPem, keyPem: pkcs8Pem(keys.privateKey) };
}

async function issue(
  ca: CertificateAuthority,
  subject: readonly [oid: string, value: string][],
  extensions: (builder: Builder) => Extension[],
  options: PkiOptions,
): Promise<KeyPairPem> {
  const keys = await ecKeyPair();
  const certPem = await sign({
    subject,
    issuerDer: ca.cert.raw,
    publicKeyDer: keys.publicKeyDer,
    signingKey: ca.key,
    now: options.now ?? new Date(),
    extensions: (builder) => [
      builder.extension(OID.basicConstraints, true, new builder.pkijs.BasicConstraints({ cA: false }).toSchema()),
      // An ECDSA key only signs: digitalSignature, and no keyEncipherment (RSA key transport).
      builder.extension(OID.keyUsage, true, keyUsage(builder.asn1, [KEY_USAGE.digitalSignature])),
      ...extensions(builder),
    ],
  });
  return { certPem, keyPem: pkcs8Pem(keys.privateKey) };
}

const extendedKeyUsage = ({ pkijs, extension }: Builder, purpose: string): Extension =>
  extension(OID.extKeyUsage, false, new pkijs.ExtKeyUsage({ keyPurposes: [purpose] }).toSchema());

const ipv4Bytes = (ip: string): ArrayBuffer => new Uint8Array(ip.split(".").map(Number)).buffer;

/** A serving certificate for kube-apiserver on loopback (and its in-cluster names). */
export function issueServingCertificate(ca: CertificateAuthority, options: PkiOptions = {}): Promise<KeyPairPem> {
  const ips = ["127.0.0.1", "10.0.0.1"]; // 10.0.0.1: the `kubernetes` Service's cluster IP in 10.0.0.0/24
  const dnsNames = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"];
  return issue(
    ca,
    [[OID.commonName, "kube-apiserver"]],
    (builder) => {
      const { asn1, pkijs, extension } = builder;
      const names = new pkijs.GeneralNames({
        names: [
          // GeneralName 7: iPAddress (4 octets); 2: dNSName.
          ...ips.map(
            (ip) => new pkijs.GeneralName({ type: 7, value: new asn1.OctetString({ valueHex: ipv4Bytes(ip) }) }),
          ),
          ...dnsNames.map((value) => new pkijs.GeneralName({ type: 2, value })),
        ],
      });
      return [extendedKeyUsage(builder, OID.serverAuth), extension(OID.subjectAltName, false, names.toSchema())];
    },
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
    [
      [OID.commonName, identity.user],
      ...(identity.groups ?? []).map((group): [string, string] => [OID.organization, group]),
    ],
    (builder) => [extendedKeyUsage(builder, OID.clientAuth)],
    options,
  );
}

/** Reads back a CA written by {@link createCertificateAuthority}, so another process can issue client certificates. */
export function loadCertificateAuthority(pem: KeyPairPem): CertificateAuthority {
  return {
    cert: new X509Certificate(pem.certPem),
    key: createPrivateKey(pem.keyPem),
    certPem: pem.certPem,
    keyPem: pem.keyPem,
  };
}

/**
 * The service-account token signing key pair (PKCS#8 private key, SPKI public key), ECDSA P-256:
 * kube-apiserver signs the tokens ES256, and every reader checks them through a TokenReview.
 */
export async function createSigningKeyPair(): Promise<{ privateKeyPem: string; publicKeyPem: string }> {
  const { privateKey, publicKey } = await generateKeyPairAsync("ec", { namedCurve: "prime256v1" });
  return {
    privateKeyPem: pkcs8Pem(privateKey),
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
  };
}
