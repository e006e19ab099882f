# SPDX-License-Identifier: Apache-2.0
"""Self-test of the conformance runner (run.py) against fake_daemon.py: scenario loading,
step translation, expectation checks, error mapping, skipping, reporting, the daemon
process handling. Run: python3 -m pytest -q tests/conformance/test_runner_selftest.py"""
import io
import json
import os
import stat
import sys
import textwrap

import re

import pytest

sys.dont_write_bytecode = True  # keep the source tree clean (and it may be read-only)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fake_daemon  # noqa: E402
import run  # noqa: E402

MODELS = (os.path.join(os.environ["TT_TEST_DATA"], "dms", "v0.2", "models")
          if os.environ.get("TT_TEST_DATA") else run.default_models_dir())


@pytest.fixture
def fake_exe(tmp_path):
    """fake_daemon.py as an executable (a dist tree may not keep the exec bit)."""
    exe = tmp_path / "fake-tabletheoryd"
    exe.write_text("#!/bin/sh\nexec %s %s \"$@\"\n"
                   % (sys.executable, os.path.join(HERE, "fake_daemon.py")))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


@pytest.fixture
def fake():
    with fake_daemon.FakeDaemon(MODELS) as f:
        yield f


def write_scenarios(tmp_path, **files):
    d = tmp_path / "scenarios"
    d.mkdir(exist_ok=True)
    for name, text in files.items():
        (d / (name + ".yml")).write_text(textwrap.dedent(text))
    return str(d)


def run_main(args):
    if args and "--models" not in args:
        args = args + ["--models", MODELS]
    out = io.StringIO()
    rc = run.main(args, out=out)
    return rc, out.getvalue().splitlines()


HEADER = """\
dms_version: "0.2"
model: "User"
table:
  name: "users_contract"
"""

CREATE_USER = """\
  - op: create
    item: { PK: "USER#1", SK: "PROFILE", nickname: "Al", tags: ["a", "b"] }
    expect: { ok: true }
"""


# ---- whole runs -----------------------------------------------------------------------------

def test_vendored_scenarios_pass_against_the_fake(fake):
    sdir = run.default_scenarios_dir()
    assert os.path.isdir(sdir), sdir
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert [ln for ln in lines if ln.startswith("FAIL")] == []
    assert rc == 0
    # How many skip depends on the capabilities this build advertises.
    passed, failed, skipped = (int(w) for w in re.findall(r"\d+", lines[-1]))
    assert failed == 0 and passed + skipped == 35 and passed >= 19, lines[-1]
    assert "PASS p0.encryption.fail_closed" in lines
    assert "SKIP p0.encryption.deterministic_envelope: requires capabilities not advertised: " \
           "encryption.deterministic_interop" in lines


def test_pass_fail_skip_lines_summary_and_exit_status(tmp_path, fake):
    sdir = write_scenarios(
        tmp_path,
        a_pass=HEADER + 'name: "t.pass"\nsteps:\n' + CREATE_USER + """\
  - op: get
    key: { PK: "USER#1", SK: "PROFILE" }
    expect:
      item_contains: { nickname: "Al", tags: ["b", "a"] }
      item_has_fields: ["createdAt", "updatedAt", "version"]
      raw_attribute_types: { tags: "SS", version: "N" }
""",
        b_fail=HEADER + 'name: "t.fail"\nsteps:\n' + CREATE_USER + """\
  - op: get
    key: { PK: "USER#1", SK: "PROFILE" }
    expect:
      item_contains: { nickname: "Bob" }
""",
        c_skip=HEADER + 'name: "t.skip"\nrequires_capabilities: ["encryption.deterministic_interop"]\n'
        'steps:\n' + CREATE_USER)
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert rc == 1
    assert lines == [
        "PASS t.pass",
        'FAIL t.fail: step 2 (get) item_contains: nickname: expected "Bob", got "Al"',
        "SKIP t.skip: requires capabilities not advertised: encryption.deterministic_interop",
        "1 passed, 1 failed, 1 skipped",
    ]


