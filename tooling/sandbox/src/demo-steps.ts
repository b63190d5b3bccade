// The operator flow ./run demo walks, in the order of docs/first-cluster.md (a test holds
// the two to each other). A later feature adds its steps here: one `step(title, command)` each.
import { SANDBOX_NICO_API_KEY } from "./site-objects.ts";
import { type Step, step } from "./walkthrough.ts";

const KUBECONFIG_FILE = '"$NVKE_SANDBOX_DIR/capd-demo.kubeconfig"';
const LOOK_AT_SANDBOX =
  "./run sandbox status, the emulator's log $NVKE_SANDBOX_DIR/emulator.log, docs/troubleshooting.md";

const LOOK_AT_NODERINGS =
  "./run sandbox status, the NodeRings API's log $NVKE_SANDBOX_DIR/noderings.log, docs/registration.md";

/** The operator flow on the sandbox, in the order of docs/first-cluster.md. */
export function operatorFlow(): Step[] {
  return [
    step("Point this shell at the sandbox", `eval "$(./run sandbox env)"`, {
      note: "nvkectl on PATH, and NVKECTL_CONFIG naming the sandbox's own config (yours is not touched)",
    }),
    step(
      "Generate the site spec from the hosts CSV",
      "nvkectl sitespec generate --hosts examples/hosts.csv --site-name my-tier0-site",
      {
        note: "name and ip per host; tpm_ek_thumbprint turns on TPM attestation for a host (docs/sitespec.md)",
      },
    ),
    step(
      "Point nvkectl at the management plane",
      'nvkectl config set-site sandbox --url "$NVKE_SANDBOX_URL" --kubeconfig "$NVKE_SANDBOX_OPERATOR_KUBECONFIG"',
      { note: "the controller API's URL, and the site kubeconfig of an operator with the RBAC of docs/auth.md" },
    ),
    step("List the sites", "nvkectl config get-sites"),
    step("Check the infrastructure providers", "nvkectl get providers", {
      note: "read from the site cluster directly; capd is the provider examples/capd-cluster.yaml names",
      check: ({ stdout }) => (/^capd\s+CONFIGURED\s/m.test(stdout) ? undefined : "capd is not CONFIGURED"),
      lookAt: "docs/providers.md",
    }),
    step("Publish the MachineImage", "nvkectl create machineimage -f examples/machineimage.yaml"),
    step("Publish the ClusterRelease", "nvkectl create clusterrelease -f examples/clusterrelease.yaml"),
    step("Publish the NodePoolRelease", "nvkectl create nodepoolrelease -f examples/nodepoolrelease.yaml"),
    step("Create a tenant cluster", "nvkectl create cluster -f examples/capd-cluster.yaml", {
      note: "a token is minted for the controller with a TokenRequest, on the operator's RBAC",
    }),
    step("Watch it come up", "nvkectl get clusters capd-demo --watch --timeout 2m", {
      note: "Provisioning → Ready; a real kube-apiserver starts for the tenant",
      lookAt: LOOK_AT_SANDBOX,
    }),
    step("Read its ID", "nvkectl get clusters capd-demo"),
    step(
      "Add a node pool",
      [
        "nvkectl get clusters capd-demo -o jsonpath='{.id}'; echo",
        "nvkectl create nodepool -f examples/nico-mock-nodepool.yaml --cluster capd-demo",
      ].join("\n"),
      { note: "the pool belongs to its cluster by ID: --cluster fills in its clusterID" },
    ),
    step("Scale it", "nvkectl scale nodepool workers --cluster capd-demo --replicas 3"),
    step("Watch the nodes join", "nvkectl get nodepools workers --cluster capd-demo", {
      until: { output: /\sReady\s/, describe: "the pool is Ready", timeoutMs: 120_000 },
      lookAt: LOOK_AT_SANDBOX,
    }),
    step("List the cluster's node pools", "nvkectl get nodepools --cluster capd-demo"),
    step(
      "Get the tenant cluster's kubeconfig",
      `nvkectl get kubeconfig capd-demo --output-file ${KUBECONFIG_FILE}\nls -l ${KUBECONFIG_FILE}`,
      {
        note: "read from the site cluster; written with mode 0600, as it holds the cluster's admin credentials",
        check: ({ stdout }) => (/^-rw------- /m.test(stdout) ? undefined : "the kubeconfig file is not mode 0600"),
      },
    ),
    step("Use it: the tenant cluster answers", `kubectl --kubeconfig ${KUBECONFIG_FILE} get namespaces`, {
      lookAt: LOOK_AT_SANDBOX,
    }),
    step(
      "Patch the cluster",
      [
        `nvkectl patch cluster capd-demo --patch '{"labels": {"stage": "demo"}}'`,
        "nvkectl get clusters capd-demo --show-labels",
      ].join("\n"),
      { note: "a JSON merge patch: only the fields in it change" },
    ),
    step("Delete the node pool", "nvkectl delete nodepool workers --cluster capd-demo"),
    step("Watch it go", "nvkectl get nodepools workers --cluster capd-demo", {
      note: "its nodes are drained first",
      until: { exitCode: 4, describe: "it is gone", timeoutMs: 120_000 },
    }),
    step("Delete the cluster, and wait until it is gone", "nvkectl delete cluster capd-demo --wait --timeout 2m", {
      lookAt: LOOK_AT_SANDBOX,
    }),
    step("Nothing is left", "nvkectl get clusters"),
  ];
}

const NICO_KEY = SANDBOX_NICO_API_KEY;

