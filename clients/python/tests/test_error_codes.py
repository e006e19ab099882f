# SPDX-License-Identifier: Apache-2.0
"""The client's error classes against the daemon's list of codes (the ErrorCode enum of
openapi.yaml), so a code added to the daemon fails here until the client has a class."""
import os

import pytest

import tabletheoryd as tt
from tabletheoryd.errors import BY_CODE, ConflictError, NotFoundError, RetryableError, \
    TableTheoryError, from_envelope

OPENAPI = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                       "openapi.yaml")


def openapi_error_codes():
    """The `enum:` list under components/schemas/ErrorCode, read line by line (the test
    dependencies hold no YAML parser, and the block is a plain list of names)."""
    codes, in_schema, in_enum, indent = [], False, False, 0
    with open(OPENAPI, encoding="utf-8") as f:
        for line in f:
            stripped = line.strip()
            depth = len(line) - len(line.lstrip())
            if not in_schema:
                in_schema = stripped == "ErrorCode:"
                indent = depth
            elif stripped and depth <= indent:
                break  # the next schema
            elif stripped == "enum:":
                in_enum = True
            elif in_enum and stripped.startswith("- "):
                codes.append(stripped[2:].strip().strip("'\""))
            elif in_enum and stripped:
                break  # the enum ended
    return codes


CODES = openapi_error_codes()


def test_openapi_enum_was_read():
    assert "ValidationError" in CODES and "Internal" in CODES, CODES
    assert len(CODES) == len(set(CODES))


@pytest.mark.parametrize("code", CODES)
def test_every_daemon_code_has_its_own_class(code):
    cls = BY_CODE.get(code)
    assert cls is not None, "no error class for the daemon's code %s" % code
    assert cls.code == code and cls.__name__ == code
    assert cls not in (TableTheoryError, NotFoundError, ConflictError, RetryableError)
    assert getattr(tt, code) is cls, "tabletheoryd.%s is not exported" % code
    body = {"error": {"code": code, "message": "m", "retryable": False, "details": {}},
            "request_id": "r"}
    err = from_envelope(400, body, {}, "r")
    assert type(err) is cls and err.code == code


def test_no_class_for_a_code_the_daemon_does_not_have():
    assert sorted(set(BY_CODE) - set(CODES)) == []
