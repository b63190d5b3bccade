/**
 * Keyless signing, offline: a Fulcio-like certificate authority (a root that issues
 * short-lived leaves naming a signer by its SAN and OIDC issuer, as Fulcio's do), an RFC 3161
 * timestamp authority, a Rekor-like transparency log, and the Sigstore trusted root that
 * names them. Everything is made in memory and nothing is fetched or served, so tests sign
 * releases the way a CI identity would and verify them with no network.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, webcrypto } from "node:crypto";
import {
  KEY_USAGE,
  keyUsageBits,
  minimalPositiveInteger,
  X509_OID,
  keyIdentifier as x509KeyIdentifier,
} from "@nodekit/testenv/x509";
import { json } from "@sigstore/core";
import type { Signer, Witness } from "@sigstore/sign";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";

const OID = {
  ...X509_OID,
  /** Fulcio's OIDC issuer extension: v1 holds the raw string, v2 a DER UTF8String. */
  fulcioIssuerV1: "1.3.6.1.4.1.57264.1.1",
  fulcioIssuerV2: "1.3.6.1.4.1.57264.1.8",
  /** RFC 6962 §3.3: the SCTs embedded in a certificate. */
  embeddedScts: "1.3.6.1.4.1.11129.2.4.2",
  sha256: "2.16.840.1.101.3.4.2.1",
  signedData: "1.2.840.113549.1.7.2",
  tstInfo: "1.2.840.113549.1.9.16.1.4",
  contentTypeAttribute: "1.2.840.113549.1.9.3",
  messageDigestAttribute: "1.2.840.113549.1.9.4",
  signingTimeAttribute: "1.2.840.113549.1.9.5",
  signingCertificateV2Attribute: "1.2.840.113549.1.9.16.2.47",
  tsaPolicy: "1.3.6.1.4.1.57264.2",
} as const;

const MINUTE = 60_000;
const P256 = { name: "ECDSA", namedCurve: "P-256" } as const;

type Clock = () => Date;

interface KeyPair {
  privateKey: webcrypto.CryptoKey;
  publicKeyDer: Uint8Array;
}

async function newKeyPair(): Promise<KeyPair> {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return {
    privateKey: await webcrypto.subtle.importKey(
      "pkcs8",
      privateKey.export({ type: "pkcs8", format: "der" }),
      P256,
      false,
      ["sign"],
    ),
    publicKeyDer: new Uint8Array(publicKey.export({ type: "spki", format: "der" })),
  };
}

const bytes = (view: ArrayBuffer | Uint8Array): ArrayBuffer =>
  view instanceof ArrayBuffer
    ? view
    : (view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength) as ArrayBuffer);

function distinguishedName(organization: string, commonName: string): pkijs.RelativeDistinguishedNames {
  return new pkijs.RelativeDistinguishedNames({
    typesAndValues: [
      new pkijs.AttributeTypeAndValue({
        type: OID.organization,
        value: new asn1js.Utf8String({ value: organization }),
      }),
      new pkijs.AttributeTypeAndValue({ type: OID.commonName, value: new asn1js.Utf8String({ value: commonName }) }),
    ],
  });
}

function spki(der: Uint8Array): pkijs.PublicKeyInfo {
  return new pkijs.PublicKeyInfo({ schema: asn1js.fromBER(bytes(der)).result });
}

/** The key identifier (RFC 5280's method 1) of an SPKI's key. */
const keyIdentifier = (publicKeyDer: Uint8Array): ArrayBuffer =>
  x509KeyIdentifier(spki(publicKeyDer).subjectPublicKey.valueBlock.valueHexView);

function extension(extnID: string, critical: boolean, value: asn1js.AsnType | ArrayBuffer): pkijs.Extension {
  return new pkijs.Extension({
    extnID,
    critical,
    extnValue: value instanceof ArrayBuffer ? value : value.toBER(false),
  });
}

const keyUsage = (bits: readonly number[]): asn1js.BitString => new asn1js.BitString(keyUsageBits(bits));