const INSTALL_ARGS = [
  'nvkectl install --sitespec "$NVKE_SANDBOX_DIR/sitespec.yaml" --stack-config "$NVKE_SANDBOX_DIR/stack.yaml" \\',
  '  --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG" --work-dir "$NVKE_SANDBOX_DIR/install"',
];
const RELEASE_FILE = '"$NVKE_SANDBOX_DIR/release.json"';
const INSTALL_FROM_RELEASE = [
  INSTALL_ARGS[0],
  `${INSTALL_ARGS[1]} \\`,
  `  --release ${RELEASE_FILE} --plain-http`,
].join("\n");
/** Every object kind the install writes, with its resourceVersion: the same list twice means nothing changed. */
const RESOURCE_VERSIONS =
  'kubectl --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG" get deployments,services,configmaps,serviceaccounts,networkpolicies,storageclasses -A \\\n' +
  "  -o custom-columns=KIND:.kind,NAMESPACE:.metadata.namespace,NAME:.metadata.name,VERSION:.metadata.resourceVersion";
const LOOK_AT_INSTALL = "docs/install.md, docs/troubleshooting.md, ./run sandbox status";
/** What the install may create, by kind, namespace and name, sorted: before the install and after the uninstall. */
const SITE_OBJECTS =
  'kubectl --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG" get namespaces,customresourcedefinitions,deployments,storageclasses,networkpolicies,clusterroles,secrets,configmaps -A \\\n' +
  "  -o custom-columns=KIND:.kind,NAMESPACE:.metadata.namespace,NAME:.metadata.name --no-headers | awk '{print $1, $2, $3}' | sort";
const PINNED_REFERENCE = /^127\.0\.0\.1:\d+\/nvke\/release@sha256:[0-9a-f]{64}$/m;

/** The Deployments an install from the sandbox's release leaves, each `namespace name` (`kubectl get deployments -A`). */
const INSTALLED_DEPLOYMENTS = [
  "capi-system capi-controller-manager",
  "capi-kubeadm-bootstrap-system capi-kubeadm-bootstrap-controller-manager",
  "capi-kubeadm-control-plane-system capi-kubeadm-control-plane-controller-manager",
  "nico-system nico-controller-manager",
  "nke-controller nvke-controller",
] as const;

function deploymentsReady(stdout: string): string | undefined {
  const missing = INSTALLED_DEPLOYMENTS.filter((d) => {
    const [namespace = "", name = ""] = d.split(" ");
    return !new RegExp(`^${namespace}\\s+${name}\\s+1/1\\s`, "m").test(stdout);
  });
  if (missing.length > 0) return `not ready, or missing: ${missing.join(", ")}`;
  if (!/^nke-controller\s+\S+@sha256:[0-9a-f]{64}$/m.test(stdout)) {
    return "the controller's image is not pinned by digest";
  }
  if (!/^nvke-controller-api-clients\s/m.test(stdout)) return "the NetworkPolicy for the client networks is missing";
  return undefined;
}

/** nvkectl taken from the verified release: `pnpm package`'s file for this machine (x64), as the release lists it. */
const TAKEN_NVKECTL = '"$NVKE_SANDBOX_DIR/nvkectl-linux-x64"';

/**
 * nvkectl itself taken from the verified release, as docs/release-artifacts.md's sandbox
 * section does: the single-file executable for linux/amd64 written from the release (its
 * bytes checked against the digest the signed description pins), checked against the
 * SHA256SUMS `pnpm package` wrote, then run: `--version` and a command against the sandbox.
 */
export function releaseExecutableFlow(): Step[] {
  return [
    step(
      "Take nvkectl itself from the verified release",
      [
        `nvkectl release export "$RELEASE_REF" --plain-http --nvkectl linux/amd64 --output-file ${TAKEN_NVKECTL}`,
        '(cd "$NVKE_SANDBOX_DIR" && sha256sum --check --ignore-missing release/SHA256SUMS)',
      ].join("\n"),
      {
        note: "the real single-file executable (pnpm package), read by the digest the signed description pins and checked as it is read; then against its SHA256SUMS line",
        check: ({ stdout }) =>
          /^nvkectl-linux-x64: OK$/m.test(stdout) ? undefined : "the file does not match its SHA256SUMS line",
        lookAt: "docs/release-artifacts.md",
      },
    ),
    step(
      "Run the nvkectl taken from the release",
      [`${TAKEN_NVKECTL} --version`, `XDG_CACHE_HOME="$NVKE_SANDBOX_DIR/cache" ${TAKEN_NVKECTL} get providers`].join(
        "\n",
      ),
      {
        note: "one file, no Node.js needed: on its first start it writes its package to a private cache directory, once",
        check: ({ stdout }) =>
          !/^@nodekit\/nvkectl\/\d+\.\d+\.\d+ linux-x64 node-v22\./m.test(stdout)
            ? "--version did not print nvkectl's version"
            : /^capd\s+CONFIGURED\s/m.test(stdout)
              ? undefined
              : "get providers did not show the sandbox's capd provider CONFIGURED",
        lookAt: "docs/release-artifacts.md",
      },
    ),
  ];
}

/**
 * The sandbox's signed release verified and exported, then `nvkectl install` on the sandbox's
 * site cluster: its dry run, then applied for real from the release, as docs/install.md's
 * "Install on the sandbox" runs it.
 */