def test_k_selects_by_name_and_all_pass_exits_zero(tmp_path, fake):
    sdir = write_scenarios(
        tmp_path,
        one=HEADER + 'name: "t.one"\nsteps:\n' + CREATE_USER,
        two=HEADER + 'name: "t.two"\nsteps:\n  - op: nosuchop\n')
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir, "-k", "one"])
    assert (rc, lines) == (0, ["PASS t.one", "1 passed, 0 failed, 0 skipped"])


def test_tables_are_recreated_before_each_scenario(tmp_path, fake):
    # The same create-only write in two scenarios passes only if the table was reset.
    body = 'steps:\n' + CREATE_USER.replace("ok: true", 'ok: true')
    sdir = write_scenarios(tmp_path, a=HEADER + 'name: "t.a"\n' + body,
                           b=HEADER + 'name: "t.b"\n' + body)
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert rc == 0, lines
    resets = [(m, p) for m, p, _ in fake.state.requests if p.endswith("/table")]
    assert resets == [("DELETE", "/v1/models/User/table"), ("PUT", "/v1/models/User/table")] * 2


@pytest.mark.parametrize("status,code,reason", [
    (403, "Forbidden", "table reset refused (start the daemon with --allow-table-delete)"),
    (500, "Internal", "DELETE table of User: 500 Internal (ErrInternal): boom"),
])
def test_table_reset_failures_fail_the_scenario(tmp_path, fake, status, code, reason):
    def tamper(method, path, st, body):
        if method == "DELETE" and path.endswith("/table"):
            return status, {"error": {"code": code, "message": "boom", "retryable": False,
                                      "details": {}}, "request_id": "x"}
        return st, body
    fake.state.tamper = tamper
    sdir = write_scenarios(tmp_path, a=HEADER + 'name: "t.r"\nsteps:\n' + CREATE_USER)
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert (rc, lines) == (1, ["FAIL t.r: " + reason, "0 passed, 1 failed, 0 skipped"])


def test_untranslatable_things_skip_with_reasons(tmp_path, fake):
    sdir = write_scenarios(
        tmp_path,
        a=HEADER + 'name: "t.op"\nsteps:\n  - op: validate_provenance\n    item: {}\n',
        b=HEADER + 'name: "t.expect"\nsteps:\n' + CREATE_USER.replace(
            "ok: true", "ok: true, item_sparkles: 1"),
        c=HEADER + 'name: "t.cond"\nsteps:\n' + CREATE_USER + """\
  - op: transact_write
    transact_write:
      actions:
        - kind: condition
          key: { PK: "USER#1", SK: "PROFILE" }
          condition_expression: "nickname = emailHash"
""",
        e=HEADER.replace('"0.2"', '"0.1"') + 'name: "t.version"\nsteps:\n' + CREATE_USER)
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert rc == 0
    assert lines[:-1] == [
        "SKIP t.op: step 1 (validate_provenance): op validate_provenance has no HTTP API mapping",
        "SKIP t.expect: step 1 (create): expectation item_sparkles not supported by the runner",
        "SKIP t.cond: condition expression: the HTTP API compares an attribute with a value only "
        "(no attribute-to-attribute or value-to-value comparisons)",
        "SKIP t.version: dms_version '0.1' (the runner loads DMS 0.2 models)",
    ]
    # Nothing was sent for skipped scenarios: they are translated completely first.
    assert fake.state.requests == []


