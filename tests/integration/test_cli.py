# SPDX-License-Identifier: Apache-2.0
"""The command line: --help, --version, --check-config, precedence and bad
settings that exit 2 naming the setting."""
import json
import subprocess

from daemon import DAEMON


def run(*args, env=None):
    e = {"PATH": "/usr/bin:/bin"}
    e.update(env or {})
    return subprocess.run([DAEMON, *args], capture_output=True, text=True, env=e, timeout=10)


def test_help_and_version():
    r = run("--help")
    assert r.returncode == 0
    for flag in ["--listen", "--models", "--backend", "--endpoint", "--region", "--jobs-table",
                 "--auth-token-file", "--allow-table-delete", "--enable-fault-injection",
                 "--request-timeout-ms", "--max-body-bytes", "--log-level", "--config",
                 "--check-config", "--version", "--help"]:
        assert flag in r.stdout, flag
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("tabletheoryd ")


def test_bad_settings_exit_2_naming_the_setting(tmp_path):
    cases = [
        (["--backend", "oracle"], {}, "--backend"),
        (["--request-timeout-ms", "0"], {}, "--request-timeout-ms"),
        (["--listen", "nowhere"], {}, "listen"),
        (["--frobnicate"], {}, "--frobnicate"),
        ([], {"TABLETHEORYD_LOG_LEVEL": "loud"}, "TABLETHEORYD_LOG_LEVEL"),
        (["--models", str(tmp_path / "missing.yml")], {}, "models"),
        (["--auth-token-file", str(tmp_path / "none")], {}, "auth-token-file"),
        (["--ca-file", str(tmp_path / "none.pem")], {}, "ca-file"),
        ([], {"TABLETHEORYD_CA_FILE": str(tmp_path / "none.pem")}, "ca-file"),
    ]
    for args, env, name in cases:
        r = run(*args, "--check-config", env=env)
        assert r.returncode == 2, (args, r.stderr)
        assert name in r.stderr, (args, r.stderr)


def test_config_file_errors(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"max-body-bytes": "many"}))
    r = run("--config", str(p), "--check-config")
    assert r.returncode == 2 and "max-body-bytes" in r.stderr


def test_check_config_ok_and_precedence(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"listen": "bad-from-file"}))
    # The file's bad value is overridden by the environment, so it passes.
    r = run("--config", str(p), "--check-config",
            env={"TABLETHEORYD_LISTEN": "127.0.0.1:9"})
    assert r.returncode == 0, r.stderr
    assert "configuration OK" in r.stdout
    # And a flag overrides a bad environment value.
    r = run("--check-config", "--listen", "127.0.0.1:9", env={"TABLETHEORYD_LISTEN": "bad"})
    assert r.returncode == 0, r.stderr


def test_ca_file_checked_at_start(tmp_path):
    """--ca-file must name a readable file of PEM certificates: anything else
    stops the start (exit 2) before any I/O, naming the setting and why."""
    bad = tmp_path / "bad.pem"
    bad.write_text("not a certificate\n")
    r = run("--ca-file", str(bad), "--check-config")
    assert r.returncode == 2
    assert "ca-file: %s: holds no PEM certificate" % bad in r.stderr, r.stderr
    r = run("--ca-file", str(tmp_path / "missing.pem"), "--check-config")
    assert r.returncode == 2
    assert "No such file or directory" in r.stderr, r.stderr
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=Test CA", "-days", "1",
                    "-keyout", str(tmp_path / "ca.key"), "-out", str(tmp_path / "ca.pem")],
                   check=True, capture_output=True)
    conf = tmp_path / "c.json"
    conf.write_text(json.dumps({"ca-file": str(tmp_path / "ca.pem")}))
    r = run("--config", str(conf), "--check-config")
    assert r.returncode == 0, r.stderr


def test_port_in_use_exits_2():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port = s.getsockname()[1]
    r = run("--listen", "127.0.0.1:%d" % port)
    s.close()
    assert r.returncode == 2
    assert "listen" in r.stderr


def test_print_models_is_the_canonical_form_without_the_ledger(tmp_path):
    import os
    models = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "models")
    r = run("--models", models, "--print-models")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    names = [m["name"] for m in doc["models"]]
    assert sorted(names) == ["Order", "User"], names  # the job ledger's models left out
    user = next(m for m in doc["models"] if m["name"] == "User")
    assert user["keys"] == {"partition": {"attribute": "PK", "type": "S"},
                            "sort": {"attribute": "SK", "type": "S"}}
    assert [a["attribute"] for a in user["attributes"]] == sorted(
        a["attribute"] for a in user["attributes"])
    # The same bytes every time: generators depend on it.
    assert run("--models", models, "--print-models").stdout == r.stdout
    # A model that does not load: exit 2 with the message, nothing on stdout.
    bad = tmp_path / "bad.yml"
    bad.write_text("dms_version: \"0.2\"\nmodels:\n  - name: X\n")
    r = run("--models", str(bad), "--print-models")
    assert r.returncode == 2 and r.stdout == "" and "bad.yml" in r.stderr
