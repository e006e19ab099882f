# SPDX-License-Identifier: Apache-2.0
"""Request framing at the HTTP edge, over raw sockets (RFC 9112 sections 2,
5 and 6): every request whose length or header section two HTTP parsers could
read differently (a proxy's and the daemon's) is refused with 400 and the
connection closed, so a body can never be answered as a second request; a
repeated security or framing header is refused, not resolved; valid pipelined
requests are answered in order; a client that half-closes after its request
gets its answer and then the daemon's FIN (docs/operations.md, "Behind a
proxy"). Framing does not depend on the backend: these pass on every one.

Every read has a bound (LIMIT) that is a failure bound, not a timing
assertion: a refused request's connection is closed as soon as the answer is
written."""
import json
import re
import socket

import pytest

from daemon import Daemon, stop_clean

TOKEN = "framing-token-0123456789abcdef"
LIMIT = 5.0
STATUS_LINE = re.compile(rb"HTTP/1\.[01] (\d{3}) ")
# A whole second request, as a smuggler hides it in a body. /healthz answers
# it without a token, so if it were ever parsed it would be answered.
SMUGGLED = b"GET /healthz?smuggled=1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: smuggled\r\n\r\n"
AUTH = b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("framing")
    token = tmp / "token"
    token.write_text(TOKEN + "\n")
    cfg = tmp / "partners.json"
    cfg.write_text(json.dumps({"partners": {"acme": {
        "role_arn": "arn:aws:iam::111111111111:role/tabletheory-acme", "region": "us-east-1"}}}))
    dm = Daemon("--auth-token-file", str(token), "--config", str(cfg))
    yield dm
    stop_clean(dm)


def exchange(d, data, shut_wr=False):
    """Sends `data` on a new connection and reads until the daemon closes it
    or LIMIT passes. Returns (list of (status, headers, body), closed)."""
    replies, closed, _ = exchange_raw(d, data, shut_wr)
    return parse_replies(replies), closed


def exchange_raw(d, data, shut_wr=False):
    s = socket.create_connection((d.host, d.port))
    s.settimeout(LIMIT)
    if shut_wr:
        # Corked, the request and the FIN leave in one segment, so the
        # daemon reads both at once, as from a client on another host.
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
    s.sendall(data)
    if shut_wr:
        s.shutdown(socket.SHUT_WR)
    raw, closed = b"", False
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            raw += chunk
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed = True  # counted, but the tests require the answer too
    s.close()
    return raw, closed, None


def parse_replies(raw):
    out = []
    while raw:
        m = STATUS_LINE.match(raw)
        assert m, raw[:200]
        head, _, rest = raw.partition(b"\r\n\r\n")
        hdrs = {}
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            hdrs[k.strip().lower().decode()] = v.strip().decode()
        # libmicrohttpd's own refusals end at the close, without a length.
        n = int(hdrs.get("content-length", len(rest)))
        out.append((int(m.group(1)), hdrs, rest[:n]))
        raw = rest[n:]
    return out


def refused(d, data, field=None, status=400, envelope=True):
    """The request is answered once, with `status`, and the connection is
    closed: nothing after the header section is read as a request."""
    replies, closed = exchange(d, data)
    assert [r[0] for r in replies] == [status], replies
    assert closed, "the connection stayed open"
    st, hdrs, body = replies[0]
    if envelope:
        assert hdrs.get("content-type") == "application/json", hdrs
        err = json.loads(body)
        assert err["error"]["code"] == "ValidationError", err
        assert err["request_id"] == hdrs["x-request-id"], (err, hdrs)
        if field is not None:
            assert err["error"]["details"].get("field") == field, err
        assert hdrs.get("connection", "").lower() == "close", hdrs
    return replies[0]


def refused_by_http_layer(d, data, status=400):
    """libmicrohttpd's own refusal (a short HTML body; 0.9.75 writes its
    header block twice): the status, a close, and nothing else answered."""
    raw, closed, _ = exchange_raw(d, data)
    m = STATUS_LINE.match(raw)
    assert m and int(m.group(1)) == status, raw[:300]
    assert closed, "the connection stayed open"
    assert b"smuggled" not in raw and b" 200 " not in raw, raw


def req(head, body=b""):
    return head + b"\r\n" + body


