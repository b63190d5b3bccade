import { describe, expect, test } from "vitest";
import { fleetFlow } from "./demo-steps.ts";

// The checks of ./run demo's Ansible steps, on ansible-playbook's output as it prints it.

/** A PLAY RECAP: one host a "changed/failed" pair, fleet-vm-1 first. */
const recap = (...hosts: string[]) =>
  [
    "PLAY RECAP *********************************************************************",
    ...hosts.map((pair, i) => {
      const [changed, failed] = pair.split("/");
      return `fleet-vm-${i + 1}                 : ok=3    changed=${changed}    unreachable=0    failed=${failed}    skipped=0    rescued=0    ignored=0   `;
    }),
    "",
  ].join("\n");

/** What the playbook's last task shows for each of the three VMs. */
const shown = (status: (i: number) => string) =>
  [1, 2, 3].map((i) => `ok: [fleet-vm-${i}] => {\n    "msg": "fleet-vm-${i}: ${status(i)}"\n}`).join("\n");

const checkOf = (title: string) => {
  const found = fleetFlow().find((step) => step.title === title)?.check;
  if (found === undefined) throw new Error(`no check on the step "${title}"`);
  return (...parts: string[]) => found({ stdout: parts.join("\n"), stderr: "" });
};

const NONE = shown(() => "none, agent none");
const SUCCEEDED = shown((i) => `succeeded, agent fleet-vm-${i}`);
const CHANGED = recap("1/0", "1/0", "1/0");

describe("./run demo's Ansible steps", () => {
  test("check mode passes when each VM would change and none is registered after", () => {
    const check = checkOf("Check mode over the fleet: every VM's plan, nothing changes");
    expect(check(NONE, CHANGED)).toBeUndefined();
    expect(check(SUCCEEDED, CHANGED)).toBe("a VM has a registration after check mode");
  });

  test("the registration passes when each VM changed, succeeded as its own agent, and no secret shows", () => {
    const check = checkOf("Register the three VMs, three at a time");
    expect(check(SUCCEEDED, CHANGED)).toBeUndefined();
    expect(check(SUCCEEDED, recap("1/0", "0/1", "1/0"))).toBe("fleet-vm-2: not changed=1 failed=0");
    expect(check(SUCCEEDED, recap("1/0", "1/0"))).toBe("the recap shows 2 of the fleet's 3 VMs");
    expect(check(SUCCEEDED, "sandbox-fleet-proxmox-not-a-secret", CHANGED)).toBe(
      "the Proxmox secret shows in the output",
    );
    expect(
      check(
        shown((i) => `failed, agent fleet-vm-${i}`),
        CHANGED,
      ),
    ).toBe("a VM's registration did not succeed");
  });

  test("the second run passes only when nothing changed on any VM", () => {
    const check = checkOf("Run it again: nothing changes");
    expect(check(recap("0/0", "0/0", "0/0"))).toBeUndefined();
    expect(check(recap("0/0", "0/0", "1/0"))).toBe("fleet-vm-3: not changed=0 failed=0");
  });
});
