"""A persistent, process-safe store of text embeddings (one SQLite file per model id).

Layout: ``cache_dir()/<sanitized model id>-<10 hex of sha256(model id)>.sqlite``;
``cache_dir()`` is ``$KWEVAL_CACHE_DIR`` when set, else
``platformdirs.user_cache_dir("kweval")/embeddings``.

Each row is keyed by the SHA-256 of the text exactly as it was embedded (kweval
embeds normalized keywords, METRICS.md §1, so this is the hash of the normalized
text; the store itself never rewrites a text, so a key always names the very
string whose vector it holds).  The first 8 bytes of the hash are the rowid
(so a row is one b-tree lookup and its 1.5 kB vector stays inline in the page);
the full hash is stored and compared on every read, so a rowid collision is a
miss, never a wrong vector.  A row holds the float32 vector as a little-endian
blob, its dimension and a CRC-32 over (hash, blob).

Safety:

- writes: one transaction per `put_many` call (``BEGIN IMMEDIATE`` … ``COMMIT``),
  WAL journal, ``synchronous=FULL``; a crash mid-write loses only the
  uncommitted batch;
- several processes: WAL lets readers run beside one writer; writers wait on
  ``busy_timeout`` and are retried with back-off on "database is locked";
  ``INSERT OR IGNORE`` makes concurrent writes of the same key harmless;
- damage: a file that is not a SQLite database, or that SQLite reports as
  malformed (e.g. truncated), is moved aside to ``<file>.corrupt-<timestamp>``
  and rebuilt empty (a `CacheCorruptionWarning` says so); a row whose length,
  dimension or checksum is wrong is deleted and reported as a miss, so it is
  recomputed and never returned.

This module imports neither torch nor sentence-transformers.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import sqlite3
import threading
import time
import warnings
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import numpy as np

__all__ = [
    "EmbeddingStore",
    "CacheCorruptionWarning",
    "cache_dir",
    "cache_info",
    "cache_clear",
    "store_path",
    "text_key",
]

SCHEMA_VERSION = "1"
SUFFIX = ".sqlite"
BUSY_TIMEOUT_S = 60.0
LOCK_RETRIES = 12
QUERY_CHUNK = 500  # keys per SELECT … IN (…); far below SQLite's variable limit

_SQLITE_MAGIC = b"SQLite format 3\x00"
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB (primary codes)
_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
# Connections inherited through fork(): never used nor closed in the child
# (closing could checkpoint/delete the parent's WAL), just kept referenced.
_ORPHANS: list[sqlite3.Connection] = []

T = TypeVar("T")


class CacheCorruptionWarning(UserWarning):
    """A store file or row was damaged; it was moved aside / dropped and will be recomputed."""


class _Corrupt(Exception):
    pass


# --------------------------------------------------------------------------- paths


def cache_dir() -> Path:
    """The folder holding the stores: ``$KWEVAL_CACHE_DIR`` or ``user_cache_dir("kweval")/embeddings``."""
    env = os.environ.get("KWEVAL_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser()
    try:
        from platformdirs import user_cache_dir

        base = Path(user_cache_dir("kweval"))
    except ImportError:  # platformdirs is an optional dependency: the XDG default
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kweval"
    return base / "embeddings"


def store_path(model_id: str, cache_dir: str | os.PathLike | None = None) -> Path:
    """The database file of `model_id`: sanitized id + short hash of the exact id."""
    folder = Path(cache_dir) if cache_dir is not None else globals()["cache_dir"]()
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id).strip("._-")[:80] or "model"
    digest = hashlib.sha256(model_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return folder / f"{safe}-{digest}{SUFFIX}"


def text_key(text: str) -> bytes:
    """SHA-256 of the text's UTF-8 bytes: the row key."""
    if not isinstance(text, str):
        raise TypeError(f"only strings can be cached, got {type(text).__name__}")
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _rowid(key: bytes) -> int:
    return int.from_bytes(key[:8], "big", signed=True)


def _checksum(key: bytes, blob: bytes) -> int:
    return zlib.crc32(blob, zlib.crc32(key))


def _sidecars(path: Path) -> list[Path]:
    return [path, Path(f"{path}-wal"), Path(f"{path}-shm")]


# --------------------------------------------------------------------------- errors


def _code(exc: BaseException) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def _is_corruption(exc: BaseException) -> bool:
    if isinstance(exc, _Corrupt):
        return True
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = _code(exc)
    if code is not None:
        return code in _CORRUPT_CODES
    msg = str(exc).lower()
    return "malformed" in msg or "not a database" in msg