export function installFlow(): Step[] {
  return [
    step(
      "Verify the sandbox's release under its policy",
      [
        'RELEASE_REF=$(nvkectl release verify "$NVKE_SANDBOX_RELEASE" --policy "$NVKE_SANDBOX_POLICY" --plain-http)',
        "export RELEASE_REF",
        'echo "$RELEASE_REF"',
      ].join("\n"),
      {
        note: "the signature checked against the policy's key, offline, and every artifact the release lists found in the registry at its digest; it prints the verified reference, pinned by digest",
        check: ({ stdout }) => (PINNED_REFERENCE.test(stdout) ? undefined : "verify did not print a pinned reference"),
        lookAt: "docs/release-artifacts.md, docs/release-policy.md, ./run sandbox status",
      },
    ),
    step(
      "Write the release manifest",
      [
        `nvkectl release export "$RELEASE_REF" --plain-http --output-file ${RELEASE_FILE}`,
        `grep -c '"digest": "sha256:' ${RELEASE_FILE}`,
      ].join("\n"),
      {
        note: "the description as published, checked against its digest; export verifies no signature, so it takes the reference verify printed",
        check: ({ stdout }) =>
          Number(stdout.trim().split("\n").at(-1)) >= 8 ? undefined : "the release manifest lists too few digests",
        lookAt: "docs/release-artifacts.md",
      },
    ),
    ...releaseExecutableFlow(),
    step(
      "Write a site spec and a stack config for the install",
      [
        'nvkectl sitespec generate --hosts examples/hosts.csv --site-name my-tier0-site --output-file "$NVKE_SANDBOX_DIR/sitespec.yaml"',
        "sed -e 's#REPLACE_NICO_API_ENDPOINT#https://nico.example.net/api#' -e 's#REPLACE_NICO_ORGANIZATION_ID#org-1#' \\",
        "  -e 's#REPLACE_NICO_API_NAME#nvke#' -e 's#REPLACE_PROFILES_IMAGE#registry.example.net/nvke/profiles:v1#' \\",
        `  -e "s#REPLACE_PROVIDER_REPOSITORY_DIR#$NVKE_SANDBOX_PROVIDERS#" examples/stack.yaml > "$NVKE_SANDBOX_DIR/stack.yaml"`,
      ].join("\n"),
      {
        note: "every REPLACE_* value of examples/stack.yaml filled in (deploy/README.md lists the keys); the provider repository is the sandbox's offline one",
      },
    ),
    step(
      "Dry-run the install of the controller stack",
      [`export NVKE_NICO_API_KEY=${NICO_KEY}`, INSTALL_ARGS[0], `${INSTALL_ARGS[1]} --dry-run`].join("\n"),
      {
        note: "every call the install would make, in order, after the same read-only checks (the nodes' architecture); it changes nothing. The site admin's kubeconfig: installing is a site admin's task",
        check: ({ stdout }) =>
          stdout.includes(NICO_KEY)
            ? "the NICo API key shows in the plan"
            : /^# \[\d+\/\d+\] node-architecture: /m.test(stdout)
              ? undefined
              : "the plan does not show the nodes' architecture",
        lookAt: LOOK_AT_INSTALL,
      },
    ),
    step(
      "Note what the site has before the install",
      `${SITE_OBJECTS} > "$NVKE_SANDBOX_DIR/site-before.txt"\nwc -l < "$NVKE_SANDBOX_DIR/site-before.txt"`,
      {
        note: "every namespace, CRD, Deployment, StorageClass, NetworkPolicy, ClusterRole, Secret and ConfigMap by name: the uninstall at the end is held to it",
      },
    ),
    step("Install the controller stack from the release, for real", INSTALL_FROM_RELEASE, {
      note: "clusterctl init from the release's provider components, the StorageClass, the deploy path's items pulled by digest, the SPIRE patch, the NetworkPolicy; the controller manager's stand-in makes the workloads ready",
      check: ({ stdout, stderr }) =>
        `${stdout}${stderr}`.includes(NICO_KEY) ? "the NICo API key shows in the output" : undefined,
      lookAt: LOOK_AT_INSTALL,
      timeoutMs: 15 * 60_000,
    }),
    step(
      "See what it installed",
      [
        'kubectl --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG" get deployments -A',
        'kubectl --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG" get deployment nvke-controller -n nke-controller \\',
        '  -o jsonpath=\'{.metadata.namespace}{"  "}{.spec.template.spec.containers[0].image}{"\\n"}\'',
        'kubectl --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG" get networkpolicy -n nke-controller',
      ].join("\n"),
      {
        note: "the Cluster API controllers, the NICo provider and the NVKE controller, ready; the controller's image by digest; the NetworkPolicy for the client networks",
        check: ({ stdout }) => deploymentsReady(stdout),
        lookAt: LOOK_AT_INSTALL,
      },
    ),
    step("Check the infrastructure providers: nico is there now", "nvkectl get providers", {
      note: "the install put the NICo key where the provider reads it (nico-system/nico-credentials) and created the NicoIdentity naming it; the provider's own credential check (a stand-in here: no NICo API is reachable) reports HEALTHY",
      check: ({ stdout }) =>
        /^nico\s+CONFIGURED\s+HEALTHY\s/m.test(stdout) ? undefined : "nico is not CONFIGURED with HEALTHY credentials",
      lookAt: "docs/providers.md, docs/install.md",
    }),
    step(
      "Run it again: nothing changes",
      [
        `${RESOURCE_VERSIONS} > "$NVKE_SANDBOX_DIR/before.txt"`,
        INSTALL_FROM_RELEASE,
        `${RESOURCE_VERSIONS} > "$NVKE_SANDBOX_DIR/after.txt"`,
        'diff "$NVKE_SANDBOX_DIR/before.txt" "$NVKE_SANDBOX_DIR/after.txt" && echo "nothing changed"',
      ].join("\n"),
      {
        note: "clusterctl leaves the installed providers alone; helm upgrade --install and server-side apply leave every object as it was (the resourceVersions before and after are the same); only helm records a new revision",
        check: ({ stdout }) => (/^nothing changed$/m.test(stdout) ? undefined : "the second install changed objects"),
        lookAt: LOOK_AT_INSTALL,
        timeoutMs: 15 * 60_000,
      },
    ),
  ];
}

