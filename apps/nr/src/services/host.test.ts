import { createHash } from "node:crypto";
import { join } from "node:path";
import { testdir } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { hostRoot } from "../../test/helpers.ts";
import { assessHost, createHostFactsSource, type HostFacts, hostProblems, machineIdentity } from "./host.ts";

const GiB = 1024 ** 3;
const good: HostFacts = {
  os: { id: "ubuntu", versionId: "24.04", prettyName: "Ubuntu 24.04.3 LTS" },
  kernel: "6.8.0-85-generic",
  arch: "amd64",
  hostname: "pve-node-1",
  uid: 0,
  memoryBytes: 8 * GiB,
  disk: { path: "/var/lib", freeBytes: 50 * GiB },
  listening: [],
  network: { interface: "eth0", address: "10.20.0.11", subnet: "10.20.0.0/24" },
  init: "systemd",
  machineId: null,
};

describe("prechecks", () => {
  it("passes a machine that has everything", () => {
    expect(hostProblems(assessHost(good))).toEqual([]);
  });

  it("reports every failure at once, each with what was found, what is required and how to fix it", () => {
    const bad: HostFacts = {
      ...good,
      os: { id: "alpine", versionId: "3.20", prettyName: "Alpine Linux v3.20" },
      kernel: "5.4.0-150-generic",
      arch: "s390x",
      uid: 1000,
      memoryBytes: 1 * GiB,
      disk: { path: "/var/lib", freeBytes: 2 * GiB },
      listening: [{ port: 6443, protocol: "tcp", process: "nginx (pid 812)" }],
    };
    const problems = hostProblems(
      assessHost(bad, undefined, {
        network: { plan: { podCidr: "10.100.0.0/16", serviceCidr: "10.43.0.0/16" }, reserved: ["10.100.0.0/16"] },
      }),
    );
    expect(problems.map((p) => p.path?.[0])).toEqual([
      "os",
      "kernel",
      "arch",
      "user",
      "memory",
      "disk",
      "port-6443-tcp",
      "pod-cidr",
    ]);
    const kernel = problems.find((p) => p.path?.[0] === "kernel");
    expect(kernel?.message).toBe(
      "found kernel 5.4.0-150-generic; requires kernel 5.10 or newer (Liqo's WireGuard gateway); fix: upgrade the kernel (e.g. the distribution's hardware-enablement kernel) and reboot",
    );
    expect(problems.find((p) => p.path?.[0] === "port-6443-tcp")?.message).toContain("in use by nginx (pid 812)");
    expect(problems.find((p) => p.path?.[0] === "pod-cidr")?.message).toContain("overlaps 10.100.0.0/16");
  });

  it("systemd must be PID 1: the k3s installer sets k3s up as a systemd service (issue 23, item 8)", () => {
    for (const init of ["init", "bash", null]) {
      const problems = hostProblems(assessHost({ ...good, init }));
      expect(problems.map((p) => p.path?.[0])).toEqual(["init"]);
      expect(problems[0]?.message).toContain(init === null ? "found no /proc/1/comm" : `found PID 1 is ${init}`);
      expect(problems[0]?.message).toContain("requires systemd as PID 1");
    }
  });

  it("a kubectl on PATH older than 1.31 (no `kubectl wait --for=create`) fails; none, or a newer one, passes", () => {
    const verdictFor = (kubectl: string | null) =>
      hostProblems(assessHost(good, undefined, { kubectl })).map((p) => [p.path?.[0], p.message]);
    expect(verdictFor("v1.28.2")).toEqual([
      [
        "kubectl",
        "found kubectl v1.28.2 on PATH; requires no kubectl on PATH, or kubectl 1.31 or newer (nr waits with kubectl wait --for=create); fix: remove the older kubectl from PATH (k3s then links its own, as new as k3s), or put a newer one first on PATH",
      ],
    ]);
    expect(verdictFor("of unknown version")).toHaveLength(1);
    expect(verdictFor("v1.31.0")).toEqual([]);
    expect(verdictFor("v1.33.5+k3s1")).toEqual([]);
    expect(verdictFor(null)).toEqual([]);
  });

  it("Calico's ports (BGP 179, Typha 5473, Felix's health 9099) and the Liqo gateway's port, when given, must be free", () => {
    const facts: HostFacts = {
      ...good,
      listening: [
        { port: 179, protocol: "tcp", process: "bird (pid 4)" },
        { port: 5473, protocol: "tcp", process: "haproxy (pid 7)" },
        { port: 9099, protocol: "tcp", process: null },
        { port: 51840, protocol: "udp", process: "wg-quick (pid 9)" },
      ],
    };
    const gateway = { port: 51840, protocol: "udp" as const, for: "Liqo's WireGuard gateway server" };
    const problems = hostProblems(assessHost(facts, undefined, { ports: [gateway] }));
    // bird is Calico's own BGP daemon: a resumed run's.
    expect(problems.map((p) => p.path?.[0])).toEqual(["port-5473-tcp", "port-9099-tcp", "port-51840-udp"]);
    expect(problems.at(-1)?.message).toContain("51840/udp free for Liqo's WireGuard gateway server");
    expect(hostProblems(assessHost(facts)).map((p) => p.path?.[0])).toEqual(["port-5473-tcp", "port-9099-tcp"]);
  });

  it("a port held by what registration itself installed (a resumed run) is not in the way", () => {
    const facts = { ...good, listening: [{ port: 6443, protocol: "tcp" as const, process: "k3s-server (pid 4242)" }] };
    expect(hostProblems(assessHost(facts))).toEqual([]);
  });

  it("reads the facts from a directory laid out like a machine (/etc/os-release, /proc)", async () => {
    const dir = await testdir({});
    // 0A is LISTEN; 1A0B is port 6667; 2742 is 10050 — neither is checked, 192B (6443) is.
    const tcp = [
      "   0: 00000000:192B 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1",
      "   1: 00000000:1A0B 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12346 1",
      "   2: 0100007F:2742 0100007F:192B 01 00000000:00000000 00:00000000 00000000     0        0 12347 1",
    ].join("\n");
    const root = await hostRoot(dir.root, { kernel: "5.15.0-1-amd64", tcp: `${tcp}\n`, memKb: 4 * 1024 * 1024 });
    const facts = await createHostFactsSource({ root }).facts();
    expect(facts).toMatchObject({
      os: { id: "ubuntu", prettyName: "Ubuntu 24.04.3 LTS" },
      kernel: "5.15.0-1-amd64",
      arch: "amd64",
      hostname: "pve-node-1",
      memoryBytes: 4 * GiB,
      listening: [{ port: 6443, protocol: "tcp", process: null }],
      init: "systemd",
    });
    expect(facts.disk.freeBytes).toBeGreaterThan(0);
  });
});