def test_error_expectations_and_mapping(tmp_path, fake):
    sdir = write_scenarios(
        tmp_path,
        a=HEADER + 'name: "t.errors"\nsteps:\n' + CREATE_USER + CREATE_USER.replace(
            "expect: { ok: true }", 'expect: { error: "ErrConditionFailed" }') + """\
  - op: update
    fields: ["nickname"]
    item: { PK: "USER#1", SK: "PROFILE", nickname: "stale", version: 7 }
    expect: { errors: ["ErrConditionFailed", "ErrVersionConflict"] }
  - op: update
    fields: ["nickname"]
    item: { PK: "USER#9", SK: "PROFILE", nickname: "absent", version: 0 }
    expect: { error: "ErrConditionFailed" }
  - op: get
    key: { PK: "USER#9", SK: "PROFILE" }
    expect: { error: "ErrItemNotFound" }
  - op: get
    key: { PK: "USER#1", SK: "PROFILE" }
    expect: { ok: false }
""")
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert lines[0] == "FAIL t.errors: step 6 (get): expected an error, but the call succeeded"

    sdir = write_scenarios(
        tmp_path,
        a=HEADER + 'name: "t.errors"\nsteps:\n' + CREATE_USER + """\
  - op: get
    key: { PK: "USER#1", SK: "PROFILE" }
    expect: { error: "ErrItemNotFound" }
""")
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert lines[0] == ("FAIL t.errors: step 2 (get): expected ErrItemNotFound, "
                        "but the call succeeded")

    sdir = write_scenarios(
        tmp_path,
        a=HEADER + 'name: "t.errors"\nsteps:\n' + CREATE_USER.replace(
            'nickname: "Al"', 'nickname: "Al", shoeSize: 9'))
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert lines[0] == ("FAIL t.errors: step 1 (create): unexpected error 400 ValidationError "
                        "(ErrEncryptedFieldNotQueryable, ErrInvalidModel, ErrInvalidOperator, "
                        "ErrInvalidTag, ErrMissingPrimaryKey, ErrValidationError): unknown "
                        "attribute for this model")


def test_lossy_json_number_fails_precision(tmp_path, fake):
    def tamper(method, path, status, body):
        if method == "GET" and "format=dynamodb" not in path and isinstance(body, dict) \
                and "largeInteger" in body:
            body = dict(body, largeInteger=9007199254740993)  # a JSON number
        return status, body
    fake.state.tamper = tamper
    sdir = write_scenarios(tmp_path, a="""\
        name: "t.num"
        dms_version: "0.2"
        model: "NumberPrecision"
        steps:
          - op: create
            item: { PK: "N", SK: "1", largeInteger: "9007199254740993", preciseDecimal: "0.5" }
          - op: get
            key: { PK: "N", SK: "1" }
            expect:
              item_contains: { largeInteger: "9007199254740993", preciseDecimal: 0.5 }
        """)
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert lines[0] == ("FAIL t.num: step 2 (get) item_contains: largeInteger: 9007199254740993 "
                        "came back as a JSON number, which a double cannot carry exactly "
                        "(docs/api.md: return it as a string)")
    fake.state.tamper = None
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert lines[0] == "PASS t.num"


def test_query_body_cursor_and_count(tmp_path, fake):
    sdir = write_scenarios(tmp_path, a=HEADER + 'name: "t.q"\nsteps:\n' + """\
  - op: create
    item: { PK: "U", SK: "I#1", emailHash: "e", nickname: "one" }
  - op: create
    item: { PK: "U", SK: "I#2", emailHash: "e", nickname: "two" }
  - op: query
    query:
      partition: { attribute: "PK", operator: "=", value: "U" }
      sort: { attribute: "SK", operator: "between", values: ["I#1", "I#9"] }
      filter: [ { attribute: "nickname", operator: "<>", value: "zero" } ]
      sort_direction: "DESC"
      limit: 1
      projection: ["PK", "SK", "nickname"]
      consistent_read: true
    expect:
      item_count: 1
      items_contains: [ { SK: "I#2" } ]
      cursor_equals: "wrong"
  - op: count
    count: { scan: { filter: [ { attribute: "emailHash", operator: "=", value: "e" } ] } }
    expect: { count: 2, item_count: 0 }
""")
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    cursor = ("eyJsYXN0S2V5Ijp7IlBLIjp7IlMiOiJVIn0sIlNLIjp7IlMiOiJJIzIifX0sInNvcnQiOiJERVNDIn0=")
    assert lines[0] == "FAIL t.q: step 3 (query) cursor_equals: cursor %r, expected 'wrong'" \
        % cursor
    q = [b for m, p, b in fake.state.requests if p == "/v1/models/User/query"][0]
    assert q == {"key": [{"attr": "PK", "op": "=", "value": "U"},
                         {"attr": "SK", "op": "between", "value": ["I#1", "I#9"]}],
                 "filter": [{"attr": "nickname", "op": "<>", "value": "zero"}],
                 "order": "desc", "limit": 1, "select": ["PK", "SK", "nickname"],
                 "consistent": True}
    (tmp_path / "scenarios" / "a.yml").write_text(
        (tmp_path / "scenarios" / "a.yml").read_text().replace('"wrong"', '"%s"' % cursor))
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert lines[0] == "PASS t.q"
    c = [b for m, p, b in fake.state.requests if p == "/v1/models/User/scan"][-1]
    assert c == {"filter": [{"attr": "emailHash", "op": "=", "value": "e"}], "count": True}


