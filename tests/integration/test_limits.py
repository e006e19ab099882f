# SPDX-License-Identifier: Apache-2.0
"""DynamoDB's size and shape limits over HTTP (docs/errors.md, DynamoDB
limits): key values of 2048/1024 bytes, index keys, document nesting and
attribute name length. Each limit is tried exactly at the bound (accepted)
and one past it (refused with 400 ValidationError carrying DynamoDB's text),
on memory and on the DynamoDB peers; a peer that does not enforce a limit
skips that case and says so."""
import base64

from daemon import skip_on
from items_fixtures import assert_error, b64, b64url, item_path, mdaemon  # noqa: F401

HASH_MSG = ("One or more parameter values were invalid: Size of hashkey has exceeded the "
            "maximum size limit of2048 bytes")
RANGE_MSG = ("One or more parameter values were invalid: Aggregated size of all range keys has "
             "exceeded the size limit of 1024 bytes")
NEST_MSG = "Nesting Levels have exceeded supported limits"
NAME_MSG = "Attribute name is too large, must be less than 65536 bytes"


def short(got):
    """A body for an assertion message, cut: some hold 64 KiB names."""
    return str(got)[:300]


def refused(d, method, path, body, text):
    status, hdrs, got = d.json(method, path, body=body)
    assert status == 400, (status, short(got))
    err = assert_error(status, hdrs, got, 400, "ValidationError")
    assert text in err["message"], short(got)
    assert err["retryable"] is False, short(got)
    return err


def created(d, path, body):
    status, _, got = d.json("POST", path, body=body)
    assert status == 201, (status, short(got))
    return got


# ---- key values ------------------------------------------------------------


def test_partition_key_of_2048_bytes_is_the_limit(mdaemon):
    key = "p" * 2048
    created(mdaemon, "/v1/models/Wallet/items", {"id": key})
    status, _, got = mdaemon.json("GET", item_path("Wallet", key))
    assert status == 200 and got["id"] == key, got
    refused(mdaemon, "POST", "/v1/models/Wallet/items", {"id": "q" * 2049}, HASH_MSG)


@skip_on("moto", "moto checks key sizes on writes only and answers a long key's read with 404")
def test_reading_a_partition_key_over_2048_bytes_is_refused(mdaemon):
    # DynamoDB refuses the read itself: such a key cannot exist.
    status, hdrs, got = mdaemon.json("GET", item_path("Wallet", "r" * 2049))
    err = assert_error(status, hdrs, got, 400, "ValidationError")
    assert HASH_MSG in err["message"], got


@skip_on("dynalite", "dynalite counts a string key's UTF-16 code units, not its UTF-8 bytes")
def test_multibyte_partition_key_counts_utf8_bytes(mdaemon):
    # 1024 two-byte characters are 2048 bytes; one more ASCII byte is over.
    created(mdaemon, "/v1/models/Wallet/items", {"id": "\u00e9" * 1024})
    refused(mdaemon, "POST", "/v1/models/Wallet/items", {"id": "\u00e9" * 1024 + "x"}, HASH_MSG)


def test_sort_key_of_1024_bytes_is_the_limit(mdaemon):
    sk = "s" * 1024
    created(mdaemon, "/v1/models/Event/items", {"tenant": "t-limits", "sk": sk})
    status, _, got = mdaemon.json("GET", item_path("Event", "t-limits", sk))
    assert status == 200 and got["sk"] == sk, got
    refused(mdaemon, "POST", "/v1/models/Event/items", {"tenant": "t-limits", "sk": "s" * 1025},
            RANGE_MSG)


def test_binary_partition_key_counts_raw_bytes(mdaemon):
    # 2048 raw bytes are 2732 characters of base64: the bytes are what counts.
    key = bytes(range(256)) * 8
    assert len(key) == 2048
    created(mdaemon, "/v1/models/Blob/items", {"bid": b64(key), "label": "max"})
    status, _, got = mdaemon.json("GET", "/v1/models/Blob/items/" + b64url(key))
    assert status == 200 and base64.b64decode(got["bid"]) == key, got
    refused(mdaemon, "POST", "/v1/models/Blob/items", {"bid": b64(key + b"\x00")}, HASH_MSG)


@skip_on("dynalite", "dynalite checks key sizes of the table's keys only, not of index keys")
def test_index_partition_key_has_the_partition_limit(mdaemon):
    created(mdaemon, "/v1/models/Event/items",
            {"tenant": "t-gsi", "sk": "1", "kind": "k" * 2048, "score": 1})
    refused(mdaemon, "POST", "/v1/models/Event/items",
            {"tenant": "t-gsi", "sk": "2", "kind": "k" * 2049, "score": 1}, HASH_MSG)
    status, _, got = mdaemon.json("GET", item_path("Event", "t-gsi", "2"))
    assert status == 404, short(got)


# ---- documents -------------------------------------------------------------


def nested(levels):
    """A list attribute whose string leaf sits at `levels` (the attribute
    itself is level 1, as DynamoDB counts)."""
    value = "leaf"
    for _ in range(levels - 1):
        value = [value]
    return value


@skip_on("dynalite", "dynalite does not limit document nesting")
@skip_on("moto", "moto does not limit document nesting")
def test_documents_nest_at_most_32_levels(mdaemon):
    created(mdaemon, "/v1/models/Wallet/items", {"id": "w-nest-32", "history": nested(32)})
    status, _, got = mdaemon.json("GET", item_path("Wallet", "w-nest-32"))
    assert status == 200 and got["history"] == nested(32), short(got)
    refused(mdaemon, "POST", "/v1/models/Wallet/items", {"id": "w-nest-33", "history": nested(33)},
            NEST_MSG)
    status, _, got = mdaemon.json("GET", item_path("Wallet", "w-nest-33"))
    assert status == 404, short(got)


@skip_on("dynalite", "dynalite does not limit attribute name length")
@skip_on("moto", "moto does not limit attribute name length")
def test_attribute_names_are_shorter_than_64_kib(mdaemon):
    created(mdaemon, "/v1/models/Loose/items", {"id": "l-name-ok", "n" * 65535: 1})
    refused(mdaemon, "POST", "/v1/models/Loose/items", {"id": "l-name-long", "n" * 65536: 1},
            NAME_MSG)
    status, _, got = mdaemon.json("GET", item_path("Loose", "l-name-long"))
    assert status == 404, short(got)

