# SPDX-License-Identifier: Apache-2.0
"""openapi.yaml describes every route the daemon serves, with its methods."""
import glob
import os
import re

import yaml

from daemon import SRCDIR

METHODS = {"GET": "get", "HEAD": None, "POST": "post", "PUT": "put", "PATCH": "patch",
           "DELETE": "delete"}


def served_routes():
    routes = set()
    files = [os.path.join(SRCDIR, "api", "routes.c")] + \
        sorted(glob.glob(os.path.join(SRCDIR, "api", "routes_*.inc")))
    for path in files:
        with open(path) as f:
            for method, pattern in re.findall(r'\{TT_METHOD_(\w+), "([^"]+)"', f.read()):
                routes.add((method, pattern.replace("+}", "}")))
    return routes


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