GET = b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
POST = b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
MODELS = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n"


# ---- the smuggling cases ---------------------------------------------------

def test_two_content_lengths_are_refused(d):
    refused(d, req(POST + b"Content-Length: 0\r\nContent-Length: %d\r\n" % len(SMUGGLED),
                   SMUGGLED), "Content-Length")


def test_two_equal_content_lengths_are_refused(d):
    refused(d, req(POST + b"Content-Length: 2\r\ncontent-length: 2\r\n", b"{}"),
            "Content-Length")


def test_space_before_the_colon_is_refused(d):
    refused(d, req(POST + b"Content-Length : %d\r\n" % len(SMUGGLED), SMUGGLED))


def test_tab_before_the_colon_is_refused(d):
    refused(d, req(POST + b"Content-Length\t: %d\r\n" % len(SMUGGLED), SMUGGLED))


def test_obs_fold_hiding_a_content_length_is_refused(d):
    refused(d, req(POST + b"X-Pad: a\r\n Content-Length: %d\r\n" % len(SMUGGLED), SMUGGLED))


def test_obs_fold_of_any_value_is_refused(d):
    refused(d, req(GET + b"X-Pad: a\r\n\tb\r\n") + SMUGGLED)


def test_chunked_with_content_length_is_refused(d):
    body = b"0\r\n\r\n" + SMUGGLED
    refused(d, req(POST + b"Transfer-Encoding: chunked\r\nContent-Length: %d\r\n" % len(body),
                   body), "Transfer-Encoding")


def test_content_length_with_chunked_is_refused(d):
    refused(d, req(POST + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
                   b"0\r\n\r\n") + SMUGGLED, "Transfer-Encoding")


@pytest.mark.parametrize("te", [b"gzip", b"chunked, chunked", b"identity", b"gzip, chunked",
                                b"xchunked", b""])
def test_a_transfer_encoding_other_than_chunked_is_refused(d, te):
    refused(d, req(POST + b"Transfer-Encoding: " + te + b"\r\n", b"0\r\n\r\n") + SMUGGLED,
            "Transfer-Encoding")


def test_two_transfer_encodings_are_refused(d):
    refused(d, req(POST + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
                   b"0\r\n\r\n") + SMUGGLED, "Transfer-Encoding")


def test_transfer_encoding_in_http_1_0_is_refused(d):
    refused(d, req(b"POST /healthz HTTP/1.0\r\nContent-Type: application/json\r\n"
                   b"Transfer-Encoding: chunked\r\n", b"0\r\n\r\n") + SMUGGLED,
            "Transfer-Encoding")


def test_nul_in_the_token_is_refused(d):
    replies, _ = exchange(d, req(MODELS + AUTH))
    assert [r[0] for r in replies] == [200], replies  # the clean token is served
    refused(d, req(MODELS + b"Authorization: Bearer " + TOKEN.encode() + b"\0junk\r\n"))


def test_nul_in_the_partner_is_refused(d):
    refused(d, req(MODELS + AUTH + b"X-TableTheory-Partner: acme\0evil\r\n"))


def test_a_field_line_without_a_colon_is_refused(d):
    refused_by_http_layer(d, req(GET + b"X-No-Colon\r\n") + SMUGGLED)


def test_nul_in_a_header_name_is_refused(d):
    # The HTTP layer finds no colon before the NUL: its own 400.
    refused_by_http_layer(d, req(GET + b"X-A\0B: 1\r\n") + SMUGGLED)


@pytest.mark.parametrize("ctl", [b"\x01", b"\x1f", b"\x7f", b"\r", b"\x0b"])
def test_control_characters_in_values_are_refused(d, ctl):
    refused(d, req(GET + b"X-Pad: a" + ctl + b"b\r\n") + SMUGGLED, "X-Pad")


def test_tab_and_obs_text_in_values_are_accepted(d):
    replies, closed = exchange(d, req(GET + b"X-Pad: a\tb \xe9\xff\r\nConnection: close\r\n"))
    assert [r[0] for r in replies] == [200] and closed, replies


@pytest.mark.parametrize("name", [b"X@Y", b"X Y", b"X(Y)", b"X/Y", b"\xe9t\xe9", b"X\"Y", b""])
def test_header_names_must_be_tokens(d, name):
    refused(d, req(GET + name + b": 1\r\n") + SMUGGLED)


