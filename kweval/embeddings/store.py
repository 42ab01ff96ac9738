"""A persistent store of per-text vectors (embeddings, VADER values): one SQLite file per *variant*.

A variant is (canonical model id, backend, precision), e.g.
(``sentence-transformers/all-MiniLM-L6-v2``, ``onnx``, ``fp32``): vectors of one
backend or precision are never served for another, and the aliases of one
model share a store.  Files live in ``cache_dir()`` (``$KWEVAL_CACHE_DIR``,
else ``platformdirs.user_cache_dir("kweval")/embeddings``).

A row is keyed by the SHA-256 of the exact text (its first 8 bytes are the
rowid, the full hash is compared on read, so a collision is a miss) and holds
the vector blob with a CRC-32 over (hash, blob).  Writes are one transaction
per `put_many` (WAL, ``synchronous=FULL``), so a crash loses only that batch.

The store is only ever a shortcut, hence one policy:

- any SQLite or OS error (full disk, file-size limit, read-only folder, a lock
  held too long) switches the store off for the rest of the run: lookups miss,
  writes are skipped, and one note says why (``store.notes``);
- damage (not a database, pages that ``PRAGMA quick_check`` finds malformed
  when an existing file is opened, metadata or tables of another schema) moves
  the file aside to ``<file>.corrupt-<stamp>`` and starts it afresh; a row whose
  checksum fails is deleted and recomputed, never returned.

Imports neither torch nor sentence-transformers.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from kweval.cachedir import cache_dir
from kweval.embeddings.models import canonical_model_id
from kweval.files import not_a_file_reason

__all__ = ["EmbeddingStore", "cache_dir", "cache_info", "cache_clear", "store_path", "text_key", "describe"]

SCHEMA_VERSION = "2"
SUFFIX = ".sqlite"
BUSY_TIMEOUT_S = 30.0
QUERY_CHUNK = 500  # keys per SELECT … IN (…): far below SQLite's variable limit
_MAGIC = b"SQLite format 3\x00"
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_COLUMNS = ["rowid", "h", "dim", "crc", "vec"]
_CHECKED: set[tuple] = set()  # files already quick-checked by this process (path, inode, size, mtime)
T = TypeVar("T")


class _Damaged(Exception):
    """The file is not a store of this variant (damaged, truncated or of another schema)."""


def _folder(folder: str | os.PathLike | None) -> Path:
    return Path(folder) if folder is not None else cache_dir()


def store_path(
    model_id: str, folder: str | os.PathLike | None = None, backend: str = "torch", precision: str = "fp32"
) -> Path:
    """The file of one variant: readable name + 10 hex of the hash of (model id, backend, precision)."""
    ident = f"{model_id}|{backend}|{precision}"
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id).strip("._-")[-60:] or "model"
    digest = hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return _folder(folder) / f"{safe}-{backend}-{precision}-{digest}{SUFFIX}"


def text_key(text: str) -> bytes:
    """SHA-256 of the text's UTF-8 bytes: the row key."""
    if not isinstance(text, str):
        raise TypeError(f"only strings can be cached, got {type(text).__name__}")
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _rowid(key: bytes) -> int:
    return int.from_bytes(key[:8], "big", signed=True)


def _checksum(key: bytes, blob: bytes) -> int:
    return zlib.crc32(blob, zlib.crc32(key))


def _dtype(precision: str) -> np.dtype:
    return np.dtype("<f8" if precision == "fp64" else "<f4")


def _row_sound(key: bytes, row_dim: int, crc: int, blob: bytes, dim: int, width: int) -> bool:
    """Whether a stored row is what was written for `key`: the store's dimension, the size and the checksum."""
    return row_dim == dim and len(blob) == width and crc == _checksum(key, blob)


def _is_damage(exc: BaseException) -> bool:
    if isinstance(exc, _Damaged):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _CORRUPT_CODES
    return isinstance(exc, sqlite3.DatabaseError) and any(
        w in str(exc).lower() for w in ("malformed", "not a database")
    )


def _check_file(
    conn: sqlite3.Connection, path: Path, meta_wanted: dict[str, str] | None, force: bool = False
) -> dict[str, str]:
    """Raise `_Damaged` unless `path` is a sound store (of the wanted metadata); return its metadata."""
    with open(path, "rb") as fh:
        head = fh.read(100)
    if head and (len(head) < 100 or not head.startswith(_MAGIC)):
        raise _Damaged("not a SQLite database (bad or truncated header)")
    st = path.stat()
    identity = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
    if force or identity not in _CHECKED:  # a full page check reads every page: once per file state and process
        problems = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            raise _Damaged("malformed: " + "; ".join(map(str, problems[:2])))
        _CHECKED.add(identity)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        return {}
    if not {"meta", "embeddings"} <= tables:
        raise _Damaged(f"foreign schema (tables {', '.join(sorted(tables))})")
    meta = {str(k): str(v) for k, v in conn.execute("SELECT k, v FROM meta")}
    columns = [r[1] for r in conn.execute("PRAGMA table_info(embeddings)")]
    if meta.get("schema") != SCHEMA_VERSION or columns != _COLUMNS:
        raise _Damaged(f"foreign schema (version {meta.get('schema')!r}, columns {columns})")
    for k, v in (meta_wanted or {}).items():
        if meta.get(k) != v:
            raise _Damaged(f"holds {k} {meta.get(k)!r}, not {v!r}")
    return meta