def test_update_requests_and_saved_variables(tmp_path, fake):
    sdir = write_scenarios(tmp_path, a=HEADER + 'name: "t.u"\nsteps:\n' + """\
  - op: create
    item: { PK: "U", SK: "P", nickname: "one", profile: { source: "x" } }
  - op: get
    key: { PK: "U", SK: "P" }
    save: { c0: "createdAt", u0: "updatedAt" }
  - op: sleep
    ms: 5
  - op: update
    item: { PK: "U", SK: "P", nickname: "two", profile: { source: "" }, ttl: 0, version: 0 }
  - op: get
    key: { PK: "U", SK: "P" }
    expect:
      item_field_equals_var: { createdAt: "c0" }
      item_field_not_equals_var: { updatedAt: "u0" }
      item_contains: { nickname: "two", profile: { source: "x" }, version: 1 }
      item_missing_fields: ["ttl"]
  - op: get
    key: { PK: "U", SK: "P" }
    expect:
      item_field_not_equals_var: { createdAt: "c0" }
""")
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert lines[0] == ("FAIL t.u: step 6 (get) item_field_not_equals_var: createdAt is %s, "
                        "must differ from c0 (%s)" % ((json.dumps(_created(fake)),) * 2))
    patch = [b for m, p, b in fake.state.requests if m == "PATCH"][0]
    # Without `fields`, empty values (Go's zero values, records of zeros) are not selected.
    assert patch["fields"] == ["nickname"]
    assert patch["item"]["version"] == 0
    assert [p for m, p, b in fake.state.requests if m == "PATCH"] == \
        ["/v1/models/User/items/U/P"]


def test_update_protected_attributes_are_sent(tmp_path, fake):
    sdir = write_scenarios(tmp_path, a=HEADER + 'name: "t.protected"\nsteps:\n' + CREATE_USER + """\
  - op: update
    fields: ["nickname"]
    protected_attributes: ["nickname"]
    item: { PK: "USER#1", SK: "PROFILE", nickname: "x", version: 0 }
""")
    run_main(["--url", fake.url, "--scenarios", sdir])
    patch = [b for m, p, b in fake.state.requests if m == "PATCH"][0]
    assert patch["protected_attributes"] == ["nickname"]
    assert patch["fields"] == ["nickname"]


def _created(fake):
    stored = next(iter(fake.state.tables["users_contract"].values()))
    return stored["createdAt"]["S"]


