#!/usr/bin/python
# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE at the repository's root)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nr_reset
short_description: Undo this host's NodeRings registration with nr cluster reset
description:
  - Runs C(nr cluster reset), which undoes what the registration recorded it created, in
    reverse (unoffload, unpeer, uninstall Liqo, the operator, Calico and k3s, deregister the
    agent) and archives the registration's state. A reset that failed continues where it
    stopped when run again.
  - On a host with no registration (C(nr cluster status) reports none) it does nothing and
    reports C(changed=false).
  - In check mode it runs C(nr cluster reset --dry-run -o json), which changes nothing.
  - On a failure the task fails with nr's error code (C(error_code)), exit code and message.
version_added: 0.1.0
author:
  - nodekit maintainers
extends_documentation_fragment:
  - nodekit.nr.nr
notes:
  - Without O(api_url), nr uses the NodeRings API URL the registration used.
options:
  force:
    description: Go on when NodeRings cannot be reached (this machine's side only; the agent stays in NodeRings).
    type: bool
    default: false
  calico_manifests:
    description: Where the tigera operator manifests are (default where the registration took them from).
    type: str
  timeout:
    description: How long each wait may take (C(10m)).
    type: str
attributes:
  check_mode:
    support: full
    details: Runs C(nr cluster reset --dry-run), which changes nothing.
"""

EXAMPLES = r"""
- name: Deregister the VM
  nodekit.nr.nr_reset:
    api_token: "{{ vault_noderings_token }}"
"""

RETURN = r"""
plan:
  description: The plan document C(nr cluster reset --dry-run -o json) printed.
  returned: in check mode, on a registered host
  type: dict
stdout:
  description: What nr cluster reset printed.
  returned: when it ran
  type: str
error_code:
  description: nr's error code (docs/errors.md).
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
"""

from ansible_collections.nodekit.nr.plugins.module_utils.nr import (
    fail_from_nr,
    flag_args,
    nr_module,
    read_status,
    run_nr,
    run_plan,
)


def main():
    module = nr_module(
        dict(
            force=dict(type="bool", default=False),
            calico_manifests=dict(type="str"),
            timeout=dict(type="str"),
        )
    )
    if read_status(module).get("status") == "none":
        module.exit_json(changed=False, msg="no registration on this host")
    args = ["cluster", "reset"] + flag_args(
        module.params,
        (("calico_manifests", "--calico-manifests"), ("timeout", "--timeout")),
        (("force", "--force"),),
    )
    if module.check_mode:
        plan, argv = run_plan(module, args + ["--dry-run", "-o", "json"], "nr cluster reset --dry-run")
        module.exit_json(changed=True, plan=plan, cmd=argv)
    result = run_nr(module, args)
    rc, stdout = result[:2]
    if rc != 0:
        fail_from_nr(module, "nr cluster reset", result)
    module.exit_json(changed=True, stdout=stdout, cmd=result[3])


if __name__ == "__main__":
    main()