const NEXT_RELEASE_FILE = '"$NVKE_SANDBOX_DIR/release-next.json"';
const SITE_INPUTS = [
  '  --sitespec "$NVKE_SANDBOX_DIR/sitespec.yaml" --stack-config "$NVKE_SANDBOX_DIR/stack.yaml" \\',
  `  --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG" --work-dir "$NVKE_SANDBOX_DIR/install" --release ${NEXT_RELEASE_FILE} --plain-http`,
];
const UPGRADE_APPLY = ["nvkectl upgrade apply \\", ...SITE_INPUTS].join("\n");
const LOOK_AT_UPGRADE = "docs/install.md (Upgrade), ./run sandbox status";

/**
 * Day 2 on the installed site, as docs/install.md's "Upgrade" runs it: what is installed,
 * the sandbox's second release verified and exported, the upgrade planned, then applied, and
 * applied again (nothing changes).
 */
export function upgradeFlow(): Step[] {
  return [
    step(
      "Ask the site what it runs",
      [
        'nvkectl config set-site sandbox-admin --url "$NVKE_SANDBOX_URL" --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG"',
        "nvkectl version --site sandbox-admin",
      ].join("\n"),
      {
        note: "nvkectl's version, the controller API's, the site cluster's Kubernetes and the installed release, read from the install record (kube-system: the site admin's kubeconfig reads it, so a site of its own)",
        check: ({ stdout }) =>
          /nvke 0\.9\.0/.test(stdout) ? undefined : "the installed release nvke 0.9.0 is not shown",
        lookAt: LOOK_AT_UPGRADE,
      },
    ),
    step(
      "Verify and export the sandbox's second release",
      [
        'NEXT_REF=$(nvkectl release verify "$NVKE_SANDBOX_RELEASE_NEXT" --policy "$NVKE_SANDBOX_POLICY" --plain-http)',
        `nvkectl release export "$NEXT_REF" --plain-http --output-file ${NEXT_RELEASE_FILE}`,
      ].join("\n"),
      {
        note: "nvke 0.9.1: the controller chart and the NICo provider one version newer, signed with the same key",
        lookAt: "docs/release-artifacts.md, ./run sandbox status",
      },
    ),
    step("Plan the upgrade", ["nvkectl upgrade plan \\", ...SITE_INPUTS].join("\n"), {
      note: "per item and per Cluster API provider, from → to, what restarts, the contracts; it changes nothing",
      check: ({ stdout }) =>
        !/^nvke-controller\s+chart\s+changed\s+0\.9\.0\s+0\.9\.1\s/m.test(stdout)
          ? "the plan does not move nvke-controller 0.9.0 → 0.9.1"
          : !/^nico\s+InfrastructureProvider\s+upgrade\s+v0\.3\.0\s+v0\.4\.0\s/m.test(stdout)
            ? "the plan does not upgrade nico v0.3.0 → v0.4.0"
            : /^Refused:/m.test(stdout)
              ? "the plan refuses something"
              : undefined,
      lookAt: LOOK_AT_UPGRADE,
    }),
    step("Apply it", UPGRADE_APPLY, {
      note: "the release's content hashed again, the site checked against its record (drift), then the install's plan: clusterctl upgrade apply for nico, helm upgrade for the chart, the record written last",
      check: ({ stdout, stderr }) =>
        `${stdout}${stderr}`.includes(NICO_KEY)
          ? "the NICo API key shows in the output"
          : /upgraded site my-tier0-site to nvke 0\.9\.1/.test(`${stdout}${stderr}`)
            ? undefined
            : "it did not say the site was upgraded",
      lookAt: LOOK_AT_UPGRADE,
      timeoutMs: 15 * 60_000,
    }),
    step(
      "Apply it again: nothing changes",
      [
        `${RESOURCE_VERSIONS} > "$NVKE_SANDBOX_DIR/before-upgrade.txt"`,
        UPGRADE_APPLY,
        `${RESOURCE_VERSIONS} > "$NVKE_SANDBOX_DIR/after-upgrade.txt"`,
        'diff "$NVKE_SANDBOX_DIR/before-upgrade.txt" "$NVKE_SANDBOX_DIR/after-upgrade.txt" && echo "nothing changed"',
        "nvkectl version --site sandbox-admin",
      ].join("\n"),
      {
        note: "every item and provider is unchanged in the plan, every object keeps its resourceVersion; the site runs nvke 0.9.1",
        check: ({ stdout }) =>
          !/^nothing changed$/m.test(stdout)
            ? "the second apply changed objects"
            : /nvke 0\.9\.1/.test(stdout)
              ? undefined
              : "the site does not say it runs nvke 0.9.1",
        lookAt: LOOK_AT_UPGRADE,
        timeoutMs: 15 * 60_000,
      },
    ),
    step(
      "Write a support bundle of the site, and look inside",
      [
        'nvkectl support-bundle --site sandbox-admin --output "$NVKE_SANDBOX_DIR/site-support.tar.gz"',
        'tar -tzf "$NVKE_SANDBOX_DIR/site-support.tar.gz"',
        `tar -xzOf "$NVKE_SANDBOX_DIR/site-support.tar.gz" | grep -cF ${NICO_KEY} || echo "no secret in it"`,
      ].join("\n"),
      {
        note: "the install record, the controller's clusters and node pools, the providers, the stack's objects and events, nvkectl's config; Secrets by name and keys only",
        check: ({ stdout, stderr }) =>
          `${stderr}`.includes(NICO_KEY)
            ? "the NICo API key shows in the output"
            : !/^no secret in it$/m.test(stdout)
              ? "the NICo API key is in the bundle"
              : /\/install-record\.json$/m.test(stdout)
                ? undefined
                : "the bundle has no install-record.json",
        lookAt: "docs/install.md (Support bundle)",
      },
    ),
  ];
}