def test_bare_lf_line_ends_are_refused(d):
    refused(d, b"GET /healthz HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n" + SMUGGLED)
    refused(d, b"GET /healthz HTTP/1.1\nHost: x\r\n\r\n" + SMUGGLED)
    refused(d, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\n" + SMUGGLED)


@pytest.mark.parametrize("line", [b"GET  /healthz HTTP/1.1", b"GET /healthz\0x HTTP/1.1",
                                  b"GET /healthz?a=1\0x HTTP/1.1", b"GE\0T /healthz HTTP/1.1",
                                  b"GET /healthz?a\tb HTTP/1.1"])
def test_a_malformed_request_line_is_refused(d, line):
    replies, closed = exchange(d, line + b"\r\nHost: x\r\n\r\n" + SMUGGLED)
    assert [r[0] for r in replies] == [400] and closed, replies


def test_a_query_is_still_served(d):
    replies, _ = exchange(d, b"GET /healthz?a=1&b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert [r[0] for r in replies] == [200], replies
    replies, _ = exchange(d, b"GET /healthz? HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert [r[0] for r in replies] == [200], replies


def test_a_missing_host_is_refused(d):
    replies, closed = exchange(d, b"GET /healthz HTTP/1.1\r\n\r\n" + SMUGGLED)
    assert [r[0] for r in replies] == [400] and closed, replies


def test_a_space_in_the_request_target_is_refused(d):
    replies, closed = exchange(d, b"GET /healthz x HTTP/1.1\r\nHost: x\r\n\r\n" + SMUGGLED)
    assert [r[0] for r in replies] == [400] and closed, replies


# ---- repeated headers ----------------------------------------------------------

def test_two_partners_are_refused(d):
    refused(d, req(MODELS + AUTH + b"X-TableTheory-Partner: acme\r\n"
                   b"X-TableTheory-Partner: evil\r\n"), "X-TableTheory-Partner")


def test_two_tokens_are_refused(d):
    refused(d, req(MODELS + AUTH + AUTH), "Authorization")
    refused(d, req(MODELS + AUTH + b"authorization: Bearer nope\r\n"), "Authorization")


@pytest.mark.parametrize("name,field", [
    (b"If-Match", "If-Match"), (b"if-none-match", "If-None-Match"),
    (b"CONTENT-TYPE", "Content-Type"), (b"host", "Host"),
    (b"x-tabletheory-partner", "X-TableTheory-Partner")])
def test_repeated_security_headers_are_refused(d, name, field):
    refused(d, req(MODELS + AUTH + name + b": *\r\n" + name + b": *\r\n"), field)


def test_other_repeated_headers_are_kept(d):
    replies, _ = exchange(d, req(GET + b"Accept: a\r\nAccept: b\r\nX-Pad: 1\r\nx-pad: 2\r\n"
                                 b"Connection: close\r\n"))
    assert [r[0] for r in replies] == [200], replies


# ---- Content-Length values -----------------------------------------------------

@pytest.mark.parametrize("value", [b"+5", b"5,5", b"-1", b"5 5", b"0x5", b"5.0", b""])
def test_malformed_content_lengths_are_refused(d, value):
    # libmicrohttpd refuses these itself, with its own short body.
    refused_by_http_layer(d, req(POST + b"Content-Length: " + value + b"\r\n", b"{}ab\r\n")
                          + SMUGGLED)


def test_a_content_length_past_64_bits_is_refused(d):
    refused_by_http_layer(d, req(POST + b"Content-Length: 99999999999999999999999\r\n")
                          + SMUGGLED, 413)


def test_the_all_ones_content_length_is_refused(d):
    # 2^64 - 1 is what libmicrohttpd takes for "length unknown".
    refused(d, req(POST + b"Content-Length: 18446744073709551615\r\n") + SMUGGLED,
            "Content-Length")


def test_a_content_length_over_the_body_limit_is_413(d):
    # A route that takes a body, so the limit is what refuses it: answered
    # before any body byte is sent.
    replies, closed = exchange(d, req(b"POST /v1/models/Any/items HTTP/1.1\r\nHost: x\r\n" + AUTH +
                                      b"Content-Type: application/json\r\n"
                                      b"Content-Length: 18446744073709551614\r\n"))
    assert [r[0] for r in replies] == [413] and closed, replies
    assert json.loads(replies[0][2])["error"]["code"] == "PayloadTooLarge"


# ---- what stays allowed --------------------------------------------------------

def test_pipelined_requests_are_answered_in_order(d):
    one = req(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: first\r\n")
    two = req(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Request-Id: second\r\n" + AUTH)
    three = req(POST + b"X-Request-Id: third\r\nContent-Length: 2\r\n", b"{}")
    four = req(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: fourth\r\n"
               b"Connection: close\r\n")
    replies, closed = exchange(d, one + two + three + four)
    assert [(r[0], r[1]["x-request-id"]) for r in replies] == [
        (200, "first"), (200, "second"), (405, "third"), (200, "fourth")], replies
    assert closed


def test_chunked_bodies_are_read_and_the_connection_kept(d):
    body = b"2\r\n{}\r\n0\r\n\r\n"
    replies, closed = exchange(d, req(POST + b"Transfer-Encoding: Chunked\r\n"
                                      b"X-Request-Id: chunked\r\n", body) +
                               req(GET + b"X-Request-Id: after\r\nConnection: close\r\n"))
    assert [(r[0], r[1]["x-request-id"]) for r in replies] == [
        (405, "chunked"), (200, "after")], replies


def test_http_1_0_without_host_is_served(d):
    replies, closed = exchange(d, b"GET /healthz HTTP/1.0\r\n\r\n")
    assert [r[0] for r in replies] == [200] and closed, replies


# ---- limits --------------------------------------------------------------------

def test_too_many_headers_get_431_and_a_close(d):
    many = b"".join(b"X-%d: 1\r\n" % i for i in range(2000))
    replies, closed = exchange(d, req(GET + many) + SMUGGLED)
    assert [r[0] for r in replies] == [431] and closed, replies


def test_an_oversized_header_value_gets_431_and_a_close(d):
    replies, closed = exchange(d, req(GET + b"X: " + b"a" * 40000 + b"\r\n") + SMUGGLED)
    assert [r[0] for r in replies] == [431] and closed, replies


def test_many_headers_within_the_buffer_are_served(d):
    many = b"".join(b"X-%d: 1\r\n" % i for i in range(200))
    replies, _ = exchange(d, req(GET + many + b"Connection: close\r\n"))
    assert [r[0] for r in replies] == [200], replies


# ---- half-closed clients -------------------------------------------------------

def test_half_closed_client_gets_its_answer_and_a_close(d):
    replies, closed = exchange(d, req(GET), shut_wr=True)
    assert [r[0] for r in replies] == [200], replies
    assert closed, "the daemon kept a half-closed connection open"


def test_half_closed_pipeline_is_answered_then_closed(d):
    one = req(GET + b"X-Request-Id: one\r\n")
    two = req(MODELS + AUTH + b"X-Request-Id: two\r\n")
    replies, closed = exchange(d, one + two, shut_wr=True)
    assert [(r[0], r[1]["x-request-id"]) for r in replies] == [(200, "one"), (200, "two")]
    assert closed


def test_half_closed_client_of_a_refused_request_is_closed(d):
    replies, closed = exchange(d, req(POST + b"Content-Length: 2\r\n", b"{}"), shut_wr=True)
    assert [r[0] for r in replies] == [405] and closed, replies



def test_half_close_after_a_later_request_is_closed(d):
    # After the first request the check runs on the idle connection (the
    # deadline sweep, at most a second later): still well inside LIMIT.
    s = socket.create_connection((d.host, d.port))
    s.settimeout(LIMIT)
    s.sendall(req(GET + b"X-Request-Id: first\r\n"))
    first = b""
    while b"\r\n\r\n" not in first or not first.endswith(b"}"):
        chunk = s.recv(65536)
        assert chunk, first
        first += chunk
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
    s.sendall(req(GET + b"X-Request-Id: second\r\n"))
    s.shutdown(socket.SHUT_WR)
    raw, closed = b"", False
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            raw += chunk
    except socket.timeout:
        pass
    s.close()
    replies = parse_replies(first + raw)
    assert [(r[0], r[1]["x-request-id"]) for r in replies] == [(200, "first"), (200, "second")]
    assert closed, "the daemon kept a half-closed connection open"