def test_batches_transactions_and_condition_translation(tmp_path, fake):
    sdir = write_scenarios(tmp_path, a=HEADER + 'name: "t.tx"\nsteps:\n' + """\
  - op: batch_write
    batch_write:
      puts: [ { PK: "B", SK: "1", nickname: "b1" }, { PK: "B", SK: "2", nickname: "b2" } ]
  - op: batch_get
    batch_get: { keys: [ { PK: "B", SK: "2" }, { PK: "B", SK: "9" }, { PK: "B", SK: "1" } ] }
    expect:
      item_count: 2
      items_contains: [ { SK: "2" }, { SK: "1" } ]
  - op: transact_write
    transact_write:
      actions:
        - kind: update
          key: { PK: "B", SK: "1" }
          set: { nickname: "changed" }
          condition_expression: "attribute_exists(#pk) AND (#n = :v OR size(#n) > :z)"
          expression_attribute_names: { "#pk": "PK", "#n": "nickname" }
          expression_attribute_values: { ":v": "b1", ":z": 100 }
        - kind: condition
          key: { PK: "B", SK: "2" }
          condition_expression: "NOT begins_with(nickname, :p)"
          expression_attribute_values: { ":p": { "S": "zz" } }
        - kind: create
          item: { PK: "B", SK: "3", nickname: "b3" }
  - op: transact_get
    transact_get:
      items: [ { key: { PK: "B", SK: "1" } }, { key: { PK: "B", SK: "0" } } ]
    expect:
      item_count: 1
      items_contains: [ { nickname: "changed" } ]
  - op: transact_write
    transact_write:
      actions:
        - { kind: "put", item: { PK: "B", SK: "4" } }
        - { kind: "condition", key: { PK: "B", SK: "3" }, condition_expression: "attribute_not_exists(PK)" }
    expect: { error: "ErrConditionFailed" }
  - op: get
    key: { PK: "B", SK: "4" }
    expect: { error: "ErrItemNotFound" }
""")
    rc, lines = run_main(["--url", fake.url, "--scenarios", sdir])
    assert lines[0] == "PASS t.tx", lines
    tx = [b for m, p, b in fake.state.requests if p == "/v1/transactions/write"][0]
    assert tx["items"][0] == {
        "model": "User", "op": "update", "key": {"PK": "B", "SK": "1"},
        "set": {"nickname": "changed"},
        "condition": {"and": [{"attr": "PK", "op": "exists"},
                              {"or": [{"attr": "nickname", "op": "=", "value": "b1"},
                                      {"attr": "nickname", "size": ">", "value": 100}]}]}}
    assert tx["items"][1] == {"model": "User", "op": "check", "key": {"PK": "B", "SK": "2"},
                              "condition": {"not": {"attr": "nickname", "op": "begins_with",
                                                    "value": "zz"}}}
    assert tx["items"][2]["op"] == "create"
    bg = [b for m, p, b in fake.state.requests if p == "/v1/models/User/batch-get"][0]
    assert bg == {"keys": [{"PK": "B", "SK": "2"}, {"PK": "B", "SK": "9"},
                           {"PK": "B", "SK": "1"}], "consistent": True}


def test_interop_modes(tmp_path, fake):
    sdir = write_scenarios(tmp_path, a=HEADER + """\
name: "t.interop"
seed_runtime: "go"
seed_steps:
  - op: create
    item: { PK: "I", SK: "1", nickname: "seeded" }
read_steps:
  - op: get
    key: { PK: "I", SK: "1" }
    expect: { item_contains: { nickname: "seeded" } }
""")
    assert run_main(["--url", fake.url, "--scenarios", sdir])[1][0] == "PASS t.interop"
    # read: no reset, no seeding -> the item seeded above is still there
    assert run_main(["--url", fake.url, "--scenarios", sdir, "--interop", "read"])[1][0] == \
        "PASS t.interop"
    assert run_main(["--url", fake.url, "--scenarios", sdir, "--interop", "skip"])[1][0] == \
        "SKIP t.interop: interop scenario seeded by go (--interop skip)"


# ---- the daemon process ---------------------------------------------------------------------