/** The uninstall, last (nothing after it needs the controller stack), as docs/install.md's "Uninstall" runs it. */
export function uninstallFlow(): Step[] {
  return [
    step(
      "Dry-run the uninstall",
      'nvkectl uninstall --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG" --work-dir "$NVKE_SANDBOX_DIR/install" --dry-run',
      {
        note: "the reverse plan of what the install record says was installed, every call in order; it changes nothing",
        check: ({ stdout }) =>
          /^# \[\d+\/\d+\] record: /m.test(stdout) ? undefined : "the plan does not end with the record",
        lookAt: LOOK_AT_INSTALL,
      },
    ),
    step(
      "Uninstall, and see that nothing the install created is left",
      [
        'nvkectl uninstall --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG" --work-dir "$NVKE_SANDBOX_DIR/install"',
        `${SITE_OBJECTS} > "$NVKE_SANDBOX_DIR/site-after.txt"`,
        'comm -13 "$NVKE_SANDBOX_DIR/site-before.txt" "$NVKE_SANDBOX_DIR/site-after.txt" | grep . || echo "nothing the install created is left"',
      ].join("\n"),
      {
        note: "every object on the site now that was not there before the install: none",
        check: ({ stdout }) =>
          /^nothing the install created is left$/m.test(stdout) ? undefined : "objects the install created are left",
        lookAt: LOOK_AT_INSTALL,
        timeoutMs: 15 * 60_000,
      },
    ),
  ];
}

/** The Proxmox secret the sandbox's registration is given: not a secret, but a canary no output or bundle may show. */
const SANDBOX_PROXMOX_TOKEN_SECRET = "sandbox-proxmox-not-a-secret";
const PROXMOX_CREDENTIALS = `export NR_PROXMOX_URL=https://pve.sandbox.test:8006/api2/json NR_PROXMOX_TOKEN_ID='root@pam!nr' NR_PROXMOX_TOKEN_SECRET=${SANDBOX_PROXMOX_TOKEN_SECRET}`;
const LOOK_AT_AGENT =
  "nr cluster status, the run's log $NR_HOME/run/last-run.log, ./run sandbox status, docs/registration.md, docs/nr-state.md";
const AGENT = '"$NR_SANDBOX_AGENT_KUBECONFIG"';
const BUNDLE = '"$NVKE_SANDBOX_DIR/demo-agent-bundle.tar.gz"';
// No --calico-manifests: the reset takes them from where the registration recorded it took them.
const RESET = "nr cluster reset";
/** What the agent cluster had before nr ran: kube-apiserver's own namespaces, and nothing of nr's. */
const AGENT_CLUSTER_LEFT = [
  "namespace/default",
  "namespace/kube-node-lease",
  "namespace/kube-public",
  "namespace/kube-system",
];

const noSecret = ({ stdout, stderr }: { stdout: string; stderr: string }) =>
  `${stdout}${stderr}`.includes(SANDBOX_PROXMOX_TOKEN_SECRET) ? "the Proxmox secret shows in the output" : undefined;

/** The agent cluster's objects after the reset: exactly what it had before nr ran. */
function nothingLeft(stdout: string): string | undefined {
  const objects = stdout.split("\n").filter((line) => /^[a-z.]+\/\S+$/.test(line));
  const extra = objects.filter((name) => !AGENT_CLUSTER_LEFT.includes(name));
  if (extra.length > 0) return `the reset left ${extra.join(", ")} on the agent cluster`;
  if (!/^NAME\s+NAMESPACE\s+REVISION/m.test(stdout) || /^proxmox-operator\s/m.test(stdout))
    return "a helm release is left";
  if (!stdout.includes('{"items":[]}')) return "the agent is still in NodeRings";
  if (!/^No registration on this machine yet/m.test(stdout)) return "nr cluster status still shows a registration";
  if (!/\/archive\/[^/\s]+\/state\.json$/m.test(stdout)) return "the registration's state was not archived";
  return undefined;
}

/**
 * nr against the sandbox's NodeRings API emulator, as docs/registration.md's "Try it on the
 * sandbox" runs it: the dry run, then a real registration of the sandbox's pretend VM (its
 * agent cluster, with the stand-ins for the k3s installer and liqoctl), its day 2 (status,
 * the live check, a support bundle) and its reset, until nothing nr created is left.
 */
