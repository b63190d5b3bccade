import { chmod, mkdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";

// Recording stand-ins for kind and nerdctl, in tests only: no container engine runs here.
// They are as strict as the programs, modelled on kind v0.30.0's source and nerdctl's:
//
// kind (sigs.k8s.io/kind v0.30.0)
// - needs a node provider: with KIND_EXPERIMENTAL_PROVIDER=nerdctl it uses nerdctl; without
//   it, it looks for docker, which this machine does not have (pkg/cluster/provider.go).
// - `--config` is decoded strictly (pkg/internal/apis/config/encoding/load.go:
//   apiVersion kind.x-k8s.io/v1alpha4, kind Cluster, yamlUnmarshalStrict: an unknown field
//   fails), then validated (pkg/internal/apis/config/validate.go: the cluster name matches
//   ^[a-z0-9.-]+$, ports are -1..65535, no two port mappings on one address/port/protocol,
//   at least one control-plane node, each node has an image).
// - `create cluster` fails when the name is taken: `node(s) already exist for a cluster with
//   the name "NAME"` (pkg/cluster/internal/create/create.go).
// - the API server listens on networking.apiServerAddress (default 127.0.0.1) and port
//   (default: a random one); the kubeconfig's server is that address and port (the nerdctl
//   provider's GetAPIServerEndpoint reads the port mapping) and the certificate's SANs are
//   [localhost, apiServerAddress] (pkg/cluster/internal/kubeadm/config.go).
// - the kubeconfig is written with mode 0600 (internal/kubeconfig/write.go), merged into an
//   existing file.
// - `export kubeconfig --name NAME` for no such cluster fails: `could not locate any control
//   plane nodes for cluster named 'NAME'` (pkg/cluster/internal/kubeconfig/kubeconfig.go).
// - `get clusters` prints one name a line, or "No kind clusters found." on stderr.
// nerdctl
// - `nerdctl version` asks containerd for its version; when the daemon cannot be reached it
//   prints the client part and fails with the connection error (cmd/nerdctl/version.go,
//   pkg/clientutil/client.go: "cannot access containerd socket …").
//
// Each call is recorded as one JSON line ({tool, args, provider}) in `calls.log`; the
// clusters kind made are in `kind-state.json`, and whether containerd runs in `containerd.json`.

export interface EngineStandIns {
  dir: string;
  callsLog: string;
  /** Sets what the stand-in containerd is: running at a version, or not running. */
  setContainerd(state: { running: false } | { running: true; version: string }): Promise<void>;
}

const KIND_SCRIPT = (jsYaml: string, state: string, calls: string, version: string) => `
const fs = require("node:fs");
const net = require("node:net");
const path = require("node:path");
const yaml = require(${JSON.stringify(jsYaml)});
const args = process.argv.slice(2);
const provider = process.env.KIND_EXPERIMENTAL_PROVIDER;
fs.appendFileSync(${JSON.stringify(calls)}, JSON.stringify({ tool: "kind", args, provider }) + "\\n");
const fail = (message) => { process.stderr.write("ERROR: " + message + "\\n"); process.exit(1); };
const readState = () => { try { return JSON.parse(fs.readFileSync(${JSON.stringify(state)}, "utf8")); } catch { return { clusters: {} }; } };
const writeState = (s) => fs.writeFileSync(${JSON.stringify(state)}, JSON.stringify(s));
if (args[0] === "version") { process.stdout.write("kind ${version} go1.24.6 linux/amd64\\n"); process.exit(0); }
const flags = {};
const known = { "create cluster": ["name", "config", "image", "retain", "wait", "kubeconfig"], "export kubeconfig": ["name", "kubeconfig", "internal"], "get clusters": [] };
const command = args.slice(0, 2).join(" ");
if (!(command in known)) fail("unknown command " + JSON.stringify(command));
for (let i = 2; i < args.length; i++) {
  const m = /^--([a-z-]+)(?:=(.*))?$/.exec(args[i]);
  if (!m || !known[command].includes(m[1])) fail("unknown flag: " + args[i]);
  flags[m[1]] = m[2] !== undefined ? m[2] : (m[1] === "retain" || m[1] === "internal" ? "true" : args[++i]);
}
if (provider !== "nerdctl") fail("failed to detect a node provider: docker is not installed here (set KIND_EXPERIMENTAL_PROVIDER=nerdctl)");
const s = readState();
const name = flags.name || "kind";
function writeKubeconfig(file, cluster) {
  const target = file || path.join(process.env.HOME || "/", ".kube", "config");
  let doc = { apiVersion: "v1", kind: "Config", clusters: [], contexts: [], users: [], preferences: {} };
  if (fs.existsSync(target)) doc = yaml.load(fs.readFileSync(target, "utf8")) || doc;
  const ctx = "kind-" + cluster.name;
  const server = "https://" + (net.isIPv6(cluster.apiServerAddress) ? "[" + cluster.apiServerAddress + "]" : cluster.apiServerAddress) + ":" + cluster.apiServerPort;
  const put = (list, entry) => [...(list || []).filter((e) => e.name !== entry.name), entry];
  doc.clusters = put(doc.clusters, { name: ctx, cluster: { server, "certificate-authority-data": "c3RhbmQtaW4=" } });
  doc.users = put(doc.users, { name: ctx, user: { "client-certificate-data": "c3RhbmQtaW4=", "client-key-data": "c3RhbmQtaW4=" } });
  doc.contexts = put(doc.contexts, { name: ctx, context: { cluster: ctx, user: ctx } });
  doc["current-context"] = ctx;
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
  fs.writeFileSync(target, yaml.dump(doc), { mode: 0o600 });
}
if (command === "get clusters") {
  const names = Object.keys(s.clusters).sort();
  if (names.length === 0) process.stderr.write("No kind clusters found.\\n");
  else process.stdout.write(names.join("\\n") + "\\n");
  process.exit(0);
}
if (command === "export kubeconfig") {
  const cluster = s.clusters[name];
  if (!cluster) fail("could not locate any control plane nodes for cluster named '" + name + "'. Use the --name option to select a different cluster");
  writeKubeconfig(flags.kubeconfig, cluster);
  process.stderr.write("Set kubectl context to \\"kind-" + name + "\\"\\n");
  process.exit(0);
}
// create cluster
let config = { kind: "Cluster", apiVersion: "kind.x-k8s.io/v1alpha4" };
if (flags.config) {
  let raw;
  try { raw = fs.readFileSync(flags.config, "utf8"); } catch (e) { fail("failed to create cluster: error reading file: " + e.message); }
  config = yaml.load(raw) || {};
  if (config.apiVersion !== "kind.x-k8s.io/v1alpha4") fail("failed to create cluster: unknown apiVersion: " + config.apiVersion);
  if (config.kind !== "Cluster") fail("failed to create cluster: unknown kind " + config.kind + " for apiVersion: " + config.apiVersion);
  const strict = (object, fields, type) => { for (const key of Object.keys(object || {})) if (!fields.includes(key)) fail("failed to create cluster: unable to decode config: field " + key + " not found in type " + type); };
  strict(config, ["kind", "apiVersion", "name", "nodes", "networking", "featureGates", "runtimeConfig", "kubeadmConfigPatches", "kubeadmConfigPatchesJSON6902", "containerdConfigPatches", "containerdConfigPatchesJSON6902"], "v1alpha4.Cluster");
  strict(config.networking, ["ipFamily", "apiServerPort", "apiServerAddress", "podSubnet", "serviceSubnet", "disableDefaultCNI", "kubeProxyMode", "dnsSearch"], "v1alpha4.Networking");
  for (const node of config.nodes || []) {
    strict(node, ["role", "image", "labels", "extraMounts", "extraPortMappings", "kubeadmConfigPatches", "kubeadmConfigPatchesJSON6902"], "v1alpha4.Node");
    for (const mapping of node.extraPortMappings || []) strict(mapping, ["containerPort", "hostPort", "listenAddress", "protocol"], "v1alpha4.PortMapping");
  }
}
const nodes = (config.nodes && config.nodes.length > 0 ? config.nodes : [{ role: "control-plane" }]).map((n) => ({ image: "kindest/node:v1.34.0@sha256:7416a61b42b1662ca6ca89f02028ac133a309a2a30ba309614e8ec94d976dc5a", ...n, ...(flags.image ? { image: flags.image } : {}) }));
const clusterName = flags.name || config.name || "kind";
const errors = [];
if (!/^[a-z0-9.-]+$/.test(clusterName)) errors.push("'" + clusterName + "' is not a valid cluster name, cluster names must match ^[a-z0-9.-]+$");
const port = (p) => p === undefined || (Number.isInteger(p) && p >= -1 && p <= 65535);
const networking = config.networking || {};
if (!port(networking.apiServerPort)) errors.push("invalid apiServerPort");
nodes.forEach((n, i) => {
  if (n.role !== "control-plane" && n.role !== "worker") errors.push("invalid configuration for node " + i + ": " + JSON.stringify(n.role) + " is not a valid node role");
  if (!n.image) errors.push("invalid configuration for node " + i + ": image is a required field");
  const seen = new Set();
  for (const m of n.extraPortMappings || []) {
    if (!port(m.hostPort) || !port(m.containerPort)) errors.push("invalid configuration for node " + i + ": invalid port");
    const key = (m.listenAddress || "0.0.0.0") + ":" + m.hostPort + "/" + (m.protocol || "TCP");
    if (m.hostPort > 0 && seen.has(key)) errors.push("invalid configuration for node " + i + ": port mapping with same listen address, port and protocol already configured: " + key);
    seen.add(key);
  }
});
if (!nodes.some((n) => n.role === "control-plane")) errors.push("must have at least one control-plane node");
if (errors.length > 0) fail("failed to create cluster: " + errors.join(", "));
if (s.clusters[clusterName]) fail("failed to create cluster: node(s) already exist for a cluster with the name \\"" + clusterName + "\\"");
const apiServerAddress = networking.apiServerAddress || "127.0.0.1";
const cluster = {
  name: clusterName,
  apiServerAddress,
  apiServerPort: networking.apiServerPort && networking.apiServerPort > 0 ? networking.apiServerPort : 40000 + Math.floor(Math.random() * 20000),
  certSANs: ["localhost", apiServerAddress],
  nodes,
};
s.clusters[clusterName] = cluster;
writeState(s);
writeKubeconfig(flags.kubeconfig, cluster);
process.stderr.write("Creating cluster \\"" + clusterName + "\\" ...\\n");
`;

const NERDCTL_SCRIPT = (calls: string, containerd: string, version: string) => `
const fs = require("node:fs");
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(calls)}, JSON.stringify({ tool: "nerdctl", args }) + "\\n");
if (args[0] === "--version") { process.stdout.write("nerdctl version ${version}\\n"); process.exit(0); }
if (args[0] === "version" && args[1] === "--format" && args[2] === "{{json .}}") {
  let daemon = { running: false };
  try { daemon = JSON.parse(fs.readFileSync(${JSON.stringify(containerd)}, "utf8")); } catch {}
  const client = { Version: "v${version}", GitCommit: "0000000", GoVersion: "go1.24.6", Os: "linux", Arch: "amd64", Components: [] };
  const server = daemon.running ? { Components: [{ Name: "containerd", Version: daemon.version, Details: { GitCommit: "0000000" } }, { Name: "runc", Version: "1.3.0" }] } : null;
  process.stdout.write(JSON.stringify({ Client: client, Server: server }) + "\\n");
  if (!daemon.running) {
    process.stderr.write('time="2026-03-02T10:15:00Z" level=fatal msg="cannot access containerd socket \\\\"/run/containerd/containerd.sock\\\\": no such file or directory"\\n');
    process.exit(1);
  }
  process.exit(0);
}
process.stderr.write("nerdctl stand-in: " + args.join(" ") + " is not modelled\\n");
process.exit(1);
`;

/** Writes kind and nerdctl stand-ins (and a containerd binary, which is not the daemon) into `dir`. */
export async function writeEngineStandIns(
  dir: string,
  options: { kindVersion?: string; nerdctlVersion?: string } = {},
): Promise<EngineStandIns> {
  await mkdir(dir, { recursive: true });
  const callsLog = join(dir, "calls.log");
  const containerdState = join(dir, "containerd.json");
  const jsYaml = createRequire(import.meta.url).resolve("js-yaml");
  const script = async (name: string, body: string) => {
    await writeFile(join(dir, name), `#!${process.execPath}\n${body}`);
    await chmod(join(dir, name), 0o755);
  };
  await script("kind", KIND_SCRIPT(jsYaml, join(dir, "kind-state.json"), callsLog, options.kindVersion ?? "v0.30.0"));
  await script("nerdctl", NERDCTL_SCRIPT(callsLog, containerdState, options.nerdctlVersion ?? "2.1.2"));
  // A containerd binary on PATH says nothing about the daemon: it answers --version either way.
  await writeFile(join(dir, "containerd"), "#!/bin/sh\necho containerd github.com/containerd/containerd/v2 v2.1.1\n");
  await chmod(join(dir, "containerd"), 0o755);
  const setContainerd: EngineStandIns["setContainerd"] = (state) => writeFile(containerdState, JSON.stringify(state));
  await setContainerd({ running: true, version: "v2.1.1" });
  return { dir, callsLog, setContainerd };
}
