import { Args, Flags } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { registryAccess, registryFlags } from "../../flags.ts";
import { verifyPublishedRelease } from "../../services/release-artifacts.ts";

export default class ReleaseVerify extends NvkectlCommand<typeof ReleaseVerify> {
  static override summary = "Verify a published NVKE release under your policy and print its digest.";
  static override description =
    `Resolves REF (registry/repository:tag, or …@sha256:…) to the digest of its manifest, reads the release description and the Sigstore bundles attached to it as referrers (through the registry's referrers API, or the sha256-<hex> tag where it has none), and verifies a signature against the keys and certificate identities the policy trusts — fully offline: no trust root is fetched and no transparency log or timestamp authority is asked; the policy says whether a log entry or a timestamp is required (docs/release-policy.md). Then it checks that every chart, image, provider component, profile image and nvkectl build the description lists is in the registry at its digest. Every read is checked against its digest.

On success it prints the verified reference, registry/repository@sha256:…, on stdout: pin release export and install to it. Each failure has its own code and exit code: unsigned, signature invalid, untrusted signer (a key or certificate identity the policy does not name, or a certificate from a CA not in its trusted root) and a timestamp or log entry the policy requires but the signature lacks exit 1; an artifact missing or the release not found exit 4; a malformed policy exits 3; the registry unreachable exits 6, its credentials refused exits 7 (docs/errors.md).

Registry credentials come from NODEKIT_REGISTRY_USERNAME and NODEKIT_REGISTRY_PASSWORD (offered only to NODEKIT_REGISTRY_HOST when that is set), or from docker's config ($DOCKER_CONFIG/config.json) and helm's registry config; never from flags.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> registry.example.com/nvke/release:1.4.0 --policy release-policy.yaml",
    {
      description: "Keep the verified reference to pin export and install to it:",
      command:
        'ref=$(<%= config.bin %> <%= command.id %> registry.example.com/nvke/release:1.4.0 --policy release-policy.yaml) && <%= config.bin %> release export "$ref" --output-file release.json',
    },
  ];

  static override args = {
    ref: Args.string({
      description: "The release: registry/repository:tag or registry/repository@sha256:….",
      required: true,
    }),
  };

  static override flags = {
    policy: Flags.string({
      description: "The release policy: the keys and identities you trust (docs/release-policy.md).",
      required: true,
    }),
    output: Flags.option({
      char: "o",
      description: "Print the verified release (reference, digest, signer, artifacts checked) as json or yaml.",
      options: ["json", "yaml"] as const,
    })(),
    ...registryFlags,
  };

  override async run(): Promise<void> {
    const verified = await verifyPublishedRelease({
      reference: this.args.ref,
      policyFile: this.flags.policy,
      access: { ...registryAccess(this.flags, (message) => this.logger.warn(message)), redactor: this.redactor },
    });
    this.logger.info(
      `verified ${verified.description.metadata.name} ${verified.description.metadata.version}: signed by ${verified.signer}; all ${verified.artifactsChecked} artifacts it lists are in the registry at their digests`,
    );
    if (this.flags.output === undefined) {
      await this.out(verified.reference);
      return;
    }
    await this.printOne(this.flags.output, [], {
      reference: verified.reference,
      digest: verified.digest,
      name: verified.description.metadata.name,
      version: verified.description.metadata.version,
      signer: verified.signer,
      artifactsChecked: verified.artifactsChecked,
    });
  }
}