export function registrationFlow(): Step[] {
  return [
    step("Dry-run an agent's registration with nr", "nr cluster register --name demo-agent --dry-run", {
      note: "every call a real run on a VM would make, phase by phase; nothing is installed, no agent is created (NR_HOME is the sandbox's)",
      check: ({ stdout }) =>
        /^# \[10\/10\] verify: /m.test(stdout) ? undefined : "the plan does not reach its verify phase",
      lookAt: LOOK_AT_NODERINGS,
    }),
    step("Where a registration stands", "nr cluster status", {
      note: "no registration on this machine yet: the dry run wrote no state",
      lookAt: LOOK_AT_NODERINGS,
    }),
    step(
      "Register the sandbox's pretend VM for real",
      [
        PROXMOX_CREDENTIALS,
        "# PID 1 is not systemd here (a container, a CI runner): --ignore-precheck init lets that check pass, reported and recorded.",
        "# The agent cluster's kubeconfig stands for k3s's /etc/rancher/k3s/k3s.yaml; --api-server-url for the address NodeRings reaches.",
        "nr cluster register --name demo-agent --ignore-precheck init \\",
        `  --kubeconfig ${AGENT} --api-server-url https://demo-agent.sandbox.test:6443 \\`,
        '  --calico-manifests "$NR_SANDBOX_CALICO_MANIFESTS" --operator-chart "$NR_SANDBOX_OPERATOR_CHART"',
      ].join("\n"),
      {
        note: "the ten phases for real: the agent created in NodeRings, k3s (a stand-in: its node NotReady until Calico runs), Calico from trimmed manifests, Liqo and both peerings (liqoctl's stand-in), the namespaces offloaded, the operator chart with the Proxmox Secret, verify; on the agent cluster, a kube-apiserver of its own",
        check: (result) =>
          noSecret(result) ??
          (/registered: 10 phases ran/.test(result.stdout) ? undefined : "the registration did not run its ten phases"),
        lookAt: LOOK_AT_AGENT,
        timeoutMs: 15 * 60_000,
      },
    ),
    step("Where it stands now", "nr cluster status", {
      note: "every phase DONE, with the agent, the pins and nothing left to do",
      check: ({ stdout }) => (/^Status:\s+succeeded$/m.test(stdout) ? undefined : "the registration is not complete"),
      lookAt: LOOK_AT_AGENT,
    }),
    step("Check the running machine", "nr cluster status --live", {
      note: "read-only: the checks the phases' probes and verify make, run now, and NodeRings' view by GET only",
      check: ({ stdout }) => (/^Live:\s+pass\b/m.test(stdout) ? undefined : "the live check did not pass"),
      lookAt: LOOK_AT_AGENT,
    }),
    step(
      "The platform publishes new pins: plan the upgrade, and change nothing",
      [
        "./run sandbox pins next",
        "nr cluster upgrade --plan --api-server-url https://demo-agent.sandbox.test:6443 \\",
        '  --calico-manifests "$NR_SANDBOX_CALICO_MANIFESTS" --operator-chart "$NR_SANDBOX_OPERATOR_CHART"',
        "./run sandbox pins served",
      ].join("\n"),
      {
        note: "NodeRings now pins k3s one minor and Calico one patch on: the plan says, per component, from which version to which and what restarts; Liqo, the peerings and the operator are untouched, and nothing runs",
        check: ({ stdout }) =>
          !/k3s\s+v1\.33\.5\+k3s1\s+v1\.34\.1\+k3s1/.test(stdout)
            ? "the plan does not move k3s to v1.34.1+k3s1"
            : !/calico\s+v3\.30\.3\s+v3\.30\.4/.test(stdout)
              ? "the plan does not move Calico to v3.30.4"
              : undefined,
        lookAt: LOOK_AT_AGENT,
      },
    ),
    step(
      "Write a support bundle, and look inside",
      [
        `nr cluster support-bundle --output ${BUNDLE}`,
        `tar -tzvf ${BUNDLE}`,
        `tar -xzOf ${BUNDLE} | grep -cF -e "$NR_PROXMOX_TOKEN_SECRET" -e "$NR_API_TOKEN" || echo "no secret in it"`,
      ].join("\n"),
      {
        note: "the state, the last run's redacted log, host facts, nodes, tigerastatus, liqoctl info, helm status and the pins; k3s check-config and its journal fail here (no k3s runs), and the bundle says so",
        check: (result) =>
          noSecret(result) ??
          (!/^no secret in it$/m.test(result.stdout)
            ? "a secret is in the bundle"
            : /\/state\.json$/m.test(result.stdout)
              ? undefined
              : "the bundle has no state.json"),
        lookAt: LOOK_AT_AGENT,
      },
    ),
    step("Dry-run the reset", `${RESET} --dry-run`, {
      note: "the registration's phases in reverse, every call in order; nothing changes",
      check: ({ stdout }) =>
        /^# \[9\/9\] archive: /m.test(stdout) ? undefined : "the plan does not reach its archive phase",
      lookAt: LOOK_AT_AGENT,
    }),
    step("Reset the machine, for real", RESET, {
      note: "unoffload, delete the namespace the offloading created, unpeer both ways, liqoctl uninstall --purge, the operator and its Secret, Calico, k3s-uninstall.sh, the agent deregistered, the state archived",
      check: (result) =>
        noSecret(result) ??
        (/reset: 9 phases ran/.test(result.stdout) ? undefined : "the reset did not run its phases"),
      lookAt: LOOK_AT_AGENT,
      timeoutMs: 10 * 60_000,
    }),
    step(
      "Nothing nr created is left",
      [
        `kubectl --kubeconfig ${AGENT} get namespaces,nodes,crds,secrets -A -o name`,
        `helm list -A --kubeconfig ${AGENT}`,
        'curl -fsS -H "Authorization: Bearer $NR_API_TOKEN" "$NR_API_URL/api/v1/agents"; echo',
        'ls -d "$NR_HOME"/archive/*/state.json',
        "nr cluster status",
      ].join("\n"),
      {
        note: "on the agent cluster only what kube-apiserver made itself (nr-vnc-gateway, which the offloading created, is deleted); no node, CRD, Secret or helm release; no agent in NodeRings; the registration's state archived",
        check: ({ stdout }) => nothingLeft(stdout),
        lookAt: LOOK_AT_AGENT,
      },
    ),
  ];
}