/** A random positive INTEGER in minimal DER: Go's x509 and asn1 reject any other encoding. */
const randomInteger = (length: number): asn1js.Integer =>
  new asn1js.Integer({ valueHex: bytes(minimalPositiveInteger(length)) });

const serialNumber = () => randomInteger(16);

interface CertificateRequest {
  subject: pkijs.RelativeDistinguishedNames;
  issuer: pkijs.RelativeDistinguishedNames;
  publicKeyDer: Uint8Array;
  issuerPublicKeyDer: Uint8Array;
  signingKey: webcrypto.CryptoKey;
  notBefore: Date;
  notAfter: Date;
  extensions: pkijs.Extension[];
}

/**
 * `embed`: an extension made from the TBS certificate as signed without it, added before the
 * final signature (a CT log's SCT list: RFC 6962 §3.1 signs the precertificate's TBS).
 */
async function issueCertificate(
  request: CertificateRequest,
  embed?: (tbsDer: Uint8Array) => pkijs.Extension,
): Promise<Uint8Array> {
  const certificate = new pkijs.Certificate();
  certificate.version = 2;
  certificate.serialNumber = serialNumber();
  certificate.issuer = request.issuer;
  certificate.subject = request.subject;
  certificate.notBefore.value = request.notBefore;
  certificate.notAfter.value = request.notAfter;
  certificate.subjectPublicKeyInfo = spki(request.publicKeyDer);
  certificate.extensions = [
    extension(
      OID.subjectKeyIdentifier,
      false,
      new asn1js.OctetString({ valueHex: keyIdentifier(request.publicKeyDer) }),
    ),
    extension(
      OID.authorityKeyIdentifier,
      false,
      new pkijs.AuthorityKeyIdentifier({
        keyIdentifier: new asn1js.OctetString({ valueHex: keyIdentifier(request.issuerPublicKeyDer) }),
      }).toSchema(),
    ),
    ...request.extensions,
  ];
  const signingKey = request.signingKey as Parameters<pkijs.Certificate["sign"]>[0];
  await certificate.sign(signingKey, "SHA-256");
  if (embed !== undefined) {
    certificate.extensions.push(embed(new Uint8Array(certificate.encodeTBS().toBER(false))));
    await certificate.sign(signingKey, "SHA-256");
  }
  return new Uint8Array(certificate.toSchema(true).toBER(false));
}

async function selfSignedRoot(
  organization: string,
  commonName: string,
  now: Date,
): Promise<{ der: Uint8Array; key: KeyPair; name: pkijs.RelativeDistinguishedNames }> {
  const key = await newKeyPair();
  const name = distinguishedName(organization, commonName);
  const der = await issueCertificate({
    subject: name,
    issuer: name,
    publicKeyDer: key.publicKeyDer,
    issuerPublicKeyDer: key.publicKeyDer,
    signingKey: key.privateKey,
    notBefore: new Date(now.getTime() - MINUTE),
    notAfter: new Date(now.getTime() + 365 * 24 * 60 * MINUTE),
    extensions: [
      extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: true, pathLenConstraint: 1 }).toSchema()),
      extension(OID.keyUsage, true, keyUsage([KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign])),
    ],
  });
  return { der, key, name };
}

const pem = (der: Uint8Array, label = "CERTIFICATE") =>
  `-----BEGIN ${label}-----\n${(
    Buffer.from(der)
      .toString("base64")
      .match(/.{1,64}/g) ?? []
  ).join("\n")}\n-----END ${label}-----\n`;

/** An authority as Sigstore's trusted root lists it: its certificate chain, leaf first. */
export interface Authority {
  readonly organization: string;
  readonly commonName: string;
  /** DER certificates, the signing one first, the root last. */
  readonly chain: readonly Uint8Array[];
  readonly validFrom: Date;
}

/** A Fulcio-like CA: its root issues short-lived code-signing leaves naming a signer's identity. */
export interface CertificateAuthority extends Authority {
  readonly rootPem: string;
  /** Issue a leaf for `publicKeyDer` (SPKI) with the SAN and OIDC issuer extensions Fulcio writes; valid 10 minutes. */
  issue(options: { publicKeyDer: Uint8Array; subject: string; issuer: string }): Promise<Uint8Array>;
}

