# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE at the repository's root)
"""What the nodekit.nr modules share: running nr, reading its JSON, reporting its failures.

nr is run with --json-logs, so its stderr is one JSON object a line; a failure's record
(level "error") carries the error's code and exit code (docs/errors.md). Secrets reach nr
through its environment (NR_API_TOKEN, NR_PROXMOX_TOKEN_SECRET) or through files, never
through its argv, which Ansible echoes in the task's result (`cmd`).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.module_utils.basic import AnsibleModule

# The options every module takes, to find nr and the state it keeps.
COMMON_ARGUMENT_SPEC = dict(
    nr_path=dict(type="path", default="nr"),
    nr_home=dict(type="path"),
    api_url=dict(type="str"),
    api_token=dict(type="str", no_log=True),
)


def nr_module(options, **kwargs):
    """The task's AnsibleModule: the options every module takes and these; check mode supported.

    kwargs go on to AnsibleModule (mutually_exclusive, for one).
    """
    argument_spec = dict(COMMON_ARGUMENT_SPEC)
    argument_spec.update(options)
    return AnsibleModule(argument_spec=argument_spec, supports_check_mode=True, **kwargs)


def json_records(text):
    """The JSON objects of nr's --json-logs stderr, one a line (other lines are left out)."""
    records = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def nr_failure(stderr):
    """nr's error record from --json-logs stderr, or None."""
    for record in reversed(json_records(stderr)):
        if record.get("level") == "error":
            return record
    return None


def nr_environment(module):
    """The variables nr reads that the module's options set (secrets among them: never argv)."""
    env = {}
    params = module.params
    if params.get("nr_home"):
        env["NR_HOME"] = params["nr_home"]
    if params.get("api_url"):
        env["NR_API_URL"] = params["api_url"]
    if params.get("api_token"):
        env["NR_API_TOKEN"] = params["api_token"]
    return env


def run_nr(module, args, environ=None):
    """Runs nr with args and --json-logs; returns (rc, stdout, stderr, argv). argv holds no secret."""
    env = nr_environment(module)
    env.update(environ or {})
    nr = module.params["nr_path"]
    if "/" not in nr:
        found = module.get_bin_path(nr, required=False)
        if found is None:
            module.fail_json(
                msg="nr_path: no executable %s on PATH; install nr (the nodekit.nr.register role does) "
                "or give its path in nr_path" % nr,
                error_code="NR_NOT_FOUND",
            )
        nr = found
    argv = [nr] + list(args) + ["--json-logs"]
    rc, stdout, stderr = module.run_command(argv, environ_update=env, check_rc=False)
    return rc, stdout, stderr, argv


def fail_from_nr(module, what, result, **extra):
    """Fails the task with nr's error code, exit code, message, why and next (its stderr's error record).

    result is run_nr()'s (rc, stdout, stderr, argv).
    """
    rc, stdout, stderr, argv = result
    failure = nr_failure(stderr)
    if failure is None:
        # No error record: nr did not start (a broken install) or was killed.
        module.fail_json(
            msg="%s: nr exited with %s and no error record; its stderr is in stderr" % (what, rc),
            rc=rc,
            cmd=argv,
            error_code=None,
            stdout=stdout,
            stderr=stderr,
            **extra
        )
    code = failure.get("code")
    exit_code = failure.get("exitCode")
    message = failure.get("msg", "")
    module.fail_json(
        msg="%s: %s%s" % (what, message, "" if code is None else " (%s)" % code),
        rc=rc,
        cmd=argv,
        error_code=code,
        exit_code=exit_code if exit_code is not None else rc,
        nr_message=message,
        nr_why=failure.get("why"),
        nr_next=failure.get("next"),
        stdout=stdout,
        stderr=stderr,
        **extra
    )


def read_status(module):
    """`nr cluster status -o json`, parsed; fails the task when nr fails or prints no JSON."""
    result = run_nr(module, ["cluster", "status", "-o", "json"])
    rc, stdout, stderr = result[:3]
    if rc != 0:
        fail_from_nr(module, "nr cluster status", result)
    try:
        return json.loads(stdout)
    except ValueError:
        module.fail_json(msg="nr cluster status -o json printed no JSON", rc=rc, stdout=stdout, stderr=stderr)


def phase_runs(status):
    """{phase id: how many times it ran} from a status report."""
    return dict((phase.get("id"), phase.get("runs", 0)) for phase in status.get("phases") or [])


def phases_ran(before, after):
    """The phases that ran between two status reports (their run count went up), in order."""
    earlier = phase_runs(before)
    return [
        phase.get("id")
        for phase in after.get("phases") or []
        if phase.get("runs", 0) > earlier.get(phase.get("id"), 0)
    ]


def flag_args(params, value_flags=(), boolean_flags=()):
    """nr's flags for the options set: (option, flag) pairs, value options first, then booleans."""
    args = []
    for option, flag in value_flags:
        if params.get(option) not in (None, ""):
            args += [flag, str(params[option])]
    for option, flag in boolean_flags:
        if params.get(option):
            args.append(flag)
    return args


def run_plan(module, args, what, environ=None, **extra):
    """Runs a --dry-run -o json of nr (args hold both) and returns (plan document, argv).

    Fails the task with nr's error when nr fails, and when it prints no plan document.
    """
    result = run_nr(module, args, environ)
    rc, stdout = result[:2]
    if rc != 0:
        fail_from_nr(module, what, result, **extra)
    try:
        return json.loads(stdout), result[3]
    except ValueError:
        module.fail_json(msg="%s -o json printed no plan document" % what, stdout=stdout, **extra)