class EmbeddingStore:
    """Text → vector store of one variant; never raises for a storage problem (see the module's policy).

    Counters: ``hits`` / ``misses`` (texts looked up), ``dropped`` (damaged rows
    deleted), ``moved`` (damaged files moved aside); ``notes``: one line per
    problem met, ``disabled``: why the store is off for this run (or None).
    `on_note`, when given, is also called with each note as it happens.
    """

    def __init__(
        self,
        model_id: str,
        cache_dir: str | os.PathLike | None = None,
        backend: str = "torch",
        precision: str = "fp32",
        on_note: Callable[[str], None] | None = None,
    ):
        if not isinstance(model_id, str) or not model_id:
            raise ValueError("model_id must be a non-empty string")
        self.model_id = canonical_model_id(model_id)
        self.backend, self.precision = backend, precision
        self.dtype = _dtype(precision)
        self.path = store_path(self.model_id, cache_dir, backend, precision)
        self.meta = {"schema": SCHEMA_VERSION, "model_id": self.model_id, "backend": backend, "precision": precision}
        self.hits = self.misses = self.dropped = self.moved = 0
        self.notes: list[str] = []
        self.disabled: str | None = None
        self._on_note = on_note
        self._dim: int | None = None
        self._conn: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._lock = threading.RLock()
        with self._lock:
            self._guard(self._connection, None)

    # ------------------------------------------------------------------ public

    @property
    def dim(self) -> int | None:
        """The vectors' dimension (None while the store is empty or off)."""
        return self._dim

    def get_many(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(vectors [n, d] with zero rows for misses, found bool [n]); d is 0 while nothing is known."""
        keys = [text_key(t) for t in texts]
        ids = [_rowid(key) for key in keys]
        with self._lock:
            nothing: dict[int, tuple] = {}
            rows = self._guard(lambda: self._select(ids), nothing)
            if rows and self._dim is None:  # another process may have stored the first vectors since we opened
                self._dim = self._guard(self._stored_dim, None)
            dim = self._dim or 0
            width = dim * self.dtype.itemsize
            hit_rows: list[int] = []
            blobs: list[bytes] = []
            bad: set[int] = set()
            for i, (key, rowid) in enumerate(zip(keys, ids)):
                row = rows.get(rowid)
                if row is None or bytes(row[0]) != key:
                    continue  # a miss, or another text owns this rowid (a 64-bit collision): a miss
                _, row_dim, crc, blob = row
                blob = bytes(blob)
                if not _row_sound(key, row_dim, crc, blob, dim, width):
                    bad.add(rowid)
                    continue
                hit_rows.append(i)
                blobs.append(blob)
            if bad:
                self._guard(lambda: self._write("DELETE FROM embeddings WHERE rowid = ?", [(r,) for r in bad]), None)
                self.dropped += len(bad)
                self._note(f"{len(bad)} damaged row(s) of {self.path.name} dropped; they are recomputed")
            found = np.zeros(len(keys), dtype=bool)
            found[hit_rows] = True
            # one writable buffer for every hit, not an array per row; it is the answer itself when all are hits
            # (no second copy of what can be tens of MB: pages first touched cost time, on DNLP ~70 ms per copy)
            hits = np.frombuffer(bytearray().join(blobs), dtype=self.dtype).reshape(len(hit_rows), dim)
            if len(hit_rows) == len(keys):
                out = hits
            else:
                out = np.zeros((len(keys), dim), dtype=self.dtype)
                out[hit_rows] = hits
            self.hits += int(found.sum())
            self.misses += len(keys) - int(found.sum())
            return out, found

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store `vectors[i]` under `texts[i]` in one transaction (existing keys are kept); a no-op when off."""
        vecs = np.asarray(vectors)
        if vecs.ndim != 2 or vecs.shape[0] != len(texts) or (len(texts) and vecs.shape[1] == 0):
            raise ValueError(f"vectors must be [len(texts), d > 0]; got shape {vecs.shape} for {len(texts)} text(s)")
        if not np.isfinite(vecs).all():
            raise ValueError("vectors contain NaN or infinite values; refusing to cache them")
        if not len(texts):
            return
        vecs = np.ascontiguousarray(vecs, dtype=self.dtype)
        dim = int(vecs.shape[1])
        params = []
        for text, vec in zip(texts, vecs):
            key, blob = text_key(text), vec.tobytes()
            params.append((_rowid(key), key, dim, _checksum(key, blob), blob))
        with self._lock:
            if self._dim is None:
                self._dim = self._guard(self._stored_dim, None)
            if self._dim is not None and dim != self._dim:
                raise ValueError(f"{self.path} holds {self._dim}-dimensional vectors; got {dim}")
            sql = "INSERT OR IGNORE INTO embeddings (rowid, h, dim, crc, vec) VALUES (?, ?, ?, ?, ?)"
            meta = [("dim", str(dim))] if self._dim is None else []
            if self._guard(lambda: self._write(sql, params, meta), False):
                self._dim = dim

    def sibling(self, backend: str, precision: str) -> EmbeddingStore:
        """The store of another variant of this model in the same folder, telling its notes to the same listener."""
        return EmbeddingStore(self.model_id, self.path.parent, backend, precision, on_note=self._on_note)

    def __len__(self) -> int:
        with self._lock:
            return int(
                self._guard(lambda: self._connection().execute("SELECT count(*) FROM embeddings").fetchone()[0], 0)
            )

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __enter__(self) -> EmbeddingStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmbeddingStore({self.model_id!r}, {self.backend}/{self.precision}, path={str(self.path)!r})"

    # ------------------------------------------------------------------ the policy

    def _guard(self, action: Callable[[], T], fallback: T) -> T:
        """Run `action`; damage → move the file aside and start afresh (once); any other storage error → off."""
        for attempt in range(2):
            if self.disabled:
                return fallback
            try:
                return action()
            except (sqlite3.Error, OSError, _Damaged) as exc:
                if _is_damage(exc) and attempt == 0 and self._move_aside(str(exc)):
                    continue
                self._switch_off(exc)
        return fallback

    def _note(self, message: str) -> None:
        line = message
        self.notes.append(line)
        if self._on_note is not None:
            self._on_note(line)

    def _switch_off(self, exc: BaseException) -> None:
        self.close()
        self.disabled = f"{type(exc).__name__}: {exc}"
        self._note(f"not usable ({exc}; store {self.path}); this run goes on without the cache")

    def _move_aside(self, reason: str) -> bool:
        self.close()
        self._dim = None
        stamp = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"
        target = Path(f"{self.path}.corrupt-{stamp}")
        try:
            if os.path.lexists(self.path):  # a file, or a folder or link in its place
                os.replace(self.path, target)
            for side in ("-wal", "-shm"):
                Path(f"{self.path}{side}").unlink(missing_ok=True)
        except OSError:
            return False
        self.moved += 1
        self._note(f"{self.path.name} was damaged ({reason}); moved aside to {target.name} and rebuilt")
        return True

    # ------------------------------------------------------------------ SQLite

    def _connection(self) -> sqlite3.Connection:
        if self._pid != os.getpid():  # carried through fork: never touch the parent's connection
            self._conn, self._pid = None, os.getpid()
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(self.path) and not self.path.is_file():
                raise _Damaged(f"not a file: {not_a_file_reason(self.path)}")
            existed = self.path.exists() and self.path.stat().st_size > 0
            conn = sqlite3.connect(
                str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            try:
                meta = _check_file(conn, self.path, self.meta) if existed else {}
                if not meta:
                    self._create(conn)
                    meta = {k: v for k, v in conn.execute("SELECT k, v FROM meta")}
                conn.execute("PRAGMA synchronous=FULL")
            except BaseException:
                conn.close()
                raise
            self._conn, self._dim = conn, (int(meta["dim"]) if "dim" in meta else None)
        return self._conn

    def _stored_dim(self) -> int | None:
        row = self._connection().execute("SELECT v FROM meta WHERE k = 'dim'").fetchone()
        return int(row[0]) if row else None

    def _create(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA page_size=8192")  # 8 KiB pages hold five 384-d rows (4 KiB only two)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (rowid INTEGER PRIMARY KEY, h BLOB NOT NULL,"
            " dim INTEGER NOT NULL, crc INTEGER NOT NULL, vec BLOB NOT NULL)"
        )
        conn.executemany("INSERT OR IGNORE INTO meta (k, v) VALUES (?, ?)", self.meta.items())
        conn.execute("COMMIT")
        _check_file(conn, self.path, self.meta)  # another process may have created it differently

    def _select(self, rowids: list[int]) -> dict[int, tuple]:
        conn = self._connection()
        ids = sorted(set(rowids))  # in rowid order, each chunk reads its pages once (random order: ~1.7x slower)
        rows: dict[int, tuple] = {}
        for start in range(0, len(ids), QUERY_CHUNK):
            chunk = ids[start : start + QUERY_CHUNK]
            sql = f"SELECT rowid, h, dim, crc, vec FROM embeddings WHERE rowid IN ({','.join('?' * len(chunk))})"
            rows.update((r[0], r[1:]) for r in conn.execute(sql, chunk))
        return rows

    def _write(self, sql: str, params: list[tuple], meta: Sequence[tuple[str, str]] = ()) -> bool:
        """Insert the rows (and meta entries) in one transaction; True once committed."""
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR IGNORE INTO meta (k, v) VALUES (?, ?)", meta)
            conn.executemany(sql, params)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return True


# --------------------------------------------------------------------------- the folder


def _stores(folder: Path) -> list[Path]:
    """Every entry named like a store: files, and folders or links in a store's place (damage to name)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.endswith(SUFFIX))


def _damaged_rows(conn: sqlite3.Connection, meta: dict[str, str]) -> int:
    """The rows a lookup would drop as damaged (`_row_sound`, and a key that is not the row's own)."""
    dim = int(meta.get("dim", 0))
    width = dim * _dtype(meta.get("precision", "fp32")).itemsize
    bad = 0
    for rowid, h, row_dim, crc, blob in conn.execute("SELECT rowid, h, dim, crc, vec FROM embeddings"):
        key = bytes(h)
        bad += _rowid(key) != rowid or not _row_sound(key, row_dim, crc, bytes(blob), dim, width)
    return bad


def cache_info(cache_dir: str | os.PathLike | None = None) -> list[dict]:
    """One dict per store: model_id, backend, precision, entries, dimension, bytes, path, `damage` (None when
    sound: every page and every row checked) and `bad_rows` (rows whose checksum fails, dropped when next read)."""
    out = []
    for path in _stores(_folder(cache_dir)):
        info: dict = {
            "model_id": None,
            "backend": None,
            "precision": None,
            "entries": None,
            "dimension": None,
            "bytes": sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.is_file()),
            "path": str(path),
            "damage": None if path.is_file() else f"not a file: {not_a_file_reason(path)}",
            "bad_rows": 0,
        }
        if info["damage"] is None:
            _inspect(path, info)
        out.append(info)
    return out


def _inspect(path: Path, info: dict) -> None:
    """Fill `info` from the store file at `path`, read-only; its damage, if any, in `info["damage"]`."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
        try:
            meta = _check_file(conn, path, None, force=True)
            info.update(model_id=meta.get("model_id"), backend=meta.get("backend"), precision=meta.get("precision"))
            info["dimension"] = int(meta["dim"]) if "dim" in meta else None
            info["entries"] = int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]) if meta else 0
            info["bad_rows"] = _damaged_rows(conn, meta) if meta else 0
        finally:
            conn.close()
    except (sqlite3.Error, OSError, _Damaged, ValueError) as exc:
        info["damage"] = str(exc)


def describe(info: dict) -> str:
    """One line for `kweval cache info`: what a store holds, or what is wrong with it."""
    if info["damage"]:
        return f"DAMAGED {info['path']}: {info['damage']} (moved aside and rebuilt on the next run that uses it)"
    if info["model_id"] is None:  # a file of no bytes or no tables: what an interrupted first write leaves
        return f"EMPTY {info['path']}: no vector and no metadata yet (made a store by the next run that uses it)"
    held = (
        f"{info['model_id']} [{info['backend']}/{info['precision']}]: {info['entries']} vector(s), "
        f"dim {info['dimension']}, {info['bytes'] / 1e6:.1f} MB, {info['path']}"
    )
    if info.get("bad_rows"):
        return f"DAMAGED {held}: {info['bad_rows']} vector(s) fail their checksum (recomputed when next used)"
    return held


def cache_clear(cache_dir: str | os.PathLike | None = None, model_id: str | None = None) -> int:
    """Delete every store (or only those of `model_id`) with their WAL and moved-aside copies; returns stores
    removed."""
    folder = _folder(cache_dir)
    if not folder.is_dir():
        return 0
    wanted = None
    if model_id is not None:
        wanted = canonical_model_id(model_id)
    removed = 0
    for info in cache_info(folder):
        if wanted is not None and info["model_id"] != wanted:
            continue
        path = Path(info["path"])
        removed += 1
        for part in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            _remove(part)
    if model_id is None:
        for leftover in folder.glob(f"*{SUFFIX}.corrupt-*"):
            _remove(leftover)
    return removed


def _remove(path: Path) -> None:
    """Delete a file, a link, or a folder in a store's place (what damage can leave)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
