import { isIP } from "node:net";
import { apiVersionField, kindField, strictMapping, typeMessage } from "@nodekit/documents";
import * as z from "zod";

export const STACK_CONFIG_API_VERSION = "nvke.io/v1alpha1";
export const STACK_CONFIG_KIND = "StackConfig";
/** What an unfilled value starts with; the install refuses to start while any is left. */
export const PLACEHOLDER_PREFIX = "REPLACE_";

/** A string that may still hold a REPLACE_* placeholder, anywhere in it (reported as unfilled, not as malformed). */
function checked(check: (value: string) => string | undefined) {
  return z.string({ error: typeMessage("a string") }).superRefine((value, context) => {
    if (value.includes(PLACEHOLDER_PREFIX)) return;
    const fault = check(value);
    if (fault !== undefined) context.addIssue({ code: "custom", message: fault, input: value });
  });
}

const text = checked((value) => (value.trim() === "" ? "is empty" : undefined));

const httpsUrl = checked((value) => {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:" ? undefined : "must be an https:// URL";
  } catch {
    return "is not a URL";
  }
});

const envName = checked((value) =>
  /^[A-Z_][A-Z0-9_]*$/.test(value) ? undefined : "is not an environment variable name (A-Z, 0-9 and _)",
);

const imageReference = checked((value) =>
  /^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)*(:[\w][\w.-]{0,127})?(@sha256:[0-9a-f]{64})?$/.test(
    value,
  ) &&
  (value.includes(":") || value.includes("@"))
    ? undefined
    : "is not an image reference with a tag or digest (registry/repository:tag or …@sha256:…)",
);

/** One image for every architecture (a multi-arch reference), or one per architecture. */
const image = z.union([
  imageReference,
  strictMapping({ amd64: imageReference.optional(), arm64: imageReference.optional() }),
]);

/** The address as a number of `bits` bits; undefined when it is not an address of that family. */
function addressValue(address: string, family: 4 | 6): bigint | undefined {
  if (family === 4) return address.split(".").reduce((value, octet) => (value << 8n) + BigInt(Number(octet)), 0n);
  const [head = "", tail] = address.split("::");
  const groups = (text: string) => (text === "" ? [] : text.split(":"));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  // An embedded IPv4 tail (::ffff:10.0.0.1) is written as two groups.
  const last = right.at(-1) ?? left.at(-1) ?? "";
  if (last.includes(".")) {
    const v4 = addressValue(last, 4) ?? 0n;
    const list = right.length > 0 ? right : left;
    list.splice(-1, 1, (v4 >> 16n).toString(16), (v4 & 0xffffn).toString(16));
  }
  const all = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return all.reduce((value, group) => (value << 16n) + BigInt(Number.parseInt(group, 16)), 0n);
}

/** An address of `family` from its number: dotted quad, or IPv6 with the longest run of zero groups as "::". */
function formatAddress(value: bigint, family: 4 | 6): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join(".");
  const groups = Array.from({ length: 8 }, (_, index) => (value >> BigInt(112 - 16 * index)) & 0xffffn);
  let best = { start: -1, length: 0 };
  for (let start = 0; start < 8; start++) {
    let length = 0;
    while (start + length < 8 && groups[start + length] === 0n) length++;
    if (length > best.length && length > 1) best = { start, length };
  }
  const text = groups.map((group) => group.toString(16));
  if (best.start === -1) return text.join(":");
  return `${text.slice(0, best.start).join(":")}::${text.slice(best.start + best.length).join(":")}`;
}

/**
 * A network in CIDR notation, canonical: no host bits set. The API server accepts
 * `10.20.0.5/24` in a NetworkPolicy's ipBlock but warns that it is ambiguous ("should be
 * 10.20.0.0/24 or 10.20.0.5/32?"), so the stack config asks which one is meant.
 */
const cidr = checked((value) => {
  const [address = "", bits, ...rest] = value.split("/");
  const family = isIP(address);
  const max = family === 6 ? 128 : 32;
  if (family === 0 || bits === undefined || rest.length > 0 || !/^\d+$/.test(bits) || Number(bits) > max) {
    return "is not a network in CIDR notation such as 10.20.0.0/24";
  }
  const size = family === 6 ? 6 : 4;
  const number = addressValue(address, size) ?? 0n;
  const hostBits = BigInt(max - Number(bits));
  const network = (number >> hostBits) << hostBits;
  if (network === number) return undefined;
  return `is ambiguous: ${address} has host bits set for /${bits}; write the network ${formatAddress(network, size)}/${bits}, or the one address ${address}/${max}`;
});