/** The Proxmox secret `up --fleet` gives the fleet's pretend VMs: a canary no output may show. */
const FLEET_PROXMOX_TOKEN_SECRET = "sandbox-fleet-proxmox-not-a-secret";
const FLEET_PLAY = 'ansible-playbook -i "$NR_SANDBOX_FLEET_INVENTORY" examples/fleet-register.yml';
const LOOK_AT_FLEET =
  "docs/fleets.md (Ansible), the inventory $NR_SANDBOX_FLEET_INVENTORY, each VM's nr cluster status (NR_HOME=$NVKE_SANDBOX_DIR/fleet/<vm>/nr), ./run sandbox status";

/** The fleet's VMs in a PLAY RECAP with these counts: undefined when every one of them has them, else which do not. */
function recapOf(stdout: string, counts: { changed: number; failed: number }): string | undefined {
  const hosts = [...stdout.matchAll(/^(fleet-vm-\d+)\s+:\s+ok=\d+\s+changed=(\d+)\s+unreachable=0\s+failed=(\d+)/gm)];
  if (hosts.length !== 3) return `the recap shows ${hosts.length} of the fleet's 3 VMs`;
  const off = hosts.filter(
    ([, , changed, failed]) => Number(changed) !== counts.changed || Number(failed) !== counts.failed,
  );
  if (off.length > 0) {
    return `${off.map(([, name]) => name).join(", ")}: not changed=${counts.changed} failed=${counts.failed}`;
  }
  return `${stdout}`.includes(FLEET_PROXMOX_TOKEN_SECRET) ? "the Proxmox secret shows in the output" : undefined;
}

/**
 * The nodekit.nr Ansible collection over the sandbox's fleet of three pretend VMs
 * (`./run sandbox up --fleet 3`: each a cluster, stand-ins, an NR_HOME and a host root of its
 * own), against the sandbox's NodeRings emulator, as docs/fleets.md's "Try it on the sandbox"
 * runs it: the collection built and installed, check mode, the registration, and a second play
 * that changes nothing.
 */
export function fleetFlow(): Step[] {
  return [
    step(
      "Build the nodekit.nr Ansible collection, and install it for the sandbox",
      [
        "ANSIBLE_BIN=$(tooling/ansible-testbin/ensure.sh)",
        'export PATH="$ANSIBLE_BIN:$PATH" ANSIBLE_HOME="$NVKE_SANDBOX_DIR/fleet/ansible" ANSIBLE_COLLECTIONS_PATH="$NVKE_SANDBOX_DIR/fleet/collections"',
        'ansible-galaxy collection build ansible/ --output-path "$NVKE_SANDBOX_DIR/fleet/dist" --force',
        'ansible-galaxy collection install "$NVKE_SANDBOX_DIR/fleet/dist/nodekit-nr-0.1.0.tar.gz" -p "$ANSIBLE_COLLECTIONS_PATH" --force',
      ].join("\n"),
      {
        note: "ansible-core from the tests' own virtual environment (installed once into ~/.cache/nodekit); the collection and Ansible's files stay in the sandbox",
        check: ({ stdout }) =>
          /nodekit\.nr:0\.1\.0 was installed successfully/.test(stdout)
            ? undefined
            : "the collection was not installed",
        lookAt: "docs/fleets.md (Ansible), tooling/ansible-testbin/ensure.sh",
        timeoutMs: 10 * 60_000,
      },
    ),
    step("Check mode over the fleet: every VM's plan, nothing changes", `${FLEET_PLAY} --check`, {
      note: "nr cluster register --dry-run on each VM (changed: phases would run); no VM has a registration afterwards",
      check: ({ stdout }) =>
        recapOf(stdout, { changed: 1, failed: 0 }) ??
        ((stdout.match(/"msg": "fleet-vm-\d+: none, agent none"/g) ?? []).length === 3
          ? undefined
          : "a VM has a registration after check mode"),
      lookAt: LOOK_AT_FLEET,
      timeoutMs: 5 * 60_000,
    }),
    step("Register the three VMs, three at a time", `${FLEET_PLAY} --forks 3`, {
      note: "each VM's ten phases against its own cluster and the sandbox's NodeRings; changed on each, its agent in NodeRings",
      check: ({ stdout }) =>
        recapOf(stdout, { changed: 1, failed: 0 }) ??
        ((stdout.match(/"msg": "fleet-vm-(\d+): succeeded, agent fleet-vm-\1"/g) ?? []).length === 3
          ? undefined
          : "a VM's registration did not succeed"),
      lookAt: LOOK_AT_FLEET,
      timeoutMs: 15 * 60_000,
    }),
    step("Run it again: nothing changes", `${FLEET_PLAY} --forks 3`, {
      note: "every phase re-checked and kept on each VM: changed=0 across the fleet",
      check: ({ stdout }) => recapOf(stdout, { changed: 0, failed: 0 }),
      lookAt: LOOK_AT_FLEET,
      timeoutMs: 10 * 60_000,
    }),
  ];
}

const FLUX_TREE = '"$NVKE_SANDBOX_DIR/flux-tree"';
const ARGOCD_TREE = '"$NVKE_SANDBOX_DIR/argocd-tree"';
const LOOK_AT_FLUX = "docs/gitops.md, ./run sandbox status";

/**
 * The same install through Flux (docs/gitops.md), on the site the uninstall left as it was
 * before: the tree emitted from the release, its artifacts pushed by digest to the sandbox's
 * registry and signed with the release's key, the Secrets it names created, and Flux's own
 * source-controller and kustomize-controller reconciling it until every Kustomization is
 * Ready; the site then holds what the install gave it.
 */
