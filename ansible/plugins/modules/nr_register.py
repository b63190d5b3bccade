#!/usr/bin/python
# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE at the repository's root)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nr_register
short_description: Register this host as a NodeRings agent with nr cluster register
description:
  - Runs C(nr cluster register --resume) with the options given. On a host with no
    registration every phase runs; on a registered one each phase is re-checked and kept, so
    a second run changes nothing. A run that failed continues from the phase that failed.
  - In check mode it runs C(nr cluster register --resume --dry-run -o json) instead, which
    changes nothing and takes no lock, and reports C(changed) when a phase would run.
  - C(changed) is true exactly when a phase ran (its run count in C(nr cluster status -o json)
    went up).
  - On a failure the task fails with nr's error code (C(error_code)), exit code (C(exit_code))
    and message; C(nr cluster status) on the host says which phase stopped and how to continue.
  - Secrets never reach nr's command line, which Ansible shows in the task's result. The API
    token is O(api_token) (C(no_log), handed to nr in its environment) or O(api_token_file) (a
    file on the host, mode 0600); the Proxmox credentials are O(proxmox_credentials) (a file
    on the host) or O(proxmox_token_secret) (C(no_log)).
version_added: 0.1.0
author:
  - nodekit maintainers
extends_documentation_fragment:
  - nodekit.nr.nr
