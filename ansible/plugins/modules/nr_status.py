#!/usr/bin/python
# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE at the repository's root)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nr_status
short_description: Where this host's NodeRings registration stands, as facts
description:
  - Runs C(nr cluster status -o json) and returns its report, and sets it as the fact
    C(nr_status) (C(ansible_facts.nr_status)). It changes nothing and talks to no service.
  - With O(live), C(nr cluster status --live -o json) also checks the running machine,
    read-only; a failed check is reported in the result (C(live)) and does not fail the task
    unless O(fail_on_live) is set.
version_added: 0.1.0
author:
  - nodekit maintainers
extends_documentation_fragment:
  - nodekit.nr.nr
notes:
  - O(api_url) and O(api_token) are used by O(live) only.
options:
  live:
    description: Also check the running machine now (read-only).
    type: bool
    default: false
  fail_on_live:
    description: Fail the task when a live check fails.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    details: It changes nothing in either mode.
"""

EXAMPLES = r"""
- name: Read the registration's state
  nodekit.nr.nr_status:

- name: Hosts whose registration did not succeed
  ansible.builtin.debug:
    msg: "{{ inventory_hostname }}: {{ nr_status.status }}, next: {{ nr_status.next }}"
  when: nr_status.status != 'succeeded'
"""

RETURN = r"""
ansible_facts:
  description: C(nr_status), the report of C(nr cluster status -o json).
  returned: always
  type: dict
  contains:
    nr_status:
      description: The report (status, phases with their state and run count, agent, pins, lastError, next).
      type: dict
      sample: {status: succeeded, agent: {name: pve-node-1}, operatorInstalled: true}
registered:
  description: Whether the registration succeeded (C(status) is C(succeeded)).
  returned: always
  type: bool
"""

import json

from ansible_collections.nodekit.nr.plugins.module_utils.nr import (
    fail_from_nr,
    nr_module,
    read_status,
    run_nr,
)


def main():
    module = nr_module(
        dict(
            live=dict(type="bool", default=False),
            fail_on_live=dict(type="bool", default=False),
        )
    )
    if not module.params["live"]:
        status = read_status(module)
    else:
        result = run_nr(module, ["cluster", "status", "--live", "-o", "json"])
        rc, stdout = result[:2]
        try:
            status = json.loads(stdout)
        except ValueError:
            fail_from_nr(module, "nr cluster status --live", result)
        if rc != 0 and module.params["fail_on_live"]:
            fail_from_nr(module, "nr cluster status --live", result, ansible_facts=dict(nr_status=status))
    module.exit_json(
        changed=False,
        registered=status.get("status") == "succeeded",
        ansible_facts=dict(nr_status=status),
    )


if __name__ == "__main__":
    main()