export function fluxFlow(): Step[] {
  return [
    step(
      "Emit the install as a Flux tree, pushed by digest and signed with the release's key",
      [
        `export NVKE_NICO_API_KEY=${NICO_KEY}`,
        "SECONDS=0",
        INSTALL_ARGS[0],
        `${INSTALL_ARGS[1]} --release ${RELEASE_FILE} --plain-http \\`,
        `  --emit flux ${FLUX_TREE} --flux-repository "oci://$NVKE_SANDBOX_REGISTRY/nvke/flux" --flux-insecure \\`,
        '  --flux-pull-secret nvke-registry --flux-push --flux-sign-key "$NVKE_SANDBOX_DIR/release/signing-key.pem"',
        'echo "rendered, written, pushed and signed in $SECONDS s"',
      ].join("\n"),
      {
        note: "the install's reads, checks and plan, rendered instead of applied (helm template, clusterctl generate provider), one OCI artifact per item pushed by digest with a cosign signature made with the release's key; the key is never printed, nothing on the cluster changes",
        check: ({ stdout, stderr }) =>
          `${stdout}${stderr}`.includes(NICO_KEY)
            ? "the NICo API key shows in the output"
            : !/^cluster-api\s+sha256:[0-9a-f]{64}\s+cert-manager$/m.test(stdout)
              ? "the tree's items are not listed with their digests"
              : /pushed \S+@sha256:[0-9a-f]{64}, signed/.test(stderr)
                ? undefined
                : "no artifact was pushed and signed",
        lookAt: LOOK_AT_FLUX,
        timeoutMs: 15 * 60_000,
      },
    ),
    step(
      "Emit the same install for Argo CD: an Application per item, pushed by digest",
      [
        `export NVKE_NICO_API_KEY=${NICO_KEY}`,
        INSTALL_ARGS[0],
        `${INSTALL_ARGS[1]} --release ${RELEASE_FILE} --plain-http \\`,
        `  --emit argocd ${ARGOCD_TREE} --argocd-repository "oci://$NVKE_SANDBOX_REGISTRY/nvke/argocd" --argocd-push`,
      ].join("\n"),
      {
        note: "the same rendered items as Argo CD Applications, each pinned by its artifact's digest, sync waves for the deploy path's order, and the app of apps to apply; Argo CD checks no signature on an OCI source, so the digest is the guarantee (docs/gitops.md)",
        check: ({ stdout, stderr }) =>
          `${stdout}${stderr}`.includes(NICO_KEY)
            ? "the NICo API key shows in the output"
            : !/^nvke-cluster-api\s+sha256:[0-9a-f]{64}\s+\d+$/m.test(stdout) ||
                !/^nvke-app-of-apps\s+sha256:[0-9a-f]{64}\s+-$/m.test(stdout)
              ? "the Applications are not listed with their digests and sync waves"
              : /pushed \S+\/nvke\/argocd\/app-of-apps@sha256:[0-9a-f]{64}/.test(stderr)
                ? undefined
                : "the app of apps was not pushed by digest",
        lookAt: LOOK_AT_FLUX,
        timeoutMs: 15 * 60_000,
      },
    ),
    step(
      "Create the Secrets the tree names",
      [
        'export KUBECONFIG="$NVKE_SANDBOX_ADMIN_KUBECONFIG"',
        "kubectl create namespace flux-system",
        // The sandbox's site may have these before any install (and after the uninstall): applied, not created.
        'for ns in nico-system nke-controller; do kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f -; done',
        'printf %s "$NVKE_NICO_API_KEY" | kubectl create secret generic nico-credentials -n nico-system --from-file=apiKey=/dev/stdin',
        'printf %s "$NVKE_NICO_API_KEY" | kubectl create secret generic nvke-nico-credentials -n nke-controller --from-file=apiKey=/dev/stdin',
        'openssl pkey -in "$NVKE_SANDBOX_DIR/release/signing-key.pem" -pubout | kubectl create secret generic nvke-artifact-keys -n flux-system --from-file=cosign.pub=/dev/stdin',
        'kubectl create secret docker-registry nvke-registry -n flux-system --from-file=.dockerconfigjson="$DOCKER_CONFIG/config.json"',
      ].join("\n"),
      {
        note: "the NICo key's two Secrets (from stdin, never argv), the public key source-controller verifies the artifacts with, the registry's pull credentials: the operator's, never in the tree",
        check: ({ stdout }) =>
          /secret\/nvke-artifact-keys created/.test(stdout)
            ? undefined
            : "the verification key's Secret was not created",
        lookAt: LOOK_AT_FLUX,
      },
    ),
    step(
      "Let Flux's own controllers reconcile it",
      [
        `./run sandbox flux-reconcile ${FLUX_TREE}`,
        'kubectl --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG" get deployments -A',
        'kubectl --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG" get deployment nvke-controller -n nke-controller \\',
        '  -o jsonpath=\'{.metadata.namespace}{"  "}{.spec.template.spec.containers[0].image}{"\\n"}\'',
        'kubectl --kubeconfig "$NVKE_SANDBOX_ADMIN_KUBECONFIG" get networkpolicy -n nke-controller',
      ].join("\n"),
      {
        note: "source-controller v1.9.0 and kustomize-controller v1.9.6, built from their Go modules, run outside the pod-less site cluster with its admin kubeconfig: every artifact's signature verified, every Kustomization Ready in dependency order; the site holds what the install gave it (the controller manager's stand-in makes the workloads ready)",
        check: ({ stdout }) => (/\sFalse\s/.test(stdout) ? "a Flux object is not Ready" : deploymentsReady(stdout)),
        lookAt: LOOK_AT_FLUX,
        timeoutMs: 20 * 60_000,
      },
    ),
  ];
}
