# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE at the repository's root)
"""The documentation the nodekit.nr modules share (`extends_documentation_fragment: nodekit.nr.nr`).

The options are module_utils/nr.py's COMMON_ARGUMENT_SPEC; the return values, fail_from_nr()'s.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The options every module takes, to find nr and the state it keeps (COMMON_ARGUMENT_SPEC).
    DOCUMENTATION = r"""
options:
  nr_path:
    description: The nr executable (a path, or a name looked up on PATH).
    type: path
    default: nr
  nr_home:
    description: nr's state directory (C(NR_HOME)); default C(~/.nr) of the user the task runs as.
    type: path
  api_url:
    description: The NodeRings API URL (default C(NR_API_URL), then C(apiUrl) in C(~/.nr/config.yaml)).
    type: str
  api_token:
    description: The NodeRings API token. Handed to nr as C(NR_API_TOKEN), never on its command line.
    type: str
"""
