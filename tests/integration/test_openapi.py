# SPDX-License-Identifier: Apache-2.0
"""openapi.yaml describes every route the daemon serves, with its methods."""
import glob
import os
import re
import urllib.parse

import yaml

from daemon import SRCDIR
from items_fixtures import mdaemon  # noqa: F401

METHODS = {"GET": "get", "HEAD": None, "POST": "post", "PUT": "put", "PATCH": "patch",
           "DELETE": "delete"}


def served_routes():
    routes = set()
    files = [os.path.join(SRCDIR, "api", "routes.c")] + \
        sorted(glob.glob(os.path.join(SRCDIR, "api", "routes_*.inc")))
    for path in files:
        with open(path) as f:
            for method, pattern in re.findall(r'\{TT_METHOD_(\w+), "([^"]+)"', f.read()):
                for described in document_paths(pattern):
                    routes.add((method, described))
    return routes


def document_paths(pattern):
    """The document's paths for a route pattern. The item routes' `{key+}`
    (one segment, or two for a composite key) is described as two paths,
    `{pk}` and `{pk}/{sk}`, since client generators encode a `/` inside one
    path parameter."""
    if pattern.endswith("/items/{key+}"):
        base = pattern[:-len("{key+}")]
        return [base + "{pk}", base + "{pk}/{sk}"]
    assert "+}" not in pattern, "describe the rest parameter of %s" % pattern
    return [pattern]


def test_every_served_route_is_described():
    with open(os.path.join(SRCDIR, "openapi.yaml")) as f:
        spec = yaml.safe_load(f)
    routes = served_routes()
    assert len(routes) > 30
    missing = [(m, p) for m, p in sorted(routes)
               if METHODS[m] and METHODS[m] not in spec["paths"].get(p, {})]
    assert missing == [], "routes served but not in openapi.yaml: %s" % missing
    described = {(m.upper(), p) for p, ops in spec["paths"].items() for m in ops
                 if m in METHODS.values()}
    assert described - routes == set(), "described but not served"


def test_items_routes_take_both_key_forms(mdaemon):
    """`/items/{pk}/{sk}` as the document describes it, with pk and sk each
    percent-encoded on its own (what openapi-fetch, openapi-python-client
    and openapi-generator send), reaches the item; `/` encoded inside one
    parameter does not, and says how to write the key."""
    q = lambda s: urllib.parse.quote(s, safe="")  # noqa: E731
    status, _, body = mdaemon.json("POST", "/v1/models/User/items",
                                  body={"PK": "USER#oa/1", "SK": "PROFILE"})
    assert status == 201, body
    status, _, got = mdaemon.json("GET", "/v1/models/User/items/%s/%s"
                                 % (q("USER#oa/1"), q("PROFILE")))
    assert status == 200, got
    assert got["PK"] == "USER#oa/1"
    status, _, err = mdaemon.json("GET", "/v1/models/User/items/%s"
                                 % q("USER#oa/1/PROFILE"))
    assert status == 400 and err["error"]["code"] == "ValidationError", err
    assert err["error"]["details"]["field"] == "key"


def test_every_error_code_is_in_the_document():
    """A code the daemon can answer but the ErrorCode enum lacks would make
    every answer carrying it contradict the document."""
    with open(os.path.join(SRCDIR, "src", "util", "error.c")) as f:
        codes = set(re.findall(r'\[TT_ERR_\w+\] = "(\w+)"', f.read()))
    with open(os.path.join(SRCDIR, "openapi.yaml")) as f:
        spec = yaml.safe_load(f)
    assert len(codes) > 20
    assert codes == set(spec["components"]["schemas"]["ErrorCode"]["enum"])