options:
  name:
    description: The agent's name in NodeRings (created, or reused when it exists).
    type: str
  agent_id:
    description: Reuse this existing agent (its id in NodeRings) instead of O(name).
    type: str
  api_token_file:
    description: A file on the host holding the API token (mode 0600; its first line).
    type: path
  kubeconfig:
    description: The agent cluster's kubeconfig (default where k3s writes it).
    type: path
  pod_cidr:
    description: The cluster's pod CIDR (default 10.42.0.0/16).
    type: str
  service_cidr:
    description: The cluster's service CIDR (default 10.43.0.0/16).
    type: str
  api_server_url:
    description: Where NodeRings reaches this cluster's API server, for Liqo.
    type: str
  offload_namespaces:
    description: Namespaces to offload besides the VNC gateway's.
    type: list
    elements: str
    default: []
  skip_prechecks:
    description: Skip the prechecks phase.
    type: bool
    default: false
  ignore_prechecks:
    description: Prechecks whose failure is let pass, reported and recorded.
    type: list
    elements: str
    default: []
  offline:
    description: Do not ask the API for the pinned versions (not platform-validated).
    type: bool
    default: false
  skip_operator_install:
    description: Skip the operator phase (VMs cannot be sold until it runs).
    type: bool
    default: false
  proxmox_credentials:
    description: A file on the host with the Proxmox credentials (url, tokenId, tokenSecret; YAML).
    type: path
  proxmox_url:
    description: The Proxmox VE API URL (with O(proxmox_token_id) and O(proxmox_token_secret)).
    type: str
  proxmox_token_id:
    description: The Proxmox API token id, user@realm!name.
    type: str
  proxmox_token_secret:
    description: The Proxmox API token secret. Handed to nr as C(NR_PROXMOX_TOKEN_SECRET).
    type: str
  operator_chart:
    description: Install the operator from this chart (a local path or a mirror's reference).
    type: str
  calico_manifests:
    description: Where the tigera operator manifests are (a URL or a directory).
    type: str
  timeout:
    description: How long each wait may take (C(10m), C(90s)).
    type: str
  break_lock:
    description: Clear a lock a run that is no longer running left (never a live run's).
    type: bool
    default: false
  host_root:
    description:
      - Read the host's facts for the prechecks under this directory instead of C(/) (nr's
        C(--host-root), for tests and the sandbox).
    type: path
  poll_interval:
    description: How often waits poll (nr's C(--poll-interval), for tests and the sandbox).
    type: str
attributes:
  check_mode:
    support: full
    details: Runs C(nr cluster register --dry-run), which changes nothing and takes no lock.
notes:
  - Give O(name) or O(agent_id) on the first run; later runs may leave both out.
"""

EXAMPLES = r"""
- name: Register the VM
  nodekit.nr.nr_register:
    name: "{{ inventory_hostname }}"
    api_url: https://api.noderings.io
    api_token_file: /etc/nodekit/api-token
    proxmox_credentials: /etc/nodekit/pve.yaml

- name: Register, the token from a vault variable (no_log)
  nodekit.nr.nr_register:
    name: "{{ inventory_hostname }}"
    api_url: https://api.noderings.io
    api_token: "{{ vault_noderings_token }}"
    skip_operator_install: true
"""

RETURN = r"""
phases_ran:
  description: The phases that ran (in check mode, that would run), in order.
  returned: always
  type: list
  elements: str
  sample: [agent, prechecks, k3s]
agent:
  description: The agent, from C(nr cluster status -o json) after the run.
  returned: when not in check mode and nr registered
  type: dict
  sample: {name: pve-node-1, id: 0b7c1f8e-4b1a-4f8e-9a57-1d2c3e4f5a6b}
status:
  description: C(nr cluster status -o json) after the run (not in check mode).
  returned: when not in check mode
  type: dict
plan:
  description: The plan document C(nr cluster register --dry-run -o json) printed.
  returned: in check mode
  type: dict
error_code:
  description: nr's error code (docs/errors.md), e.g. C(API_UNAUTHORIZED).
  returned: failed
  type: str
exit_code:
  description: nr's exit code for that error (docs/exit-codes.md).
  returned: failed
  type: int
nr_message:
  description: nr's error message.
  returned: failed
  type: str
nr_why:
  description: Why it failed, as nr says.
  returned: failed, when nr says
  type: str
nr_next:
  description: What to do next, as nr says.
  returned: failed, when nr says
  type: list
  elements: str
"""

from ansible_collections.nodekit.nr.plugins.module_utils.nr import (
    fail_from_nr,
    flag_args,
    nr_module,
    phases_ran,
    read_status,
    run_nr,
    run_plan,
)

# option -> nr flag, for options with a value
VALUE_FLAGS = [
    ("name", "--name"),
    ("agent_id", "--agent-id"),
    ("api_token_file", "--api-token-file"),
    ("kubeconfig", "--kubeconfig"),
    ("pod_cidr", "--pod-cidr"),
    ("service_cidr", "--service-cidr"),
    ("api_server_url", "--api-server-url"),
    ("proxmox_credentials", "--proxmox-credentials"),
    ("proxmox_url", "--proxmox-url"),
    ("proxmox_token_id", "--proxmox-token-id"),
    ("operator_chart", "--operator-chart"),
    ("calico_manifests", "--calico-manifests"),
    ("timeout", "--timeout"),
    ("host_root", "--host-root"),
    ("poll_interval", "--poll-interval"),
]
BOOLEAN_FLAGS = [
    ("skip_prechecks", "--skip-prechecks"),
    ("offline", "--offline"),
    ("skip_operator_install", "--skip-operator-install"),
]


def register_args(params, check_mode):
    """nr cluster register's argv for these options (no secret among them)."""
    # --resume: with no state it starts at the first phase; with one it re-checks the phases
    # done and continues from the one that failed (a dry run plans exactly that).
    args = ["cluster", "register", "--resume"]
    if check_mode:
        args += ["--dry-run", "-o", "json"]
    args += flag_args(params, VALUE_FLAGS, BOOLEAN_FLAGS)
    for namespace in params.get("offload_namespaces") or []:
        args += ["--offload-namespace", namespace]
    for check in params.get("ignore_prechecks") or []:
        args += ["--ignore-precheck", check]
    if params.get("break_lock") and not check_mode:
        args.append("--break-lock")
    return args


def planned_phases(plan):
    """The phases a dry run's plan document says would run."""
    phases = (plan.get("observations") or {}).get("phases") or []
    return [phase.get("id") for phase in phases if phase.get("decision") == "run"]


def main():
    module = nr_module(
        dict(
            name=dict(type="str"),
            api_token_file=dict(type="path"),
            agent_id=dict(type="str"),
            kubeconfig=dict(type="path"),
            pod_cidr=dict(type="str"),
            service_cidr=dict(type="str"),
            api_server_url=dict(type="str"),
            offload_namespaces=dict(type="list", elements="str", default=[]),
            skip_prechecks=dict(type="bool", default=False),
            ignore_prechecks=dict(type="list", elements="str", default=[]),
            offline=dict(type="bool", default=False),
            skip_operator_install=dict(type="bool", default=False),
            proxmox_credentials=dict(type="path"),
            proxmox_url=dict(type="str"),
            proxmox_token_id=dict(type="str"),
            proxmox_token_secret=dict(type="str", no_log=True),
            operator_chart=dict(type="str"),
            calico_manifests=dict(type="str"),
            timeout=dict(type="str"),
            break_lock=dict(type="bool", default=False),
            host_root=dict(type="path"),
            poll_interval=dict(type="str"),
        ),
        mutually_exclusive=[
            ("name", "agent_id"),
            ("api_token", "api_token_file"),
            ("proxmox_credentials", "proxmox_token_secret"),
        ],
    )
    params = module.params
    environ = {}
    if params.get("proxmox_token_secret"):
        environ["NR_PROXMOX_TOKEN_SECRET"] = params["proxmox_token_secret"]
    args = register_args(params, module.check_mode)

    if module.check_mode:
        plan, argv = run_plan(module, args, "nr cluster register --dry-run", environ, phases_ran=[])
        would_run = planned_phases(plan)
        module.exit_json(changed=len(would_run) > 0, phases_ran=would_run, plan=plan, cmd=argv)

    before = read_status(module)
    result = run_nr(module, args, environ)
    rc, stdout, stderr, argv = result
    after = read_status(module)
    ran = phases_ran(before, after)
    if rc != 0:
        # A failed run may still have run phases before the one that failed.
        fail_from_nr(module, "nr cluster register", result, changed=len(ran) > 0, phases_ran=ran, status=after)
    module.exit_json(
        changed=len(ran) > 0,
        phases_ran=ran,
        agent=after.get("agent"),
        status=after,
        cmd=argv,
        stdout=stdout,
    )


if __name__ == "__main__":
    main()
