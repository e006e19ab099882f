# SPDX-License-Identifier: Apache-2.0
"""Models and their tables over HTTP (docs/api.md, Models and tables): listing, registration
at run time, the table endpoints, and bad models at start-up."""
import copy
import os
import subprocess


from daemon import DAEMON, PEER, broken_model, skip_on_peer
from items_fixtures import FIXTURE_MODELS, MY_MODELS, assert_error, item_path

FIXTURE_NAMES = {"EncryptedRecord", "NumberPrecision", "Order", "ReleaseStateActual",
                 "ReleaseStateEvent", "SnakeCaseRecord", "StructuredProfileUser", "TypeMatrix",
                 "User"}
# The job ledger's built-in models are always registered, but they are the
# ledger's: GET /v1/models does not list them (docs/ledger.md "Reserved models").
LEDGER_NAMES = {"JobMeta", "JobRecord", "JobLock", "JobRequest", "SemaphoreLease"}

NOTE = {
    "dms_version": "0.2",
    "namespace": "tabletheoryd.itest.runtime",
    "name": "Note",
    "table": {"name": "notes_runtime_itest"},
    "keys": {"partition": {"attribute": "id", "type": "S"},
             "sort": {"attribute": "at", "type": "N"}},
    "attributes": [
        {"attribute": "id", "type": "S", "required": True, "roles": ["pk"]},
        {"attribute": "at", "type": "N", "required": True, "roles": ["sk"]},
        {"attribute": "text", "type": "S", "optional": True},
        {"attribute": "owner", "type": "S", "optional": True},
    ],
    "indexes": [{"name": "gsi-owner", "type": "GSI",
                 "partition": {"attribute": "owner", "type": "S"},
                 "projection": {"type": "KEYS_ONLY"}}],
}


def note_model(name="Note", table="notes_runtime_itest"):
    m = copy.deepcopy(NOTE)
    m["name"] = name
    m["table"]["name"] = table
    return m


def fixture_daemon(fresh_daemon, *extra):
    return fresh_daemon("--models", FIXTURE_MODELS, *extra)


# ---- listing -----------------------------------------------------------------