export interface AuthorityOptions {
  /** Organization and common name of the root; default `nodekit test` / `offline CA`. */
  organization?: string;
  commonName?: string;
  clock?: Clock;
}

export async function createCertificateAuthority(
  options: AuthorityOptions & {
    /** Each leaf gets this CT log's SCT embedded, as Fulcio's do; none without it. */
    ctLog?: CertificateTransparencyLog;
  } = {},
): Promise<CertificateAuthority> {
  const clock = options.clock ?? (() => new Date());
  const organization = options.organization ?? "nodekit test";
  const commonName = options.commonName ?? "offline CA";
  const validFrom = clock();
  const root = await selfSignedRoot(organization, commonName, validFrom);
  return {
    organization,
    commonName,
    chain: [root.der],
    validFrom,
    rootPem: pem(root.der),
    async issue({ publicKeyDer, subject, issuer }) {
      const now = clock();
      // Fulcio names an e-mail identity as rfc822Name, anything else (a workflow, a SPIFFE ID) as a URI.
      const san = new pkijs.GeneralNames({
        names: [new pkijs.GeneralName({ type: subject.includes("://") ? 6 : 1, value: subject })],
      });
      const ctLog = options.ctLog;
      return issueCertificate(
        {
          subject: new pkijs.RelativeDistinguishedNames(),
          issuer: root.name,
          publicKeyDer,
          issuerPublicKeyDer: root.key.publicKeyDer,
          signingKey: root.key.privateKey,
          notBefore: now,
          notAfter: new Date(now.getTime() + 10 * MINUTE),
          extensions: [
            extension(OID.keyUsage, true, keyUsage([KEY_USAGE.digitalSignature])),
            extension(OID.extKeyUsage, false, new pkijs.ExtKeyUsage({ keyPurposes: [OID.codeSigning] }).toSchema()),
            extension(OID.subjectAltName, true, san.toSchema()),
            extension(OID.fulcioIssuerV1, false, bytes(Buffer.from(issuer, "utf8"))),
            extension(OID.fulcioIssuerV2, false, new asn1js.Utf8String({ value: issuer })),
          ],
        },
        ctLog === undefined
          ? undefined
          : (tbsDer) => {
              // RFC 6962 §3.3: an OCTET STRING holding the TLS-encoded SignedCertificateTimestampList.
              const sct = ctLog.timestamp(root.key.publicKeyDer, tbsDer);
              const list = Buffer.concat([uint(sct.length + 2, 2), uint(sct.length, 2), sct]);
              return extension(OID.embeddedScts, false, new asn1js.OctetString({ valueHex: bytes(list) }));
            },
      );
    },
  };
}

