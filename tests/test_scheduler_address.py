"""`--scheduler` addresses: malformed ones, a silent port, a web server's port, a closed port are one line each,
within the time limit, with real sockets on localhost (issue 22); the good path (real dask): tests/test_distributed.py.
"""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from kweval.cli import main
from kweval.scale import address, distributed

pytest.importorskip("distributed")

MALFORMED = {
    "tcp://": "no host",
    "tcp://127.0.0.1": "no port",
    "127.0.0.1": "no port",
    "http://127.0.0.1:8080": "http:// is not a dask protocol",
    "inproc://x": "inside this process",
    "tls://127.0.0.1:8786": "tls:// needs certificates",
    "tcp://127.0.0.1:99999": "is not a number from 1 to 65535",
    "tcp://127.0.0.1:80/../x": "not a scheduler address",
    "tcp://host\nkweval: forged:1": "not a scheduler address",
}


@contextmanager
def listener(serve: Callable[[socket.socket], None]) -> Iterator[int]:
    """A localhost port whose every accepted connection is handed to `serve` on a thread; closed after the test."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    done = threading.Event()
    held: list[socket.socket] = []

    def loop() -> None:
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        done.set()
        thread.join(5)
        server.close()
        for conn in held:
            conn.close()


def silent(conn: socket.socket) -> None:
    time.sleep(30)  # accepts and never answers (closed earlier by the test's end)


def http_answer(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def _run(capsys, *extra: str) -> tuple[int, list[str], float]:
    start = time.perf_counter()
    status = main(["evaluate", "--models", "yake", *extra])
    elapsed = time.perf_counter() - start
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return status, [line for line in err.splitlines() if line.strip()], elapsed


@pytest.mark.parametrize("spec", sorted(MALFORMED))
def test_malformed_address_is_one_usage_line(spec, capsys):
    status, lines, _ = _run(capsys, "--scheduler", spec)
    assert status == 2 and len(lines) == 1, lines
    assert lines[0].startswith("kweval: error: --scheduler ") and MALFORMED[spec] in lines[0]


def test_good_addresses_pass_the_form_check():
    for good in ("tcp://10.0.0.5:8786", "10.0.0.5:8786", "tcp://[::1]:8786", "ws://host:80", "TCP://h-1.example:1"):
        assert distributed.parse_scheduler(good) == (good, None)


def test_a_port_that_never_answers_is_one_line_within_the_limit(capsys):
    with listener(silent) as port:
        status, lines, elapsed = _run(capsys, "--scheduler", f"tcp://127.0.0.1:{port}", "--scheduler-timeout", "1")
    assert status == 2 and len(lines) == 1 and "no answer within 1 s" in lines[0], lines
    assert elapsed < 10


def test_a_web_server_that_answers_is_refused_before_dask_reads_it(capsys):
    with listener(http_answer) as port:
        status, lines, elapsed = _run(capsys, "--scheduler", f"127.0.0.1:{port}", "--scheduler-timeout", "5")
    assert status == 2 and len(lines) == 1 and "a web server answers there" in lines[0], lines
    assert elapsed < 10


def test_a_real_http_server_is_one_line_no_huge_allocation(capsys):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:  # the server runs in this process: its log is not kweval's stderr
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        status, lines, elapsed = _run(capsys, "--scheduler", f"tcp://127.0.0.1:{port}", "--scheduler-timeout", "1")
    finally:
        server.shutdown()
        server.server_close()
    assert status == 2 and len(lines) == 1 and "a web server answers there" in lines[0], lines
    assert elapsed < 10


def test_a_closed_port_is_one_line(capsys):
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]
    status, lines, _ = _run(capsys, "--scheduler", f"tcp://127.0.0.1:{port}", "--scheduler-timeout", "2")
    assert status == 2 and len(lines) == 1 and "cannot reach the dask scheduler" in lines[0], lines


def test_probe_accepts_a_dask_handshake_header():
    def dask_like(conn: socket.socket) -> None:
        conn.sendall((58).to_bytes(8, "little") + b"\x01" * 8)

    with listener(dask_like) as port:
        address.probe("127.0.0.1", port, 2)  # no exception
    with listener(lambda conn: conn.sendall(b"\xff" * 8)) as port, pytest.raises(address.SchedulerAddressError):
        address.probe("127.0.0.1", port, 2)


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf"])
def test_scheduler_timeout_must_be_a_positive_number(value, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--scheduler", "local:1", "--scheduler-timeout", value])
    assert exit_.value.code == 2 and "--scheduler-timeout" in capsys.readouterr().err


def test_ucx_without_ucx_support_is_one_usage_line(capsys, monkeypatch):
    """dask dropped its UCX backend for a stub that cannot make a connector (TypeError from inside dask's Client,
    before any connection): without a UCX plugin the address is refused in one line.  With one installed (a backend
    that makes connectors), the form check passes."""
    from distributed.comm import registry

    status, lines, _ = _run(capsys, "--scheduler", "ucx://127.0.0.1:1")
    assert status == 2 and len(lines) == 1, lines
    assert "ucx:// needs UCX support for dask" in lines[0] and "TypeError" not in lines[0]

    class Plugin(registry.Backend):  # what a UCX plugin registers: a backend whose connector can be made
        def get_connector(self):
            return object()

        def get_listener(self, *args, **kwargs): ...
        def get_address_host(self, loc): ...
        def resolve_address(self, loc): ...
        def get_local_address_for(self, loc): ...

    monkeypatch.setitem(registry.backends, "ucx", Plugin())
    assert distributed.parse_scheduler("ucx://10.0.0.5:13337") == ("ucx://10.0.0.5:13337", None)
