# SPDX-License-Identifier: Apache-2.0
"""Work outside any request (docs/metrics.md): a credentials fetch through
credential_process counts in tabletheoryd_background_operations while it
runs and the gauge returns to 0 when it ends; shutdown joins a fetch that
is still running. Uses the dynamodb backend against an endpoint that
refuses connections: the fetch happens before any call to it."""
import os
import stat
import tempfile
import threading

SCRIPT = """#!/bin/sh
# Waits (at most 30 s) until the test creates the flag file.
i=0
while [ ! -e "$1" ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done
echo '{"Version": 1, "AccessKeyId": "AKIDBG", "SecretAccessKey": "SECRETBG"}'
"""


def setup_profile(tmp):
    script = os.path.join(tmp, "cp.sh")
    with open(script, "w") as f:
        f.write(SCRIPT)
    os.chmod(script, stat.S_IRWXU)
    flag = os.path.join(tmp, "go")
    config = os.path.join(tmp, "config")
    with open(config, "w") as f:
        f.write("[profile bg]\ncredential_process = %s %s\n" % (script, flag))
    env = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
           "AWS_CONFIG_FILE": config, "AWS_PROFILE": "bg", "HOME": tmp,
           "AWS_SHARED_CREDENTIALS_FILE": os.path.join(tmp, "none"),
           "AWS_EC2_METADATA_DISABLED": "true", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
           "AWS_ROLE_ARN": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
           "AWS_CONTAINER_CREDENTIALS_FULL_URI": ""}
    return flag, env


def test_credential_process_counts_until_it_ends(fresh_daemon):
    with tempfile.TemporaryDirectory() as tmp:
        flag, env = setup_profile(tmp)
        d = fresh_daemon("--backend", "dynamodb", "--endpoint", "http://127.0.0.1:9",
                         "--region", "us-east-1", "--request-timeout-ms", "20000", env=env)
        assert d.metric("tabletheoryd_background_operations") == 0
        answers = []
        t = threading.Thread(target=lambda: answers.append(d.request("GET", "/v1/jobs/j1")))
        t.start()
        try:
            d.wait_metric("tabletheoryd_background_operations", 1, timeout=20)
            assert answers == []  # the request waits for the credentials
        finally:
            open(flag, "w").close()
            t.join(30)
        assert len(answers) == 1
        # The endpoint refuses connections: the request fails after signing.
        assert answers[0][0] in (503, 504), answers
        d.wait_metric("tabletheoryd_background_operations", 0, timeout=20)
        assert "resolved from process" in d.log_text()
        assert "SECRETBG" not in d.log_text()


def test_shutdown_joins_a_running_fetch(fresh_daemon):
    with tempfile.TemporaryDirectory() as tmp:
        _, env = setup_profile(tmp)  # the flag never appears
        # A short drain: the request waiting for the fetch is canceled at
        # once, and the stop then has the fetch itself to end.
        d = fresh_daemon("--backend", "dynamodb", "--endpoint", "http://127.0.0.1:9",
                         "--region", "us-east-1", "--request-timeout-ms", "20000",
                         "--drain-timeout-ms", "100", env=env)
        def waiting_request():
            try:
                d.request("GET", "/v1/jobs/j1")
            except OSError:
                pass  # the daemon stops under it

        t = threading.Thread(target=waiting_request, daemon=True)
        t.start()
        d.wait_metric("tabletheoryd_background_operations", 1, timeout=20)
        # The script would wait 30 s: stop() (15 s budget, exit status 0 and
        # a closed loop asserted) passes only if the fetch is killed and joined.
        d.stop()