/** A big-endian unsigned integer of `length` bytes (TLS encoding). */
function uint(value: number | bigint, length: number): Buffer {
  const out = Buffer.alloc(length);
  let rest = BigInt(value);
  for (let i = length - 1; i >= 0; i--) {
    out[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return out;
}

/** A certificate transparency log (RFC 6962), as Fulcio submits each certificate to: its key and the SCTs it signs. */
export interface CertificateTransparencyLog {
  readonly baseUrl: string;
  /** SPKI DER of the log's key (ECDSA P-256). */
  readonly publicKeyDer: Uint8Array;
  /** SHA-256 of the key's SPKI DER: the SCT's log ID. */
  readonly logId: Uint8Array;
  readonly validFrom: Date;
  /** A TLS-encoded SCT for a precertificate: its issuer's key (SPKI DER) and its TBS certificate. */
  timestamp(issuerPublicKeyDer: Uint8Array, tbsDer: Uint8Array): Buffer;
}

export function createCertificateTransparencyLog(
  options: { name?: string; clock?: Clock } = {},
): CertificateTransparencyLog {
  const clock = options.clock ?? (() => new Date());
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const publicKeyDer = new Uint8Array(publicKey.export({ type: "spki", format: "der" }));
  const logId = createHash("sha256").update(publicKeyDer).digest();
  return {
    baseUrl: `https://${options.name ?? "ct.nodekit.invalid"}`,
    publicKeyDer,
    logId,
    validFrom: clock(),
    timestamp(issuerPublicKeyDer, tbsDer) {
      const timestamp = uint(clock().getTime(), 8);
      const noExtensions = uint(0, 2);
      // RFC 6962 §3.2's digitally-signed struct: v1, certificate_timestamp, the time,
      // precert_entry, the issuer key's hash and the TBS certificate, no extensions.
      const signed = Buffer.concat([
        Buffer.from([0, 0]),
        timestamp,
        uint(1, 2),
        createHash("sha256").update(issuerPublicKeyDer).digest(),
        uint(tbsDer.length, 3),
        tbsDer,
        noExtensions,
      ]);
      const signature = sign("sha256", signed, privateKey);
      // v1, the log ID, the time, no extensions, sha256 (4) with ecdsa (3), the signature.
      return Buffer.concat([
        Buffer.from([0]),
        logId,
        timestamp,
        noExtensions,
        Buffer.from([4, 3]),
        uint(signature.length, 2),
        signature,
      ]);
    },
  };
}

/** An RFC 3161 timestamp authority: a root and the timestamping leaf it issued. */
export interface TimestampAuthority extends Authority {
  /** A TimeStampResp (DER) over SHA-256 of `data`, as a TSA answers a TimeStampReq. */
  timestamp(data: Uint8Array): Promise<Uint8Array>;
}

export async function createTimestampAuthority(options: AuthorityOptions = {}): Promise<TimestampAuthority> {
  const clock = options.clock ?? (() => new Date());
  const organization = options.organization ?? "nodekit test";
  const commonName = options.commonName ?? "offline TSA";
  const validFrom = clock();
  const root = await selfSignedRoot(organization, `${commonName} root`, validFrom);
  const leafKey = await newKeyPair();
  const leafName = distinguishedName(organization, commonName);
  const leafDer = await issueCertificate({
    subject: leafName,
    issuer: root.name,
    publicKeyDer: leafKey.publicKeyDer,
    issuerPublicKeyDer: root.key.publicKeyDer,
    signingKey: root.key.privateKey,
    notBefore: new Date(validFrom.getTime() - MINUTE),
    notAfter: new Date(validFrom.getTime() + 365 * 24 * 60 * MINUTE),
    extensions: [
      extension(OID.keyUsage, true, keyUsage([KEY_USAGE.digitalSignature])),
      extension(OID.extKeyUsage, true, new pkijs.ExtKeyUsage({ keyPurposes: [OID.timeStamping] }).toSchema()),
    ],
  });
  const leaf = new pkijs.Certificate({ schema: asn1js.fromBER(bytes(leafDer)).result });
  const engine = new pkijs.CryptoEngine({
    crypto: webcrypto as unknown as ConstructorParameters<typeof pkijs.CryptoEngine>[0]["crypto"],
  });
  return {
    organization,
    commonName,
    chain: [leafDer, root.der],
    validFrom,
    async timestamp(data) {
      // Whole seconds: asn1js writes milliseconds without trailing zeros (".5"), which
      // @sigstore/core's GeneralizedTime parser (none or exactly three digits) rejects.
      const now = new Date(Math.floor(clock().getTime() / 1000) * 1000);
      const tstInfo = new pkijs.TSTInfo({
        version: 1,
        policy: OID.tsaPolicy,
        messageImprint: new pkijs.MessageImprint({
          hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
          hashedMessage: new asn1js.OctetString({ valueHex: bytes(createHash("sha256").update(data).digest()) }),
        }),
        serialNumber: serialNumber(),
        genTime: now,
        accuracy: new pkijs.Accuracy({ seconds: 1 }),
        nonce: randomInteger(8),
      });
      const tstInfoDer = tstInfo.toSchema().toBER(false);
      const encapContentInfo = new pkijs.EncapsulatedContentInfo({ eContentType: OID.tstInfo });
      // Set after construction: the constructor would split eContent into chunks.
      encapContentInfo.eContent = new asn1js.OctetString({ valueHex: tstInfoDer });
      // RFC 3161 §2.4.2: the token names its signing certificate (RFC 5035's ESSCertIDv2, SHA-256).
      const signingCertificate = new asn1js.Sequence({
        value: [
          new asn1js.Sequence({
            value: [
              new asn1js.Sequence({
                value: [new asn1js.OctetString({ valueHex: bytes(createHash("sha256").update(leafDer).digest()) })],
              }),
            ],
          }),
        ],
      });
      const signedData = new pkijs.SignedData({
        version: 3,
        encapContentInfo,
        signerInfos: [
          new pkijs.SignerInfo({
            version: 1,
            sid: new pkijs.IssuerAndSerialNumber({ issuer: leaf.issuer, serialNumber: leaf.serialNumber }),
            signedAttrs: new pkijs.SignedAndUnsignedAttributes({
              type: 0,
              attributes: [
                new pkijs.Attribute({
                  type: OID.contentTypeAttribute,
                  values: [new asn1js.ObjectIdentifier({ value: OID.tstInfo })],
                }),
                new pkijs.Attribute({
                  type: OID.signingTimeAttribute,
                  values: [new asn1js.UTCTime({ valueDate: now })],
                }),
                new pkijs.Attribute({
                  type: OID.messageDigestAttribute,
                  values: [
                    new asn1js.OctetString({
                      valueHex: bytes(createHash("sha256").update(new Uint8Array(tstInfoDer)).digest()),
                    }),
                  ],
                }),
                new pkijs.Attribute({ type: OID.signingCertificateV2Attribute, values: [signingCertificate] }),
              ],
            }),
          }),
        ],
      });
      await signedData.sign(
        leafKey.privateKey as Parameters<pkijs.SignedData["sign"]>[0],
        0,
        "SHA-256",
        undefined,
        engine,
      );
      const response = new pkijs.TimeStampResp({
        status: new pkijs.PKIStatusInfo({ status: pkijs.PKIStatus.granted }),
        timeStampToken: new pkijs.ContentInfo({ contentType: OID.signedData, content: signedData.toSchema(true) }),
      });
      return new Uint8Array(response.toSchema().toBER(false));
    },
  };
}

/** A Sigstore TrustedRoot (the trusted_root.json format, JSON form) naming these authorities and logs. */
export function trustedRootFor(options: {
  certificateAuthorities?: readonly Authority[];
  timestampAuthorities?: readonly Authority[];
  transparencyLogs?: readonly TransparencyLog[];
  ctLogs?: readonly CertificateTransparencyLog[];
}): Record<string, unknown> {
  const entry = (authority: Authority) => ({
    subject: { organization: authority.organization, commonName: authority.commonName },
    uri: "",
    certChain: { certificates: authority.chain.map((der) => ({ rawBytes: Buffer.from(der).toString("base64") })) },
    validFor: { start: new Date(authority.validFrom.getTime() - MINUTE).toISOString() },
  });
  const base64 = (data: Uint8Array) => Buffer.from(data).toString("base64");
  const logEntry = (log: { baseUrl: string; publicKeyDer: Uint8Array; logId: Uint8Array; validFrom: Date }) => ({
    baseUrl: log.baseUrl,
    hashAlgorithm: "SHA2_256",
    publicKey: {
      rawBytes: base64(log.publicKeyDer),
      keyDetails: "PKIX_ECDSA_P256_SHA_256",
      validFor: { start: new Date(log.validFrom.getTime() - MINUTE).toISOString() },
    },
    logId: { keyId: base64(log.logId) },
  });
  return {
    mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
    tlogs: (options.transparencyLogs ?? []).map(logEntry),
    certificateAuthorities: (options.certificateAuthorities ?? []).map(entry),
    ctlogs: (options.ctLogs ?? []).map(logEntry),
    timestampAuthorities: (options.timestampAuthorities ?? []).map(entry),
  };
}

/**
 * Signs as a keyless (Fulcio) signer does: a fresh key pair for each signature, and a
 * certificate for it from the CA naming `subject` (the SAN) and `issuer` (the OIDC issuer).
 */
export function certificateSigner(options: { ca: CertificateAuthority; subject: string; issuer: string }): Signer {
  return {
    async sign(data) {
      const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
      const certificate = await options.ca.issue({
        publicKeyDer: new Uint8Array(publicKey.export({ type: "spki", format: "der" })),
        subject: options.subject,
        issuer: options.issuer,
      });
      return {
        signature: sign("sha256", data, createPrivateKey(privateKey.export({ type: "pkcs8", format: "pem" }))),
        key: { $case: "x509Certificate", certificate: pem(certificate) },
      };
    },
  };
}

/** A witness that timestamps each signature with the TSA, as @sigstore/sign's TSAWitness does over HTTP. */
export function timestampWitness(tsa: TimestampAuthority): Witness {
  return {
    async testify(content) {
      const signature =
        content.$case === "dsseEnvelope" ? content.dsseEnvelope.signatures[0]?.sig : content.messageSignature.signature;
      if (signature === undefined) throw new Error("nothing to timestamp: the bundle has no signature");
      return { rfc3161Timestamps: [{ signedTimestamp: Buffer.from(await tsa.timestamp(signature)) }] };
    },
  };
}

type VerificationMaterial = Awaited<ReturnType<Witness["testify"]>>;
/** A transparency-log entry as a Sigstore bundle carries it (Rekor v1's shape). */
export type TransparencyLogEntry = NonNullable<VerificationMaterial["tlogEntries"]>[number];
type SignatureContent = Parameters<Witness["testify"]>[0];

/**
 * A Rekor-like transparency log: an append-only RFC 6962 Merkle tree of entry bodies, its
 * key, and the two proofs Rekor v1 returns for an entry: a signed entry timestamp (the
 * inclusion promise) and an inclusion proof against a checkpoint the log signed.
 */
export interface TransparencyLog {
  /** Its URL as the trusted root names it; the checkpoint's signature line names its host. */
  readonly baseUrl: string;
  /** SPKI DER of the log's key (ECDSA P-256). */
  readonly publicKeyDer: Uint8Array;
  /** SHA-256 of the key's SPKI DER, as Rekor's log ID. */
  readonly logId: Uint8Array;
  readonly validFrom: Date;
  /** Every entry it has logged, by log index. */
  readonly entries: readonly TransparencyLogEntry[];
  /** Log a signature made with `publicKey` (PEM), as Rekor does for a proposed dsse or hashedrekord entry. */
  append(content: SignatureContent, publicKey: string): TransparencyLogEntry;
}

const sha256 = (...parts: Uint8Array[]) => {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  return hash.digest();
};
const leafHash = (body: Uint8Array) => sha256(Buffer.from([0]), body);
const nodeHash = (left: Uint8Array, right: Uint8Array) => sha256(Buffer.from([1]), left, right);
/** RFC 6962 §2.1: the largest power of two smaller than `n` (n > 1). */
const splitPoint = (n: number) => 2 ** Math.floor(Math.log2(n - 1));
function treeHash(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 1) return leaves[0] as Buffer;
  const k = splitPoint(leaves.length);
  return nodeHash(treeHash(leaves.slice(0, k)), treeHash(leaves.slice(k)));
}
/** RFC 6962 §2.1.1: the audit path of leaf `m`, lowest level first. */
function auditPath(m: number, leaves: readonly Buffer[]): Buffer[] {
  if (leaves.length <= 1) return [];
  const k = splitPoint(leaves.length);
  return m < k
    ? [...auditPath(m, leaves.slice(0, k)), treeHash(leaves.slice(k))]
    : [...auditPath(m - k, leaves.slice(k)), treeHash(leaves.slice(0, k))];
}

/** The entry body Rekor v1 stores (its canonical JSON) for a proposed dsse or hashedrekord entry. */
function entryBody(content: SignatureContent, publicKey: string): { kind: string; version: string; body: Buffer } {
  const verifier = Buffer.from(publicKey, "utf8").toString("base64");
  const hex = (data: Uint8Array) => Buffer.from(data).toString("hex");
  let body: Record<string, unknown>;
  if (content.$case === "dsseEnvelope") {
    const envelope = content.dsseEnvelope;
    body = {
      apiVersion: "0.0.1",
      kind: "dsse",
      spec: {
        envelopeHash: {
          algorithm: "sha256",
          value: hex(
            sha256(
              Buffer.from(
                json.canonicalize({
                  payload: Buffer.from(envelope.payload).toString("base64"),
                  payloadType: envelope.payloadType,
                  signatures: envelope.signatures.map((s) => ({ sig: Buffer.from(s.sig).toString("base64") })),
                }),
              ),
            ),
          ),
        },
        payloadHash: { algorithm: "sha256", value: hex(sha256(envelope.payload)) },
        signatures: envelope.signatures.map((s) => ({ signature: Buffer.from(s.sig).toString("base64"), verifier })),
      },
    };
  } else {
    const { messageDigest, signature } = content.messageSignature;
    if (messageDigest === undefined) throw new Error("a message signature without its digest cannot be logged");
    body = {
      apiVersion: "0.0.1",
      kind: "hashedrekord",
      spec: {
        data: { hash: { algorithm: "sha256", value: hex(messageDigest.digest) } },
        signature: { content: Buffer.from(signature).toString("base64"), publicKey: { content: verifier } },
      },
    };
  }
  return { kind: body.kind as string, version: "0.0.1", body: Buffer.from(json.canonicalize(body), "utf8") };
}

export function createTransparencyLog(options: { name?: string; clock?: Clock } = {}): TransparencyLog {
  const clock = options.clock ?? (() => new Date());
  const name = options.name ?? "tlog.nodekit.invalid";
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const publicKeyDer = new Uint8Array(publicKey.export({ type: "spki", format: "der" }));
  const logId = sha256(publicKeyDer);
  const origin = `${name} - ${BigInt(`0x${randomBytes(8).toString("hex")}`) >> 1n}`;
  const leaves: Buffer[] = [];
  const entries: TransparencyLogEntry[] = [];
  return {
    baseUrl: `https://${name}`,
    publicKeyDer,
    logId,
    validFrom: clock(),
    entries,
    append(content, signerKey) {
      const { kind, version, body } = entryBody(content, signerKey);
      const logIndex = leaves.length;
      const integratedTime = Math.floor(clock().getTime() / 1000);
      leaves.push(leafHash(body));
      const rootHash = treeHash(leaves);
      // The signed entry timestamp: the log's signature over the entry's canonical summary.
      const promise = json.canonicalize({
        body: body.toString("base64"),
        integratedTime,
        logIndex,
        logID: logId.toString("hex"),
      });
      // A checkpoint (a signed note, transparency-dev's format): origin, size, root hash, then
      // "— <name> <base64(key hint ‖ signature)>", the hint being the log ID's first four bytes.
      const note = `${origin}\n${leaves.length}\n${rootHash.toString("base64")}\n`;
      const noteSignature = Buffer.concat([logId.subarray(0, 4), sign("sha256", Buffer.from(note), privateKey)]);
      const entry: TransparencyLogEntry = {
        logIndex: String(logIndex),
        logId: { keyId: logId },
        kindVersion: { kind, version },
        integratedTime: String(integratedTime),
        inclusionPromise: { signedEntryTimestamp: sign("sha256", Buffer.from(promise), privateKey) },
        inclusionProof: {
          logIndex: String(logIndex),
          treeSize: String(leaves.length),
          rootHash,
          hashes: auditPath(logIndex, leaves),
          checkpoint: { envelope: `${note}\n\u2014 ${name} ${noteSignature.toString("base64")}\n` },
        },
        canonicalizedBody: body,
      };
      entries.push(entry);
      return entry;
    },
  };
}

/**
 * A witness that logs each signature in the transparency log, as @sigstore/sign's
 * RekorWitness does over HTTP; `alter` changes the entry on its way into the bundle (tests
 * of a tampered or replayed entry: it returns a changed copy, and the log keeps the original).
 */
export function transparencyLogWitness(
  log: TransparencyLog,
  options: { alter?: (entry: TransparencyLogEntry) => TransparencyLogEntry } = {},
): Witness {
  return {
    async testify(content, publicKey) {
      const entry = log.append(content, publicKey);
      return { tlogEntries: [options.alter ? options.alter(entry) : entry] };
    },
  };
}
