/** The artifactType of a release description's OCI manifest. */
export const RELEASE_ARTIFACT_TYPE = "application/vnd.nodekit.nvke.release.v1+json";
/** The media type of the one layer that holds the description (JSON). */
export const RELEASE_DESCRIPTION_MEDIA_TYPE = "application/vnd.nodekit.nvke.release.description.v1+json";
/** A Sigstore bundle (v0.3) attached as a referrer: its artifactType and its layer's media type, as cosign writes them. */
export const SIGSTORE_BUNDLE_ARTIFACT_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json";
/** The in-toto statement type signed in the bundle's DSSE envelope, and cosign's predicate for a plain signature. */
export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";
export const IN_TOTO_STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
export const COSIGN_SIGN_PREDICATE_TYPE = "https://sigstore.dev/cosign/sign/v1";