CLOCK_SCENARIO = HEADER + 'name: "t.c"\nsteps:\n' + """\
  - op: create
    item: { PK: "U", SK: "P", nickname: "one" }
  - op: get
    key: { PK: "U", SK: "P" }
    save: { u0: "updatedAt" }
  - op: sleep
    ms: 25
  - op: update
    item: { PK: "U", SK: "P", nickname: "two", version: 0 }
  - op: get
    key: { PK: "U", SK: "P" }
    expect:
      item_field_not_equals_var: { updatedAt: "u0" }
"""


def test_sleep_moves_the_test_clock(tmp_path):
    # The daemon's clock is frozen: only the sleep step, which moves it, changes updatedAt.
    sdir = write_scenarios(tmp_path, a=CLOCK_SCENARIO)
    with fake_daemon.FakeDaemon(MODELS, test_clock=True) as f:
        rc, lines = run_main(["--url", f.url, "--scenarios", sdir])
        assert (rc, lines) == (0, ["PASS t.c", "1 passed, 0 failed, 0 skipped"])
        assert [(m, p, b) for m, p, b in f.state.requests if p == "/v1/_test/clock"] == [
            ("GET", "/v1/_test/clock", {}), ("POST", "/v1/_test/clock", {"advance_ms": 25})]
    sdir = write_scenarios(tmp_path, a=CLOCK_SCENARIO.replace("ms: 25", "ms: 0"))
    with fake_daemon.FakeDaemon(MODELS, test_clock=True) as f:
        rc, lines = run_main(["--url", f.url, "--scenarios", sdir])
        assert rc == 1 and lines[0].startswith("FAIL t.c: step 5 (get) item_field_not_equals_var")


def test_daemon_is_started_and_stopped(tmp_path, monkeypatch, fake_exe):
    sdir = write_scenarios(tmp_path, a=HEADER + 'name: "t.d"\nsteps:\n' + CREATE_USER)
    rc, lines = run_main(["--daemon", fake_exe, "--scenarios", sdir])
    assert (rc, lines) == (0, ["PASS t.d", "1 passed, 0 failed, 0 skipped"])
    monkeypatch.setenv("FAKE_EXIT_STATUS", "3")
    monkeypatch.setenv("TT_DAEMON", fake_exe)
    rc, lines = run_main(["--scenarios", sdir])
    assert (rc, lines) == (1, ["PASS t.d", "FAIL daemon.shutdown: exit status 3 after SIGTERM",
                               "1 passed, 1 failed, 0 skipped"])


