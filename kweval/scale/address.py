"""A `--scheduler` address checked before dask sees it: its form, then whether a dask scheduler answers there.

dask's Client is given only what it can use: ``tcp://HOST:PORT`` (or
``HOST:PORT``), ``tls://HOST:PORT`` with certificates in dask's
configuration, ``ucx://`` where UCX support is installed, or ``ws://``/``wss://``
addresses with a port.
``tcp://``, a host without a port, ``http://…`` and ``inproc://…`` (in this
process only) are usage errors.

Then `probe` looks at the port with a plain socket and a time limit: a dask
scheduler writes its handshake as soon as it accepts a connection (a frame
header: a small unsigned 64-bit count), so silence for the whole limit (a
port that accepts and never answers; a web server waiting for a request is
then asked one ``HEAD /`` to name it) or bytes that are no such header
(``HTTP/1.1 …``, which dask would read as a frame of 3 EiB and try to
allocate) are refused in one line, before dask connects.  Stdlib only.
"""

from __future__ import annotations

import re
import socket
import struct

__all__ = ["DEFAULT_TIMEOUT_S", "SchedulerAddressError", "check_address", "probe"]

DEFAULT_TIMEOUT_S = 10.0
_MAX_HEADER = 64 << 20  # a handshake's first 8 bytes (frame count or bytes) are far below this
_ADDRESS = re.compile(
    r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?(?P<host>\[[0-9A-Fa-f:.%]*\]|[A-Za-z0-9._-]*)(?::(?P<port>[^/]*))?/?"
)
_SCHEMES = {"tcp", "tls", "ws", "wss", "ucx"}


class SchedulerAddressError(ValueError):
    """The address is no dask scheduler's (its form), or nothing usable answers there (the probe)."""


def check_address(address: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a scheduler address; SchedulerAddressError naming what is wrong with it."""
    match = _ADDRESS.fullmatch(address)
    usage = "use tcp://HOST:PORT (tls://HOST:PORT with certificates), or local[:N]"
    if match is None:
        raise SchedulerAddressError(f"not a scheduler address; {usage}")
    scheme = (match["scheme"] or "tcp").lower()
    host, port = match["host"].strip("[]"), match["port"]
    if scheme == "inproc":
        raise SchedulerAddressError(f"inproc:// reaches only a scheduler inside this process; {usage}")
    if scheme not in _SCHEMES:
        raise SchedulerAddressError(f"{scheme}:// is not a dask protocol; {usage}")
    if not host:
        raise SchedulerAddressError(f"no host; {usage}")
    if port is None or port == "":
        raise SchedulerAddressError(f"no port (a dask scheduler listens on 8786 by default: {scheme}://{host}:8786)")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise SchedulerAddressError(f"port {port!r} is not a number from 1 to 65535")
    if scheme == "ucx" and not _ucx_usable():
        raise SchedulerAddressError(
            "ucx:// needs UCX support for dask (the distributed-ucxx package and UCX), which is not installed here; "
            "use tcp://HOST:PORT"
        )
    if scheme == "tls" and not _tls_configured():
        raise SchedulerAddressError(
            "tls:// needs certificates in dask's configuration (distributed.comm.tls.ca-file, "
            "distributed.comm.tls.client.cert and .key); none are set"
        )
    return scheme, host, int(port)


def _ucx_usable() -> bool:
    """Whether dask can make a ucx:// connection here: a UCX backend whose connector can be made (recent dask keeps
    only a stub that cannot: TypeError) and, for dask's own former backend, UCX-Py installed."""
    import importlib.util
    import warnings

    try:
        from distributed.comm.registry import get_backend

        backend = get_backend("ucx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            backend.get_connector()
    except Exception:  # no such backend (ValueError), the stub (TypeError, FutureWarning), no dask (ImportError)
        return False
    return type(backend).__module__ != "distributed.comm.ucx" or importlib.util.find_spec("ucp") is not None


def _tls_configured() -> bool:
    import dask

    tls = dask.config.get("distributed.comm.tls", default={}) or {}
    client = tls.get("client") or {}
    return bool(tls.get("ca-file") and client.get("cert"))


WEB_SERVER = "a web server answers there, not a dask scheduler (its dashboard's port, perhaps: the scheduler's is 8786)"


def _speaks_http(sock: socket.socket, wait: float) -> bool:
    """Whether a peer that sent no dask handshake answers an HTTP request (asked only once it is known not to be
    a dask scheduler, so no scheduler ever reads it)."""
    try:
        sock.settimeout(wait)
        sock.sendall(b"HEAD / HTTP/1.0\r\n\r\n")
        return sock.recv(5) == b"HTTP/"
    except OSError:
        return False


def probe(host: str, port: int, timeout: float) -> None:
    """Connect and wait up to `timeout` s for a dask handshake's first bytes; SchedulerAddressError or OSError
    (refused, unreachable) otherwise."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        head = b""
        try:
            while len(head) < 8:
                chunk = sock.recv(8 - len(head))
                if not chunk:
                    break
                head += chunk
        except TimeoutError:
            if _speaks_http(sock, min(timeout, 1.0)):
                raise SchedulerAddressError(WEB_SERVER) from None
            raise SchedulerAddressError(
                f"no answer within {timeout:g} s: no dask scheduler listens there, or it is too slow "
                "(--scheduler-timeout SECONDS)"
            ) from None
    if head.startswith(b"HTTP/") or head[:1] == b"<":
        raise SchedulerAddressError(WEB_SERVER)
    if len(head) < 8:
        raise SchedulerAddressError("the connection was closed before a dask handshake")
    (size,) = struct.unpack("<Q", head)
    if not 0 < size <= _MAX_HEADER:
        raise SchedulerAddressError("what answers there does not speak dask's protocol")