def test_list_models_names_every_loaded_model(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    status, hdrs, body = d.json("GET", "/v1/models")
    assert status == 200
    assert hdrs["content-type"] == "application/json"
    assert list(body) == ["models"]
    names = [m["name"] for m in body["models"]]
    assert sorted(names) == sorted(FIXTURE_NAMES)


def test_list_models_leaves_out_the_ledgers_but_get_shows_them(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    _, _, body = d.json("GET", "/v1/models")
    assert not LEDGER_NAMES & {m["name"] for m in body["models"]}
    assert all(m["table"]["name"] != "tabletheory-jobs" for m in body["models"])
    for name in sorted(LEDGER_NAMES):
        status, _, got = d.json("GET", "/v1/models/" + name)
        assert status == 200 and got["name"] == name
        assert got["table"]["name"] == "tabletheory-jobs"


def test_check_config_counts_the_users_models_only():
    # FIXTURE_MODELS holds len(FIXTURE_NAMES) models; the ledger's five are not counted.
    r = subprocess.run([DAEMON, "--models", FIXTURE_MODELS, "--check-config"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "tabletheoryd: configuration OK (%d models)" % len(FIXTURE_NAMES)
    r = subprocess.run([DAEMON, "--check-config"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "tabletheoryd: configuration OK (0 models)"


def test_list_models_is_normalized_dms(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    _, _, body = d.json("GET", "/v1/models")
    user = next(m for m in body["models"] if m["name"] == "User")
    assert user["table"]["name"] == "users_contract"
    assert user["keys"] == {"partition": {"attribute": "PK", "type": "S"},
                            "sort": {"attribute": "SK", "type": "S"}}
    attrs = {a["attribute"]: a for a in user["attributes"]}
    assert set(attrs) == {"PK", "SK", "emailHash", "nickname", "tags", "profile", "createdAt",
                          "updatedAt", "version", "ttl"}
    assert attrs["version"]["roles"] == ["version"] and attrs["version"]["type"] == "N"
    assert attrs["tags"]["type"] == "SS" and attrs["tags"]["omit_empty"] is True
    assert [i["name"] for i in user["indexes"]] == ["gsi-email"]
    assert user["indexes"][0]["projection"]["type"] == "KEYS_ONLY"


def test_get_one_model(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    status, _, body = d.json("GET", "/v1/models/Order")
    assert status == 200
    assert body["name"] == "Order"
    assert body["table"]["name"] == "orders_contract"
    idx = body["indexes"][0]
    assert idx["name"] == "gsi-status"
    assert idx["partition"] == {"attribute": "status", "type": "S"}
    assert idx["sort"] == {"attribute": "createdAt", "type": "S"}
    # GET of one model equals its entry in the list.
    _, _, listing = d.json("GET", "/v1/models")
    assert body == next(m for m in listing["models"] if m["name"] == "Order")


def test_unknown_model_is_404(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    status, hdrs, body = d.json("GET", "/v1/models/NoSuchModel")
    assert_error(status, hdrs, body, 404, "ModelNotFound", "model")
    for method, path in [("GET", "/v1/models/NoSuchModel/table"),
                         ("PUT", "/v1/models/NoSuchModel/table"),
                         ("GET", item_path("NoSuchModel", "a")),
                         ("DELETE", item_path("NoSuchModel", "a"))]:
        status, hdrs, body = d.json(method, path)
        assert_error(status, hdrs, body, 404, "ModelNotFound"), (method, path)
    status, hdrs, body = d.json("POST", "/v1/models/NoSuchModel/query",
                                body={"key": [{"attr": "a", "op": "=", "value": "x"}]})
    assert_error(status, hdrs, body, 404, "ModelNotFound")


# ---- registration at run time ------------------------------------------------

def test_put_model_new_identical_different_replace(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    status, _, body = d.json("PUT", "/v1/models/Note", body=note_model())
    assert status == 201, body
    assert body["name"] == "Note"
    assert body["keys"]["sort"] == {"attribute": "at", "type": "N"}
    status, _, got = d.json("GET", "/v1/models/Note")
    assert status == 200 and got == body
    _, _, listing = d.json("GET", "/v1/models")
    assert sorted(m["name"] for m in listing["models"]) == sorted(
        FIXTURE_NAMES | {"Note"})

    # The same model again: 200, nothing changes.
    status, _, again = d.json("PUT", "/v1/models/Note", body=note_model())
    assert status == 200, again
    assert again == body
    # The normalized form that GET returned is identical too.
    status, _, again = d.json("PUT", "/v1/models/Note", body=got)
    assert status == 200, again

    # A different model under the same name: 409 AlreadyExists.
    changed = note_model()
    changed["attributes"].append({"attribute": "extra", "type": "N", "optional": True})
    status, hdrs, err = d.json("PUT", "/v1/models/Note", body=changed)
    assert_error(status, hdrs, err, 409, "AlreadyExists")
    _, _, still = d.json("GET", "/v1/models/Note")
    assert "extra" not in {a["attribute"] for a in still["attributes"]}

    # ?replace=true replaces it.
    status, _, replaced = d.json("PUT", "/v1/models/Note?replace=true", body=changed)
    assert status == 200, replaced
    assert "extra" in {a["attribute"] for a in replaced["attributes"]}
    _, _, now = d.json("GET", "/v1/models/Note")
    assert now == replaced


def test_put_model_without_name_takes_the_path_name(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    m = note_model()
    del m["name"]
    status, _, body = d.json("PUT", "/v1/models/Note", body=m)
    assert status == 201, body
    assert body["name"] == "Note"


def test_put_model_name_differs_from_path(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    status, hdrs, body = d.json("PUT", "/v1/models/Other", body=note_model())
    assert_error(status, hdrs, body, 400, "ValidationError", "name")
    status, hdrs, body = d.json("GET", "/v1/models/Other")
    assert_error(status, hdrs, body, 404, "ModelNotFound")


def test_put_bad_model_names_the_attribute(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    bad = note_model()
    bad["attributes"][2]["type"] = "Q"
    status, hdrs, body = d.json("PUT", "/v1/models/Note", body=bad)
    err = assert_error(status, hdrs, body, 400, "ValidationError", "attributes[2].type")
    assert "text" in err["message"]
    status, hdrs, body = d.json("GET", "/v1/models/Note")
    assert_error(status, hdrs, body, 404, "ModelNotFound")


def test_put_model_with_undeclared_key_attribute(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    bad = note_model()
    bad["keys"]["partition"]["attribute"] = "missing"
    status, hdrs, body = d.json("PUT", "/v1/models/Note", body=bad)
    err = assert_error(status, hdrs, body, 400, "ValidationError")
    assert err["details"]["field"].startswith("keys.partition"), body
    assert "missing" in err["message"]


def test_put_model_body_not_an_object(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    status, hdrs, body = d.json("PUT", "/v1/models/Note", body=[1, 2])
    assert_error(status, hdrs, body, 400, "ValidationError")


@skip_on_peer("only the memory backend creates a model's table when the model loads (docs/api.md)")
def test_runtime_model_table_exists_at_once(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    status, _, _ = d.json("PUT", "/v1/models/Note", body=note_model())
    assert status == 201
    status, _, table = d.json("GET", "/v1/models/Note/table")
    assert status == 200, table
    assert table["table"] == "notes_runtime_itest"
    assert table["status"] == "ACTIVE"
    assert table["item_count"] == 0
    assert [i["name"] if isinstance(i, dict) else i for i in table["indexes"]] == ["gsi-owner"]
    status, _, item = d.json("POST", "/v1/models/Note/items",
                             body={"id": "n1", "at": 5, "text": "hello"})
    assert status == 201, item
    assert item == {"id": "n1", "at": 5, "text": "hello"}
    status, _, got = d.json("GET", item_path("Note", "n1", "5"))
    assert status == 200 and got == item
    status, _, ensured = d.json("PUT", "/v1/models/Note/table")
    assert status == 200, ensured


@skip_on_peer("a run-time model's table does not exist before PUT .../table on DynamoDB, so "
              "the table this test extends is not there")
def test_replaced_model_with_new_gsi_gets_its_index(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    status, _, _ = d.json("PUT", "/v1/models/Note", body=note_model())
    assert status == 201
    changed = note_model()
    changed["indexes"].append({"name": "gsi-text", "type": "GSI",
                               "partition": {"attribute": "text", "type": "S"},
                               "projection": {"type": "ALL"}})
    status, _, _ = d.json("PUT", "/v1/models/Note?replace=true", body=changed)
    assert status == 200
    status, _, body = d.json("PUT", "/v1/models/Note/table")
    assert status in (200, 201), body
    status, _, body = d.json("GET", "/v1/models/Note/table")
    names = sorted(i["name"] if isinstance(i, dict) else i for i in body["indexes"])
    assert names == ["gsi-owner", "gsi-text"], body
    status, _, _ = d.json("POST", "/v1/models/Note/items", body={"id": "n", "at": 1,
                                                                 "text": "t"})
    assert status == 201
    status, _, body = d.json("POST", "/v1/models/Note/query", body={
        "index": "gsi-text", "key": [{"attr": "text", "op": "=", "value": "t"}]})
    assert status == 200, body
    assert body["items"] == [{"id": "n", "at": 1, "text": "t"}]


def test_replace_that_changes_keys_or_types_is_refused(fresh_daemon):
    """A replace whose change stored items do not survive is 409 UnsafeModelChange
    naming the attribute, index or keys, and the registry keeps the old model."""
    d = fixture_daemon(fresh_daemon)
    status, _, first = d.json("PUT", "/v1/models/Note", body=note_model())
    assert status == 201, first

    def changed(edit):
        m = note_model()
        edit(m)
        return m

    def retype_text(m):
        m["attributes"][2]["type"] = "N"

    def json_text(m):
        m["attributes"][2]["json"] = True

    def sort_key_s(m):
        m["keys"]["sort"]["type"] = "S"
        m["attributes"][1]["type"] = "S"

    def index_on_text(m):
        m["indexes"][0]["partition"] = {"attribute": "text", "type": "S"}

    def encrypt_text(m):
        m["attributes"][2]["encryption"] = {"v": 1}

    cases = [(retype_text, "attributes.text"), (json_text, "attributes.text"),
             (sort_key_s, "keys"), (index_on_text, "indexes.gsi-owner"),
             (encrypt_text, "attributes.text")]
    for edit, field in cases:
        status, hdrs, body = d.json("PUT", "/v1/models/Note?replace=true", body=changed(edit))
        err = assert_error(status, hdrs, body, 409, "UnsafeModelChange", field)
        assert "allow_unsafe=true" in err["message"], err
        name = field.split(".", 1)[-1]
        assert ('"%s"' % name if "." in field else "keys") in err["message"], err
        _, _, now = d.json("GET", "/v1/models/Note")
        assert now == first, edit.__name__

    # A bad flag value is refused before anything changes.
    status, hdrs, body = d.json("PUT", "/v1/models/Note?replace=true&allow_unsafe=yes",
                                body=changed(retype_text))
    assert_error(status, hdrs, body, 400, "ValidationError", "allow_unsafe")
    # The flag without replace=true replaces nothing.
    status, hdrs, body = d.json("PUT", "/v1/models/Note?allow_unsafe=true",
                                body=changed(retype_text))
    assert_error(status, hdrs, body, 409, "AlreadyExists")

    # Explicitly allowed: replaced, and logged at warn with names only.
    status, _, body = d.json("PUT", "/v1/models/Note?replace=true&allow_unsafe=true",
                             body=changed(retype_text))
    assert status == 200, body
    assert {a["attribute"]: a for a in body["attributes"]}["text"]["type"] == "N"
    lines = [ln for ln in d.log_lines() if ln.get("event") == "model.unsafe_replace"]
    assert len(lines) == 1, lines
    assert lines[0]["level"] == "warn" and lines[0]["model"] == "Note", lines
    assert lines[0]["changes"] == "type_changed:text" and lines[0]["count"] == 1, lines

    # Safe changes replace without the flag: a new attribute, a dropped plain one.
    def add_and_drop(m):
        retype_text(m)
        m["attributes"].append({"attribute": "extra", "type": "N", "optional": True})
        del m["attributes"][3]  # owner: its index goes too
        del m["indexes"]
    status, _, body = d.json("PUT", "/v1/models/Note?replace=true", body=changed(add_and_drop))
    assert status == 200, body
    assert sorted(a["attribute"] for a in body["attributes"]) == ["at", "extra", "id", "text"]
    assert len([ln for ln in d.log_lines() if ln.get("event") == "model.unsafe_replace"]) == 1


@skip_on_peer("only the memory backend ensures a model's table when the model registers")
def test_refused_table_leaves_the_registry_unchanged(fresh_daemon):
    """allow_unsafe lets a key change through the registry's rule, but the memory
    backend's table cannot take it: 409 from the table ensure, and the model that
    was registered stays (the new one is registered only after its table)."""
    d = fixture_daemon(fresh_daemon)
    status, _, first = d.json("PUT", "/v1/models/Note", body=note_model())
    assert status == 201, first
    other = note_model()
    other["keys"]["sort"]["type"] = "S"
    other["attributes"][1]["type"] = "S"
    status, hdrs, body = d.json("PUT", "/v1/models/Note?replace=true&allow_unsafe=true",
                                body=other)
    err = assert_error(status, hdrs, body, 409, "AlreadyExists")
    assert err["details"]["difference"] == "key_schema", body
    _, _, now = d.json("GET", "/v1/models/Note")
    assert now == first
    assert not [ln for ln in d.log_lines() if ln.get("event") == "model.unsafe_replace"]
    # A new model whose table cannot be made is not registered either.
    stray = note_model(name="Stray")
    stray["keys"]["sort"]["type"] = "S"
    stray["attributes"][1]["type"] = "S"
    # Move Note away from its table, then put Stray on it with other keys.
    status, _, _ = d.json("PUT", "/v1/models/Note?replace=true",
                          body=note_model(table="notes_moved_itest"))
    assert status == 200
    status, hdrs, body = d.json("PUT", "/v1/models/Stray", body=stray)
    assert_error(status, hdrs, body, 409, "AlreadyExists")
    status, hdrs, body = d.json("GET", "/v1/models/Stray")
    assert_error(status, hdrs, body, 404, "ModelNotFound")


# ---- tables ------------------------------------------------------------------

def test_table_put_and_get_of_a_loaded_model(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    status, _, body = d.json("PUT", "/v1/models/User/table")
    assert status == 200, body
    assert body["table"] == "users_contract"
    status, _, body = d.json("GET", "/v1/models/User/table")
    assert status == 200, body
    assert set(body) >= {"table", "status", "item_count", "indexes"}
    assert body["table"] == "users_contract" and body["status"] == "ACTIVE"
    assert body["item_count"] == 0
    names = [i["name"] if isinstance(i, dict) else i for i in body["indexes"]]
    assert names == ["gsi-email"]
    for i in range(3):
        status, _, _ = d.json("POST", "/v1/models/User/items",
                              body={"PK": "USER#%d" % i, "SK": "PROFILE"})
        assert status == 201
    _, _, body = d.json("GET", "/v1/models/User/table")
    if not PEER:
        # DynamoDB refreshes ItemCount only about every six hours
        # (DescribeTable, TableDescription.ItemCount); the memory backend's is live.
        assert body["item_count"] == 3


@skip_on_peer("the peer harness starts every daemon with --allow-table-delete to give it empty tables")
def test_table_delete_forbidden_without_flag(fresh_daemon):
    d = fixture_daemon(fresh_daemon)
    status, _, _ = d.json("POST", "/v1/models/User/items", body={"PK": "U", "SK": "P"})
    assert status == 201
    status, hdrs, body = d.json("DELETE", "/v1/models/User/table")
    assert_error(status, hdrs, body, 403, "Forbidden")
    assert "--allow-table-delete" in body["error"]["message"]
    status, _, _ = d.json("GET", "/v1/models/User/table")
    assert status == 200
    status, _, item = d.json("GET", item_path("User", "U", "P"))
    assert status == 200 and item["PK"] == "U"


def test_table_delete_then_table_not_found_then_recreate(fresh_daemon):
    d = fixture_daemon(fresh_daemon, "--allow-table-delete")
    status, _, _ = d.json("POST", "/v1/models/User/items", body={"PK": "U#1", "SK": "P"})
    assert status == 201
    status, hdrs, data = d.request("DELETE", "/v1/models/User/table")
    assert status == 204 and data == b""

    status, hdrs, body = d.json("GET", "/v1/models/User/table")
    assert_error(status, hdrs, body, 404, "TableNotFound")
    calls = [("GET", item_path("User", "U#1", "P"), None),
             ("PUT", item_path("User", "U#1", "P"), {"PK": "U#1", "SK": "P"}),
             ("PATCH", item_path("User", "U#1", "P"), {"set": {"nickname": "x"}}),
             ("DELETE", item_path("User", "U#1", "P"), None),
             ("POST", "/v1/models/User/items", {"PK": "U#2", "SK": "P"}),
             ("POST", "/v1/models/User/query",
              {"key": [{"attr": "PK", "op": "=", "value": "U#1"}]}),
             ("POST", "/v1/models/User/scan", {}),
             # StructuredProfileUser shares the table users_contract.
             ("GET", item_path("StructuredProfileUser", "U#1", "P"), None)]
    for method, path, req in calls:
        status, hdrs, body = d.json(method, path, body=req)
        assert_error(status, hdrs, body, 404, "TableNotFound"), (method, path)
        assert body["error"]["retryable"] is False

    status, _, body = d.json("PUT", "/v1/models/User/table")
    assert status == 201, body
    assert body["table"] == "users_contract"
    status, _, body = d.json("GET", "/v1/models/User/table")
    assert status == 200 and body["status"] == "ACTIVE" and body["item_count"] == 0
    # The data went with the table; the index came back with it.
    status, hdrs, body = d.json("GET", item_path("User", "U#1", "P"))
    assert_error(status, hdrs, body, 404, "ItemNotFound")
    status, _, _ = d.json("POST", "/v1/models/User/items",
                          body={"PK": "U#3", "SK": "P", "emailHash": "h3"})
    assert status == 201
    status, _, body = d.json("POST", "/v1/models/User/query",
                             body={"index": "gsi-email",
                                   "key": [{"attr": "emailHash", "op": "=", "value": "h3"}]})
    assert status == 200, body
    assert [(i["PK"], i["SK"]) for i in body["items"]] == [("U#3", "P")]
    status, _, body = d.json("PUT", "/v1/models/User/table")
    assert status == 200
    d.wait_metric("tabletheoryd_inflight_operations", 0)


def test_table_delete_twice_is_404(fresh_daemon):
    d = fixture_daemon(fresh_daemon, "--allow-table-delete")
    status, _, _ = d.request("DELETE", "/v1/models/Order/table")
    assert status == 204
    status, hdrs, body = d.json("DELETE", "/v1/models/Order/table")
    assert_error(status, hdrs, body, 404, "TableNotFound")


# ---- bad model files at start-up --------------------------------------------

def run_daemon(*args):
    return subprocess.run([DAEMON, "--listen", "127.0.0.1:0"] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)


BAD_MODEL = broken_model('      - { attribute: "weight", type: "FLOAT", optional: true }\n')


def test_bad_model_file_at_startup_exits_2(tmp_path):
    path = tmp_path / "broken.yml"
    path.write_text(BAD_MODEL)
    p = run_daemon("--models", str(path))
    assert p.returncode == 2, p
    err = p.stderr.decode()
    assert str(path) in err, err
    assert "Broken" in err and "weight" in err, err


def test_bad_model_file_in_a_directory_exits_2(tmp_path):
    (tmp_path / "good.yml").write_text(open(os.path.join(FIXTURE_MODELS, "order.yml")).read())
    (tmp_path / "zz-broken.yml").write_text(BAD_MODEL)
    p = run_daemon("--models", str(tmp_path))
    assert p.returncode == 2, p
    err = p.stderr.decode()
    assert str(tmp_path / "zz-broken.yml") in err and "Broken" in err and "weight" in err, err


def test_unreadable_models_path_exits_2(tmp_path):
    missing = str(tmp_path / "nope.yml")
    p = run_daemon("--models", missing)
    assert p.returncode == 2, p
    assert "nope.yml" in p.stderr.decode()


def test_own_models_load(fresh_daemon):
    d = fresh_daemon("--models", MY_MODELS)
    _, _, body = d.json("GET", "/v1/models")
    assert sorted(m["name"] for m in body["models"]) == sorted(
        ["Wallet", "Counter", "Blob", "Loose", "Event", "Bulk", "Line", "Member", "Account",
         "Pinned", "Entry", "Sealed", "SealedView", "SealedMember", "SealedMemberView"])
