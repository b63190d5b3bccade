import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** nvkectl's own error codes: what its commands check before (or after) calling the libraries. */
export const errorCodes = defineErrorCodes("nvkectl", {
  CLUSTER_FAILED: {
    exitCode: ExitCode.CheckFailed,
    meaning: "A tenant cluster waited on (--wait) turned Failed; the controller's message says why.",
  },
  CLUSTER_DELETING: {
    exitCode: ExitCode.Conflict,
    meaning: "A tenant cluster waited on to become Ready is being deleted instead.",
  },
  NODEPOOL_FAILED: {
    exitCode: ExitCode.CheckFailed,
    meaning: "A node pool waited on (--wait) turned Failed; the controller's message says why.",
  },
  NODEPOOL_DELETING: {
    exitCode: ExitCode.Conflict,
    meaning: "A node pool waited on to become Ready is being deleted instead.",
  },
  PROVIDER_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "get providers NAME names a provider nvkectl does not know; the known ones are listed.",
  },
  EXPLAIN_KIND_UNKNOWN: {
    exitCode: ExitCode.NotFound,
    meaning: "explain names a kind the controller's API document does not describe; the kinds it does are listed.",
  },
  EXPLAIN_FIELD_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "explain names a field the kind does not have; the fields at that level are listed.",
  },
  WAIT_TIMEOUT: {
    exitCode: ExitCode.Unreachable,
    meaning:
      "--wait (or --watch of one object) gave up at --timeout, which bounds the whole command, requests included; the controller keeps working on the object.",
  },
  INPUT_FILE_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "A request or patch file named with -f or --patch-file does not exist.",
  },
  INPUT_FILE_UNREADABLE: {
    exitCode: ExitCode.InvalidInput,
    meaning: "A request or patch file exists but cannot be read.",
  },
  INPUT_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "A request or patch does not parse or breaks the API schema; every problem is listed and nothing was sent.",
  },
  INPUT_EMPTY: { exitCode: ExitCode.InvalidInput, meaning: "A request file holds no document; nothing was sent." },
  INPUT_MULTIPLE_DOCUMENTS: {
    exitCode: ExitCode.InvalidInput,
    meaning: "A request file holds more than one document; each invocation sends one. Nothing was sent.",
  },
  OUTPUT_NOT_WRITTEN: {
    exitCode: ExitCode.InvalidInput,
    meaning: "--output-file could not be written (no such directory, no permission).",
  },
  CLUSTER_NAME_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The name given is not a valid cluster name (a DNS label).",
  },
  TENANT_KUBECONFIG_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning:
      "The tenant cluster's kubeconfig Secret is not on the site cluster (the cluster is not Ready, or has another name).",
  },
  TENANT_KUBECONFIG_EMPTY: {
    exitCode: ExitCode.NotFound,
    meaning: "The tenant cluster's kubeconfig Secret holds no kubeconfig under data key value.",
  },
  CA_FILE_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "The file named with --certificate-authority does not exist.",
  },
  CA_FILE_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The file named with --certificate-authority cannot be read or holds no PEM certificate.",
  },
  INVALID_SETTING: {
    exitCode: ExitCode.Usage,
    meaning: "An environment variable nvkectl reads (NVKECTL_MAX_RESPONSE_MB, …) has a value it cannot use.",
  },
  REPLICAS_INVALID: { exitCode: ExitCode.Usage, meaning: "--replicas is not a whole number from 0 to 5000." },
  HOSTS_FILE_NOT_FOUND: { exitCode: ExitCode.NotFound, meaning: "The hosts CSV named with --hosts does not exist." },
  HOSTS_FILE_UNREADABLE: { exitCode: ExitCode.InvalidInput, meaning: "The hosts CSV exists but cannot be read." },
  SITESPEC_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The hosts CSV has problems (every one is listed with its row, line and column); nothing was written.",
  },
  PLUGIN_SOURCE_REFUSED: {
    exitCode: ExitCode.Usage,
    meaning:
      "plugins install was given a path or a git repository; it installs npm packages by name only (a local directory is linked with plugins link).",
  },
  MACHINEIMAGE_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "No MachineImage of that name is published on the site.",
  },
  CLUSTERRELEASE_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "No ClusterRelease of that name is published on the site.",
  },
  NODEPOOLRELEASE_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "No NodePoolRelease of that name is published on the site.",
  },
  NODE_ARCHITECTURE_UNKNOWN: {
    exitCode: ExitCode.Precondition,
    meaning:
      "The site cluster has no nodes, or a node's architecture is not one the stack has images for (amd64, arm64).",
  },
  NODE_ARCHITECTURE_MIXED: {
    exitCode: ExitCode.Precondition,
    meaning: "The site cluster's nodes are of more than one architecture; the stack is installed for one.",
  },
  IMAGE_NOT_CONFIGURED: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "The stack config names no image for the nodes' architecture (images.profiles is required without a release).",
  },
  INSTALL_WORK_DIR_UNUSABLE: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The install's work directory (--work-dir) is not a directory or cannot be read; nothing was run.",
  },
  FLUX_EMIT_USAGE: {
    exitCode: ExitCode.Usage,
    meaning:
      "install --emit flux needs the directory to write (DIR) and --flux-repository, and takes none of the --argocd-* flags.",
  },
  ARGOCD_EMIT_USAGE: {
    exitCode: ExitCode.Usage,
    meaning:
      "install --emit argocd needs the directory to write (DIR) and --argocd-repository, and takes none of the --flux-* flags.",
  },
  FLUX_EMIT_RENDER_FAILED: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "install --emit flux or argocd: an item rendered a document that is not a Kubernetes object (no apiVersion, kind or metadata.name); nothing was written.",
  },
  FLUX_TREE_HOLDS_SECRET: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "install --emit flux or argocd: an item renders a Secret, and the emitted tree may hold none; nothing was written. Turn it off in the item's overlay and create it on the site.",
  },
  FLUX_SIGN_KEY_UNUSABLE: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "install --emit flux --flux-sign-key: the file is not an unencrypted PEM private key (PKCS#8 or SEC1, ECDSA P-256, as the release's signing key); nothing was pushed.",
  },
  FLUX_EMIT_DIR_NOT_EMPTY: {
    exitCode: ExitCode.Conflict,
    meaning:
      "install --emit flux or argocd: the directory holds files that are not an earlier tree of the same --emit; nothing was written.",
  },
  INSTALL_DEPLOY_PATH_UNUSABLE: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "The deploy path is valid but cannot be installed: it pins no Cluster API (spec.clusterAPI), or an item uses a name the install keeps for its own steps.",
  },
  INSTALL_CONTROLLER_API_MISMATCH: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "The stack config's controllerApi names another namespace than the deploy path installs the controller in, or a pod label the controller chart sets otherwise; nothing was changed.",
  },
  INSTALL_PREREQUISITES_MISSING: {
    exitCode: ExitCode.Precondition,
    meaning:
      "The install found kubectl, helm or clusterctl missing, too old, or (clusterctl) of another Cluster API release series than the deploy path pins; each is listed with the version found and needed, and nothing was changed.",
  },
  PROVIDER_VERSION_MISMATCH: {
    exitCode: ExitCode.Conflict,
    meaning:
      "A Cluster API provider is already installed at another version than the deploy path pins; the install does not upgrade it.",
  },
  PROVIDER_REPOSITORY_INCOMPLETE: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The provider repository named in the stack config lacks a components or metadata file clusterctl needs.",
  },
  BOOTSTRAP_PREREQUISITES_MISSING: {
    exitCode: ExitCode.Precondition,
    meaning:
      "Site bootstrap found missing tools (nerdctl, containerd, kind, helm, kubectl, clusterctl); each is listed with the version found and needed.",
  },
  BOOTSTRAP_API_SERVER_ADDRESS_INVALID: {
    exitCode: ExitCode.Usage,
    meaning:
      "--api-server-address is not one IP address of this host, or none was given and no site host was reached to tell which address this host has on the site's network.",
  },
  HOSTS_UNREACHABLE: {
    exitCode: ExitCode.Unreachable,
    meaning:
      "Site bootstrap could not open a TCP connection to the nvke-agent port of some hosts of the site spec; each is named.",
  },
  REGISTRY_CA_UNREADABLE: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The CA file named with --ca-file cannot be read.",
  },
  RELEASE_FILE_UNREADABLE: {
    exitCode: ExitCode.NotFound,
    meaning: "The release description named with --release cannot be read; nothing was changed.",
  },
  RELEASE_PLATFORM_NOT_LISTED: {
    exitCode: ExitCode.NotFound,
    meaning:
      "release export --nvkectl names a platform the release carries no nvkectl for (or its artifact holds no executable); the platforms it has are listed, and nothing was written.",
  },
  RELEASE_INCOMPLETE_FOR_INSTALL: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "The release lacks a chart or Cluster API provider the deploy path installs; each is listed and nothing was changed.",
  },
  RELEASE_IMAGE_NOT_PINNED: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "An image named in the values the install renders is not in the release, so it cannot be pinned by digest; each is listed with its file and field, and nothing was changed.",
  },
  INSTALL_RECORD_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning:
      "The site cluster has no install record (ConfigMap kube-system/nvkectl-install-record): nothing is installed that uninstall or upgrade knows of; nothing was changed.",
  },
  UPGRADE_REFUSED: {
    exitCode: ExitCode.Conflict,
    meaning:
      "upgrade apply computed a plan that refuses something (a downgrade of the release, a chart or a provider; a Cluster API contract skipped, going back or not known; a provider the target no longer installs); each is listed and nothing was changed.",
  },
  UPGRADE_SITE_DRIFTED: {
    exitCode: ExitCode.Conflict,
    meaning:
      "upgrade apply found the site unlike its install record: a recorded Cluster API provider, Helm release or applied object missing, or at a version that is neither the recorded one nor the upgrade's; each is listed and nothing was changed (docs/install.md, Upgrade).",
  },
  NO_SITES_CONFIGURED: {
    exitCode: ExitCode.NotFound,
    meaning: "--all-sites was given but no site is configured (nvkectl config set-site adds one).",
  },
  SOME_SITES_FAILED: {
    exitCode: ExitCode.Unreachable,
    meaning:
      "get --all-sites: one site or more did not answer (each is named on stderr with its own error); the rows of the sites that did were printed.",
  },
  UNINSTALL_TENANT_CLUSTERS_EXIST: {
    exitCode: ExitCode.Conflict,
    meaning:
      "The uninstall found tenant clusters (Cluster API Clusters) the site still manages; each is named and nothing was changed (--force uninstalls anyway).",
  },
  SUPPORT_BUNDLE_EXISTS: {
    exitCode: ExitCode.Conflict,
    meaning: "The support bundle's file (--output) exists already; nvkectl never overwrites it.",
  },
});