const dnsName = checked((value) =>
  /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(value) && value.length <= 253 ? undefined : "is not a DNS-1123 name",
);

/**
 * The stack config: what the NVKE controller stack needs from the operator, in a file of
 * its own beside the site spec. It holds no secret: the NICo API key is read from the
 * environment variable it names. Every key is listed in deploy/README.md (generated from
 * this schema).
 */
export const StackConfigSchema = strictMapping({
  apiVersion: apiVersionField(STACK_CONFIG_API_VERSION),
  kind: kindField(STACK_CONFIG_KIND),
  nico: strictMapping({
    endpoint: httpsUrl.describe(
      "The NICo API endpoint the controller provisions through, e.g. https://nico.example.net/api.",
    ),
    organizationId: text.describe("Your NICo organization ID."),
    apiName: text.describe("The NICo API name the controller uses."),
    apiKeyFromEnv: envName
      .default("NVKE_NICO_API_KEY")
      .describe(
        "The environment variable that holds the NICo API key when the install runs. The key is stored as the Secret nico-system/nico-credentials, which the NicoIdentity nico-system/default names for the NICo provider, and as the controller's copy nvke-nico-credentials in its namespace; it is never written to a file, printed or logged.",
      ),
  }).describe("The NICo API the controller provisions machines through."),
  images: strictMapping({
    profiles: image
      .optional()
      .describe(
        "The profile content image. Required without a release. One reference, or one per architecture (amd64, arm64).",
      ),
    controller: image
      .optional()
      .describe(
        "Overrides the controller image pinned in the deploy path. One reference, or one per architecture (amd64, arm64).",
      ),
  })
    .default({})
    .describe("Images the stack runs, chosen for the architecture of the site's nodes."),
  clientNetworks: z
    .array(cidr, { error: typeMessage("a list of networks in CIDR notation") })
    .default([])
    .describe(
      "The operators' client networks (CIDR) admitted to the controller API by a NetworkPolicy; without one, only in-cluster pods reach it.",
    ),
  controllerApi: strictMapping({
    namespace: dnsName
      .optional()
      .describe(
        "The controller's namespace. Default: the namespace of the deploy path item that installs the controller (the one with stackValues: true; nke-controller in deploy/nico); another one is refused.",
      ),
    podSelector: z
      .record(z.string(), z.string(), { error: typeMessage("a mapping of labels") })
      .default({ "app.kubernetes.io/name": "nvke-controller" })
      .describe(
        "The labels of the controller API's pods, which the NetworkPolicy selects; the install gives them to the controller's pods (the chart's podLabels).",
      ),
    port: z
      .number({ error: typeMessage("a port number") })
      .int()
      .min(1)
      .max(65535)
      .default(8080)
      .describe("The controller API's container port; the install sets the chart's service.port to it."),
  })
    .default({ podSelector: { "app.kubernetes.io/name": "nvke-controller" }, port: 8080 })
    .describe("Where the controller API runs, for the NetworkPolicy."),
  storageClass: strictMapping({
    name: dnsName.default("lab-local").describe("The lab StorageClass's name."),
    provisioner: text.default("rancher.io/local-path").describe("Its provisioner."),
    default: z
      .boolean({ error: typeMessage("true or false") })
      .default(true)
      .describe("Whether it is the cluster's default StorageClass."),
  })
    .default({ name: "lab-local", provisioner: "rancher.io/local-path", default: true })
    .describe("The lab StorageClass the install creates."),
  clusterAPI: strictMapping({
    providerRepository: text.describe(
      "A directory holding the Cluster API provider repositories as clusterctl reads them ({provider-label}/{version}/{components, metadata.yaml}) and cert-manager/{version}/cert-manager.yaml; relative to this file. clusterctl init reads only from here, never from the internet.",
    ),
  }).describe("Where clusterctl init takes Cluster API and cert-manager from."),
});

export type StackConfig = z.output<typeof StackConfigSchema>;
export type ImageChoice = z.output<typeof image>;
