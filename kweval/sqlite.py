"""SQLite files several writers share (the judgments, the run history): one way to open, lock and say what failed.

Every write is one `BEGIN IMMEDIATE` transaction (SQLite takes the write lock at its start, so writers queue,
waiting up to a busy time, instead of one overwriting the other), in WAL mode (readers never block the writer).
A connection is opened per call and closed after it, so nothing is held between calls and a store is safe to share
between threads and processes.  Stdlib only.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_SECONDS = 30.0  # how long a writer waits for another one before the database counts as locked


def connect(path: Path, read_only: bool = False, busy: float = BUSY_SECONDS) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) that waits `busy` seconds for the write lock;
    read-only: the file must exist (a WAL file in a read-only folder is read as it is on disk)."""
    if read_only:
        if not path.is_file():
            raise FileNotFoundError(str(path))
        try:
            con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=busy)
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return con
        except sqlite3.OperationalError:
            return sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True, timeout=busy)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path, timeout=busy, isolation_level=None)
    con.execute(f"PRAGMA busy_timeout = {int(busy * 1000)}")
    return con


def use_wal(con: sqlite3.Connection, busy: float = BUSY_SECONDS) -> None:
    """The file in WAL mode.  Switching is done once, by whichever writer comes first: SQLite answers "locked" at
    once (no busy wait) to writers switching a new file together, so a switch that meets one is tried again
    until the file is in WAL mode or `busy` seconds have passed."""
    deadline = time.monotonic() + busy
    while True:
        try:
            if con.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
                return
            con.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


@contextmanager
def write_transaction(con: sqlite3.Connection, busy: float = BUSY_SECONDS) -> Iterator[sqlite3.Connection]:
    """One write transaction on `con` (WAL, then BEGIN IMMEDIATE: the write lock first, so no lost update), committed
    when the block ends, rolled back when it raises; the connection is closed either way."""
    try:
        use_wal(con, busy)
        con.execute("BEGIN IMMEDIATE")
        yield con
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise
    finally:
        con.close()


def database_reason(exc: Exception, what: str, busy: float = BUSY_SECONDS) -> str:
    """What went wrong with the `what` database ("judgments", "runs"), in words: locked, read-only, full, damaged."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return f"the {what} database is locked by another writer (waited {busy:g} s); nothing was written"
    if "readonly" in text or "read-only" in text:
        return f"the {what} database is read-only; nothing was written"
    if "full" in text:
        return f"the disk holding the {what} database is full; nothing was written"
    if "not a database" in text or "malformed" in text or "no such table" in text or "no such column" in text:
        return f"not a kweval {what} database, or damaged ({text})"
    return f"cannot use the {what} database ({text})"