def _is_busy(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = _code(exc)
    if code is not None:
        return code in _BUSY_CODES
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An advisory inter-process lock (POSIX flock); a no-op where unavailable."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(path, "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


# --------------------------------------------------------------------------- store


class EmbeddingStore:
    """Persistent text → float32 vector store for one embedding model.

    >>> store = EmbeddingStore("all-MiniLM-L6-v2", cache_dir=tmp)    # doctest: +SKIP
    >>> store.put_many(["scam"], np.ones((1, 3), np.float32))        # doctest: +SKIP
    >>> vectors, found = store.get_many(["scam", "fraud"])           # doctest: +SKIP
    >>> found, store.hits, store.misses                              # doctest: +SKIP
    (array([ True, False]), 1, 1)

    Counters on the object: ``hits`` / ``misses`` (per text looked up by
    `get_many`), ``dropped`` (damaged rows deleted), ``rebuilt`` (damaged
    files moved aside).  Safe to share between threads; each process opens
    its own connection (a store object carried through fork reconnects).
    """

    def __init__(self, model_id: str, cache_dir: str | os.PathLike | None = None):
        if not isinstance(model_id, str) or not model_id:
            raise ValueError("model_id must be a non-empty string")
        self.model_id = model_id
        self.path = store_path(model_id, cache_dir)
        self.hits = 0
        self.misses = 0
        self.dropped = 0
        self.rebuilt = 0
        self.quarantined: list[Path] = []
        self._dim: int | None = None
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._opened_inode: tuple[int, int] | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            self._connection()

    # ---------------------------------------------------------------- public

    @property
    def dim(self) -> int | None:
        """The vectors' dimension (None while the store is empty)."""
        with self._lock:
            self._connection()
            return self._dim

    def get_many(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Vectors for `texts`: (float32 [n, d] with zero rows for misses, found bool [n]).

        `d` is the store's dimension (0 while it is empty).  Damaged rows are
        deleted and reported as misses.
        """
        texts = list(texts)
        keys = [text_key(t) for t in texts]
        with self._lock:
            try:
                rows = self._retry(lambda: self._select(keys))
            except Exception as exc:
                if not _is_corruption(exc):
                    raise
                self._quarantine(str(exc))
                rows = {}
            good: dict[bytes, np.ndarray] = {}
            bad: list[int] = []
            want = {_rowid(k): k for k in keys}
            for rowid, (h, dim, crc, blob) in rows.items():
                key = want[rowid]
                if bytes(h) != key:
                    continue  # another text owns this rowid (64-bit collision): a miss
                blob = bytes(blob)
                if (
                    not isinstance(dim, int)
                    or dim <= 0
                    or (self._dim is not None and dim != self._dim)
                    or len(blob) != 4 * dim
                    or crc != _checksum(key, blob)
                ):
                    bad.append(rowid)
                    continue
                good[key] = np.frombuffer(blob, dtype="<f4")
            if bad:
                self._drop(bad)
            d = self._dim or (len(next(iter(good.values()))) if good else 0)
            out = np.zeros((len(texts), d), dtype=np.float32)
            found = np.zeros(len(texts), dtype=bool)
            for i, key in enumerate(keys):
                vec = good.get(key)
                if vec is not None:
                    out[i] = vec
                    found[i] = True
            n_found = int(found.sum())
            self.hits += n_found
            self.misses += len(texts) - n_found
            return out, found

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store `vectors[i]` under `texts[i]`, in one transaction; existing keys are kept."""
        texts = list(texts)
        vecs = np.asarray(vectors)
        if vecs.ndim != 2 or vecs.shape[0] != len(texts):
            raise ValueError(f"vectors must be [len(texts), d]; got shape {vecs.shape} for {len(texts)} text(s)")
        if not texts:
            return
        vecs = np.ascontiguousarray(vecs, dtype="<f4")
        if vecs.shape[1] == 0:
            raise ValueError("vectors must have at least one dimension")
        if not np.isfinite(vecs).all():
            raise ValueError("vectors contain NaN or infinite values; refusing to cache them")
        dim = int(vecs.shape[1])
        rows = {}
        for text, vec in zip(texts, vecs):
            key = text_key(text)
            blob = vec.tobytes()
            rows.setdefault(_rowid(key), (key, dim, _checksum(key, blob), blob))
        params = [(rowid, *row) for rowid, row in rows.items()]
        with self._lock:
            for attempt in range(2):
                try:
                    self._retry(lambda: self._insert(params, dim))
                    return
                except Exception as exc:
                    if not _is_corruption(exc) or attempt:
                        raise
                    self._quarantine(str(exc))

    def __len__(self) -> int:
        with self._lock:
            try:
                return int(self._retry(lambda: self._connection().execute("SELECT count(*) FROM embeddings").fetchone()[0]))
            except Exception as exc:
                if not _is_corruption(exc):
                    raise
                self._quarantine(str(exc))
                return 0

    def verify(self) -> int:
        """Full check: SQLite's ``quick_check`` and every row's length/checksum.

        A damaged file is moved aside and rebuilt; damaged rows are deleted.
        Returns the number of rows dropped (or of rows lost with the file).
        """
        with self._lock:
            try:
                conn = self._connection()
                res = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
                if res != ["ok"]:
                    raise _Corrupt("; ".join(map(str, res[:3])))
                bad = []
                for rowid, h, dim, crc, blob in conn.execute("SELECT rowid, h, dim, crc, vec FROM embeddings"):
                    blob = bytes(blob)
                    if (
                        not isinstance(dim, int)
                        or (self._dim is not None and dim != self._dim)
                        or len(blob) != 4 * dim
                        or crc != _checksum(bytes(h), blob)
                        or _rowid(bytes(h)) != rowid
                    ):
                        bad.append(rowid)
            except Exception as exc:
                if not _is_corruption(exc):
                    raise
                self._quarantine(str(exc))
                return -1
            if bad:
                self._drop(bad)
            return len(bad)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __enter__(self) -> "EmbeddingStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmbeddingStore({self.model_id!r}, path={str(self.path)!r}, hits={self.hits}, misses={self.misses})"

    # ---------------------------------------------------------------- internals

    def _connection(self) -> sqlite3.Connection:
        if self._pid != os.getpid():  # carried through fork: start afresh in this process
            if self._conn is not None:
                _ORPHANS.append(self._conn)
            self._conn = None
            self._pid = os.getpid()
        if self._conn is not None:
            return self._conn
        for attempt in range(3):
            try:
                self._conn = self._retry(self._open)
                return self._conn
            except Exception as exc:
                if not _is_corruption(exc) or attempt == 2:
                    raise
                self._quarantine(str(exc))
        raise AssertionError("unreachable")

    def _open(self) -> sqlite3.Connection:
        self._opened_inode = _inode(self.path)
        self._check_header()
        conn = sqlite3.connect(
            str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                # a new file: 8 KiB pages hold five 384-d rows (4 KiB pages only two); then WAL
                conn.execute("PRAGMA page_size=8192")
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            meta = self._read_meta(conn)
            if meta.get("schema") != SCHEMA_VERSION or meta.get("model_id") != self.model_id:
                if meta:
                    raise _Corrupt(f"unexpected metadata {meta!r}")
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
                    conn.execute(
                        "CREATE TABLE IF NOT EXISTS embeddings ("
                        " rowid INTEGER PRIMARY KEY, h BLOB NOT NULL, dim INTEGER NOT NULL,"
                        " crc INTEGER NOT NULL, vec BLOB NOT NULL)"
                    )
                    conn.executemany(
                        "INSERT OR IGNORE INTO meta (k, v) VALUES (?, ?)",
                        [("schema", SCHEMA_VERSION), ("model_id", self.model_id)],
                    )
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                meta = self._read_meta(conn)
                if meta.get("schema") != SCHEMA_VERSION or meta.get("model_id") != self.model_id:
                    raise _Corrupt(f"unexpected metadata {meta!r}")
            conn.execute("SELECT count(*) FROM (SELECT 1 FROM embeddings LIMIT 1)").fetchone()
            self._dim = int(meta["dim"]) if "dim" in meta else None
        except BaseException:
            conn.close()
            raise
        return conn

    @staticmethod
    def _read_meta(conn: sqlite3.Connection) -> dict[str, str]:
        has = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if not has:
            return {}
        return {k: v for k, v in conn.execute("SELECT k, v FROM meta")}

    def _check_header(self) -> None:
        """A non-empty file must start with SQLite's 100-byte header (catches files cut short or overwritten)."""
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(100)
        except FileNotFoundError:
            return
        if head and (len(head) < 100 or not head.startswith(_SQLITE_MAGIC)):
            raise _Corrupt("not a SQLite database (bad or truncated header)")

    def _retry(self, fn: Callable[[], T]) -> T:
        delay = 0.02
        for attempt in range(LOCK_RETRIES):
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or attempt == LOCK_RETRIES - 1:
                    raise
                time.sleep(delay * (1.0 + random.random()))
                delay = min(delay * 2, 2.0)
        raise AssertionError("unreachable")

    def _select(self, keys: list[bytes]) -> dict[int, tuple]:
        conn = self._connection()
        ids = list(dict.fromkeys(_rowid(k) for k in keys))
        rows: dict[int, tuple] = {}
        # one read transaction: a consistent snapshot across the chunks
        conn.execute("BEGIN")
        try:
            for start in range(0, len(ids), QUERY_CHUNK):
                chunk = ids[start : start + QUERY_CHUNK]
                marks = ",".join("?" * len(chunk))
                for rowid, h, dim, crc, vec in conn.execute(
                    f"SELECT rowid, h, dim, crc, vec FROM embeddings WHERE rowid IN ({marks})", chunk
                ):
                    rows[rowid] = (h, dim, crc, vec)
        except BaseException:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            raise
        conn.execute("COMMIT")
        return rows

    def _insert(self, params: list[tuple], dim: int) -> None:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("INSERT OR IGNORE INTO meta (k, v) VALUES ('dim', ?)", (str(dim),))
            stored = int(conn.execute("SELECT v FROM meta WHERE k = 'dim'").fetchone()[0])
            if stored != dim:
                raise ValueError(f"{self.path} holds {stored}-dimensional vectors; got {dim}")
            conn.executemany("INSERT OR IGNORE INTO embeddings (rowid, h, dim, crc, vec) VALUES (?, ?, ?, ?, ?)", params)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self._dim = dim

    def _drop(self, rowids: list[int]) -> None:
        warnings.warn(
            f"kweval cache {self.path}: {len(rowids)} damaged row(s) (length/checksum) dropped; they will be recomputed",
            CacheCorruptionWarning,
            stacklevel=3,
        )

        def delete() -> None:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("DELETE FROM embeddings WHERE rowid = ?", [(r,) for r in rowids])
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

        try:
            self._retry(delete)
        except Exception as exc:
            if not _is_corruption(exc):
                raise
            self._quarantine(str(exc))
        self.dropped += len(rowids)

    def _quarantine(self, reason: str) -> None:
        """Move the damaged file (and its WAL) aside as ``*.corrupt-<timestamp>``; the next use rebuilds it empty."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None
        self._dim = None
        stamp = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}-{random.randrange(16**4):04x}"
        moved = None
        with _file_lock(Path(f"{self.path}.lock")):
            # Another process may have replaced the file already: then there is nothing to move.
            if self._opened_inode is None or _inode(self.path) == self._opened_inode:
                for part in _sidecars(self.path):
                    if not part.exists():
                        continue
                    if part.name.endswith("-shm"):
                        part.unlink(missing_ok=True)  # shared-memory index: derived, never worth keeping
                        continue
                    target = Path(f"{part}.corrupt-{stamp}")
                    os.replace(part, target)
                    if part == self.path:
                        moved = target
        self._opened_inode = None
        self.rebuilt += 1
        if moved is not None:
            self.quarantined.append(moved)
        warnings.warn(
            f"kweval cache {self.path} is damaged ({reason}); "
            + (f"moved aside to {moved.name} and rebuilt empty" if moved else "already rebuilt by another process"),
            CacheCorruptionWarning,
            stacklevel=3,
        )


# --------------------------------------------------------------------------- folder-level


def _stores(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.endswith(SUFFIX) and p.is_file())


def cache_info(cache_dir: str | os.PathLike | None = None) -> list[dict]:
    """One dict per store file: model_id, entries, dimension, bytes (with WAL), path; `error` if unreadable."""
    folder = Path(cache_dir) if cache_dir is not None else globals()["cache_dir"]()
    out = []
    for path in _stores(folder):
        info = {
            "model_id": None,
            "entries": None,
            "dimension": None,
            "bytes": sum(p.stat().st_size for p in _sidecars(path) if p.exists()),
            "path": str(path),
        }
        try:
            conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=BUSY_TIMEOUT_S)
            try:
                meta = {k: v for k, v in conn.execute("SELECT k, v FROM meta")}
                info["model_id"] = meta.get("model_id")
                info["dimension"] = int(meta["dim"]) if "dim" in meta else None
                info["entries"] = int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])
            finally:
                conn.close()
        except sqlite3.Error as exc:
            info["error"] = str(exc)
        out.append(info)
    return out


def cache_clear(cache_dir: str | os.PathLike | None = None, model_id: str | None = None) -> int:
    """Delete every store (or only `model_id`'s), with its WAL, lock and moved-aside copies; returns how many stores were removed."""
    folder = Path(cache_dir) if cache_dir is not None else globals()["cache_dir"]()
    if not folder.is_dir():
        return 0
    targets = [store_path(model_id, folder)] if model_id is not None else _stores(folder)
    removed = 0
    for path in targets:
        if path.exists():
            removed += 1
        for part in [*_sidecars(path), Path(f"{path}.lock")]:
            part.unlink(missing_ok=True)
        for leftover in folder.glob(f"{_glob_escape(path.name)}*.corrupt-*"):
            leftover.unlink(missing_ok=True)
    if model_id is None:
        for leftover in folder.glob(f"*{SUFFIX}*.corrupt-*"):
            leftover.unlink(missing_ok=True)
    return removed


def _glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)