describe("what else the prechecks read", () => {
  it("PID 1 from /proc/1/comm, and a port asked for besides the fixed ones (UDP too)", async () => {
    const dir = await testdir({});
    // CA80 is port 51840; 07 is UDP's "bound" state.
    const udp = "  10: 00000000:CA80 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 22222 2\n";
    const root = await hostRoot(dir.root, { init: "runit", udp });
    const source = createHostFactsSource({ root });
    expect((await source.facts()).init).toBe("runit");
    expect((await source.facts()).listening).toEqual([]);
    const asked = await source.facts({ ports: [{ port: 51840, protocol: "udp", for: "Liqo" }] });
    expect(asked.listening).toEqual([{ port: 51840, protocol: "udp", process: null }]);
  });
});

describe("this machine's identity for NodeRings", () => {
  it("is a keyed hash of /etc/machine-id, never the id itself; none without a valid one", async () => {
    const id = "0123456789abcdef0123456789abcdef";
    const identity = machineIdentity(`${id}\n`);
    expect(identity).toMatch(/^[0-9a-f]{64}$/);
    expect(identity).not.toContain(id);
    expect(machineIdentity(id.toUpperCase())).toBe(identity);
    expect(identity).not.toBe(createHash("sha256").update(id).digest("hex"));
    for (const bad of ["", "uninitialized\n", "0123"]) expect(machineIdentity(bad)).toBeNull();
    const dir = await testdir({});
    const facts = await createHostFactsSource({ root: await hostRoot(dir.root, { machineId: id }) }).facts();
    expect(facts.machineId).toBe(identity);
    const none = await createHostFactsSource({
      root: await hostRoot(join(dir.root, "b"), { machineId: null }),
    }).facts();
    expect(none.machineId).toBeNull();
  });
});

describe("where the machine is on its network (k3s's node IP, Liqo's node subnet)", () => {
  it("reads the default route's interface, its address and subnet from /proc/net/route and fib_trie", async () => {
    const dir = await testdir({});
    const facts = await createHostFactsSource({ root: await hostRoot(dir.root, { address: "192.168.7.42" }) }).facts();
    expect(facts.network).toEqual({ interface: "eth0", address: "192.168.7.42", subnet: "192.168.7.0/24" });
    const none = await createHostFactsSource({ root: await hostRoot(join(dir.root, "b"), { address: null }) }).facts();
    expect(none.network).toBeNull();
  });
});
