# SPDX-License-Identifier: Apache-2.0
"""systemd integration: READY=1 / STOPPING=1 / WATCHDOG=1 over $NOTIFY_SOCKET
and socket activation through LISTEN_FDS."""
import socket

from daemon import Daemon, STATUS_RE, raw_request


def notify_socket(tmp_path):
    path = str(tmp_path / "notify.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(5)
    return s, path


def test_ready_and_stopping_arrive(fresh_daemon, tmp_path):
    s, path = notify_socket(tmp_path)
    d = fresh_daemon(env={"NOTIFY_SOCKET": path})
    msg = s.recv(4096).decode()
    assert msg.splitlines()[0] == "READY=1"
    d.stop()
    assert s.recv(4096).decode() == "STOPPING=1"
    s.close()


def test_abstract_notify_socket(fresh_daemon):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    name = "\0ttd-notify-test-%d" % id(s)
    s.bind(name)
    s.settimeout(5)
    fresh_daemon(env={"NOTIFY_SOCKET": "@" + name[1:]})
    assert s.recv(4096).decode().startswith("READY=1")
    s.close()


def test_watchdog_pings(fresh_daemon, tmp_path):
    s, path = notify_socket(tmp_path)
    fresh_daemon(env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"})
    got = [s.recv(4096).decode() for _ in range(3)]
    assert got[0].startswith("READY=1")
    assert got[1] == "WATCHDOG=1" and got[2] == "WATCHDOG=1"
    s.close()


def test_socket_activation(tmp_path):
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(16)
    port = lsock.getsockname()[1]
    import os
    # systemd passes the socket as fd 3 and names the receiving pid; a shell
    # that execs the daemon keeps its pid, so it can state LISTEN_PID itself.
    fd = lsock.fileno()
    wrapper = ["sh", "-c", 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$@"', "sh"]
    d = Daemon(listen=None, pass_fds=(3,), wrapper=wrapper, preexec_fn=lambda: os.dup2(fd, 3))
    try:
        assert d.address == "127.0.0.1:%d" % port
        c = socket.create_connection(("127.0.0.1", port))
        c.sendall(raw_request("GET", "/healthz"))
        assert STATUS_RE.match(c.recv(4096)).group(1) == b"200"
        c.close()
        lsock.close()
        d.stop()
    finally:
        d.kill()
        os.environ.pop("LISTEN_FDS", None)