def test_daemon_that_never_gets_ready(tmp_path):
    script = tmp_path / "silent"
    script.write_text("#!/bin/sh\nexec sleep 30\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    sdir = write_scenarios(tmp_path, a=HEADER + 'name: "t.d"\nsteps:\n' + CREATE_USER)
    rc, lines = run_main(["--daemon", str(script), "--scenarios", sdir, "--ready-timeout", "0.5"])
    assert (rc, lines) == (2, [])


def test_no_target_is_a_usage_error(monkeypatch):
    monkeypatch.delenv("TT_DAEMON", raising=False)
    monkeypatch.delenv("TT_URL", raising=False)
    assert run_main([]) == (2, [])


# ---- translation and comparison units -------------------------------------------------------

@pytest.mark.parametrize("expr,names,values,want", [
    ("attribute_exists(PK)", None, None, {"attr": "PK", "op": "exists"}),
    ("attribute_not_exists(PK)", None, None, {"attr": "PK", "op": "not_exists"}),
    (":v < #a", {"#a": "age"}, {":v": 3}, {"attr": "age", "op": ">", "value": 3}),
    ("a.b[0] BETWEEN :lo AND :hi", None, {":lo": 1, ":hi": 2},
     {"attr": "a.b[0]", "op": "between", "value": [1, 2]}),
    ("s IN (:a, :b)", None, {":a": "x", ":b": "y"}, {"attr": "s", "op": "in", "value": ["x", "y"]}),
    ("attribute_type(x, :t)", None, {":t": "S"}, {"attr": "x", "op": "type", "value": "S"}),
    ("contains(tags, :t) and not x <> :n", None, {":t": "a", ":n": {"N": "5"}},
     {"and": [{"attr": "tags", "op": "contains", "value": "a"},
              {"not": {"attr": "x", "op": "<>", "value": "5"}}]}),
])
def test_condition_expressions(expr, names, values, want):
    assert run.translate_condition_expression(expr, names, values) == want


@pytest.mark.parametrize("expr", ["a = b", "#x = :v", "a = :missing", "a = :v AND", "f(a)"])
def test_condition_expressions_that_skip(expr):
    with pytest.raises(run.Unsupported):
        run.translate_condition_expression(expr, {}, {":v": 1})


def test_value_matching():
    from decimal import Decimal
    m = run.match_value
    assert m("9007199254740993", "9007199254740993", "N", "x") is None
    assert m(4200, Decimal("4200"), "N", "x") is None
    assert m(4200, 4200.5, "N", "x") is not None
    assert "double" in m("0.12345678901234567", Decimal("0.12345678901234567"), "N", "x")
    assert m(["9007199254740993", "42"], [42, "9007199254740993"], "NS", "x") is None
    assert m(["a", "b"], ["b", "a"], "SS", "x") is None
    assert m(["a", "b"], ["a", "a"], "SS", "x") is not None
    assert m(["a", "a"], ["a", "b"], "SS", "x") is not None
    assert m(["BAU=", "Bgc="], ["Bgc=", "BAU="], "BS", "x") is None
    assert m("AQID", "AQID", "B", "x") is None
    assert m(True, 1, None, "x") is not None
    assert m(1, True, None, "x") is not None
    assert m(None, None, "NULL", "x") is None
    assert m({"a": [1, None]}, {"a": [Decimal("1.0"), None]}, "M", "x") is None
    assert m({"a": 1}, {"a": 1, "b": 2}, "M", "x") is not None
    assert run.match_av({"v": "1", "l": [], "m": {}},
                        {"M": {"v": {"N": "1"}, "l": {"L": []}, "m": {"M": {}}}}, "x") is None
    assert run.match_av({"v": "1"}, {"M": {"v": {"S": "2"}}}, "x") is not None


def test_error_code_mapping():
    def codes(op, code, reasons=None):
        body = {"error": {"code": code, "details": {"reasons": reasons} if reasons else {}}}
        return run.tt_codes_for(op, 409, body)[1]
    assert "ErrConditionFailed" in codes("create", "ConditionFailed")
    assert {"ErrConditionFailed", "ErrVersionConflict"} <= codes("update", "VersionConflict")
    assert "ErrConditionFailed" in codes("update", "ItemNotFound")
    assert "ErrConditionFailed" not in codes("get", "ItemNotFound")
    assert {"ErrInvalidOperator", "ErrInvalidModel"} <= codes("query", "ValidationError")
    assert "ErrImmutableModelMutation" in codes("save", "ImmutableModelMutation")
    tx = codes("transact_write", "TransactionCanceled",
               [{"index": 0, "code": "None"}, {"index": 1, "code": "ConditionalCheckFailed"}])
    assert "ErrConditionFailed" in tx
    assert "ErrConditionFailed" not in codes("transact_write", "TransactionCanceled",
                                             [{"index": 0, "code": "TransactionConflict"}])


def test_key_paths_are_percent_encoded():
    reg = run.ModelRegistry(MODELS)
    user = reg.get("User")
    assert user.key_path({"PK": "USER#1", "SK": "A/B C"}, "w") == \
        "/v1/models/User/items/USER%231/A%2FB%20C"
    with pytest.raises(run.StepFailure):
        user.key_path({"PK": "USER#1"}, "w")


def test_yaml_timestamps_stay_strings(tmp_path):
    p = tmp_path / "x.yml"
    p.write_text("at: 2026-04-24T19:00:00Z\nn: 3\n")
    assert run.load_yaml(str(p)) == {"at": "2026-04-24T19:00:00Z", "n": 3}
