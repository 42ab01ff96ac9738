"""The run history: one SQLite file of recorded evaluations, their per-review tables beside it as Parquet.

A run is one `BEGIN IMMEDIATE` transaction (`kweval.sqlite`, WAL, as the judgments store): several processes
recording at once queue for the write lock and lose nothing.  A per-review table of more than `INLINE_ROWS` rows
is a Parquet file in the folder `<database>-scores/` beside the database, written whole before the run's row
(`kweval.files`), named in it with its SHA-256, and checked on every read; a smaller one is the same Parquet bytes in
the row.  A failed write leaves the store as it was: the file written for it is removed again.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from kweval import sqlite
from kweval.cachedir import cache_dir
from kweval.files import replace_file
from kweval.runs.run import RUN_FIELDS, RunInfo

KIND = "kweval runs"  # meta 'kind': a SQLite file of anything else is refused
SCHEMA_VERSION = "1"
INLINE_ROWS = 2000  # per-review tables up to this many rows stay in the database
SUMMARY_COLUMNS = ["model", "movie", "metric", "value", "ci_low", "ci_high"]
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    {", ".join(f"{name} TEXT" for name in RUN_FIELDS)},
    scores_file TEXT, scores_blob BLOB, scores_sha256 TEXT NOT NULL, scores_bytes INTEGER NOT NULL,
    PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS runs_time ON runs (time);
CREATE TABLE IF NOT EXISTS summary (
    run_id TEXT NOT NULL, model TEXT NOT NULL, movie TEXT NOT NULL, metric TEXT NOT NULL,
    value REAL, ci_low REAL, ci_high REAL,
    PRIMARY KEY (run_id, movie, model, metric)
);
"""


_INSERT_RUN = (
    f"INSERT INTO runs ({', '.join(RUN_FIELDS)}, scores_file, scores_blob, scores_sha256, scores_bytes) "
    f"VALUES ({', '.join('?' * (len(RUN_FIELDS) + 4))})"
)
_INSERT_SUMMARY = (
    "INSERT INTO summary (run_id, model, movie, metric, value, ci_low, ci_high) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


class RunsError(Exception):
    """A runs store that cannot be used (damaged, foreign, locked, read-only, full), or a run that cannot be found or
    read: printed as one `kweval: SOURCE: REASON` line."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source, self.reason = source, reason


def default_path() -> Path:
    """The store used unless one is named: `$KWEVAL_RUNS`, else `runs/runs.sqlite` in the kweval cache's folder
    (`kweval.cachedir`, beside the judgments)."""
    env = os.environ.get("KWEVAL_RUNS", "").strip()
    return Path(env).expanduser() if env else cache_dir() / "runs" / "runs.sqlite"


def table_bytes(scores: pd.DataFrame) -> bytes:
    """A per-review table as Parquet bytes (zstd), the form it is stored and checksummed in."""
    buffer = io.BytesIO()
    scores.to_parquet(buffer, index=False, compression="zstd")
    return buffer.getvalue()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class RunStore:
    """A runs database at `path`: `add`, `runs`, `get`, `scores`, `summary`, `delete`, each call its own connection."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        if self.path.is_dir():
            raise RunsError(str(self.path), "is a folder, not a runs database")

    @property
    def scores_dir(self) -> Path:
        """The folder of the per-review tables too large for the database: `<database>-scores/` beside it."""
        return self.path.with_name(self.path.name + "-scores")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, the schema made (or checked: a foreign file is refused) inside it."""
        with _guarded(str(self.path), "write"):
            if self.path.is_file() and self.path.stat().st_size:  # refused before anything (WAL mode) is written
                con = sqlite.connect(self.path, read_only=True)
                try:
                    if _tables(con):  # none yet: another writer is making the store; its transaction decides
                        _check_kind(con, str(self.path))
                finally:
                    con.close()
            with sqlite.write_transaction(sqlite.connect(self.path)) as con:
                _ensure_schema(con, str(self.path))
                yield con

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection to an existing store (checked to be a runs database); no file: an empty store."""
        with _guarded(str(self.path), "read"):
            con = sqlite.connect(self.path, read_only=True)
            try:
                _check_kind(con, str(self.path))
                yield con
            finally:
                con.close()

    def add(self, info: RunInfo, scores: pd.DataFrame, summary: pd.DataFrame) -> RunInfo:
        """Record one run: its per-review table (`scores`) and its summary (`SUMMARY_COLUMNS`, long form) in one
        transaction; returns `info` as stored.  Nothing is left behind when it fails."""
        data = table_bytes(scores)
        digest = sha256(data)
        inline = len(scores) <= INLINE_ROWS
        file = None if inline else self.scores_dir / f"{info.id}.parquet"
        written = False
        try:
            with self._write() as con:  # the write lock first: the id is checked and the file written under it
                if con.execute("SELECT 1 FROM runs WHERE id = ?", (info.id,)).fetchone():
                    raise RunsError(str(self.path), f"a run with id {info.id} is already recorded")
                if file is not None:
                    file.parent.mkdir(parents=True, exist_ok=True)
                    written = True
                    _write_table(file, data)
                row = [*info.row(), None if file is None else file.name, data if inline else None, digest, len(data)]
                con.execute(_INSERT_RUN, row)
                con.executemany(_INSERT_SUMMARY, _summary_rows(info.id, summary))
        except BaseException:
            if written and file is not None:  # the transaction did not commit: its file goes too
                file.unlink(missing_ok=True)
            raise
        return info

    def runs(self) -> list[RunInfo]:
        """Every recorded run, oldest first ([] when the store does not exist yet)."""
        if not self.path.exists():
            return []
        with self._read() as con:
            rows = con.execute(f"SELECT {', '.join(RUN_FIELDS)} FROM runs ORDER BY time, id").fetchall()
        return [RunInfo.from_row(row) for row in rows]

    def get(self, name: str) -> RunInfo:
        """The run named by its id (or a unique start of it) or its name (the latest run of that name)."""
        runs = self.runs()
        found = [r for r in runs if r.id == name] or [r for r in runs if r.name == name]
        if not found and len(name) >= 4:
            found = [r for r in runs if r.id.startswith(name)]
            if len(found) > 1:
                ids = ", ".join(r.id for r in found[:5])
                raise RunsError(str(self.path), f"run id {name!r} is ambiguous ({ids}); give more of it")
        if not found:
            hint = f" (runs: {', '.join(r.id for r in runs[-5:])})" if runs else " (no run is recorded)"
            raise RunsError(str(self.path), f"no run with id or name {name!r}{hint}")
        return found[-1]

    def scores(self, info: RunInfo) -> pd.DataFrame:
        """The run's per-review table, its checksum verified (a missing or altered Parquet file is a RunsError)."""
        with self._read() as con:
            row = con.execute(
                "SELECT scores_file, scores_blob, scores_sha256 FROM runs WHERE id = ?", (info.id,)
            ).fetchone()
        if row is None:
            raise RunsError(str(self.path), f"no run with id {info.id!r}")
        file, blob, digest = row
        source = str(self.path) if file is None else str(self.scores_dir / file)
        if file is None:
            data = bytes(blob)
        else:
            try:
                data = (self.scores_dir / file).read_bytes()
            except OSError as exc:
                reason = f"run {info.id}'s per-review table cannot be read ({exc.strerror or exc})"
                raise RunsError(source, reason + "; the run's summary is still listed") from None
        if sha256(data) != digest:
            raise RunsError(
                source,
                f"run {info.id}'s per-review table was altered (SHA-256 {sha256(data)[:12]}…, recorded "
                f"{digest[:12]}…); not used",
            )
        return pd.read_parquet(io.BytesIO(data))

    def summary(self, run_ids: Sequence[str] | None = None, movie: str = "ALL") -> pd.DataFrame:
        """The recorded summary rows of `movie` (ALL: every movie's reviews together) of the runs `run_ids` (None:
        every run): run_id plus `SUMMARY_COLUMNS`."""
        columns = ["run_id", *SUMMARY_COLUMNS]
        if not self.path.exists():
            return pd.DataFrame(columns=columns)
        query = f"SELECT {', '.join(columns)} FROM summary WHERE movie = ?"
        args: list[object] = [movie]
        if run_ids is not None:
            query += f" AND run_id IN ({', '.join('?' * len(run_ids))})"
            args += list(run_ids)
        with self._read() as con:
            return pd.read_sql_query(query, con, params=args)

    def delete(self, info: RunInfo) -> None:
        """Remove a run, its summary and its Parquet file (the file after the transaction: a failed delete keeps
        everything)."""
        with self._write() as con:
            row = con.execute("SELECT scores_file FROM runs WHERE id = ?", (info.id,)).fetchone()
            if row is None:
                raise RunsError(str(self.path), f"no run with id {info.id!r}")
            con.execute("DELETE FROM summary WHERE run_id = ?", (info.id,))
            con.execute("DELETE FROM runs WHERE id = ?", (info.id,))
        if row[0] is not None:
            (self.scores_dir / row[0]).unlink(missing_ok=True)


def _write_table(file: Path, data: bytes) -> None:
    """A per-review table's Parquet file, written whole or not at all; a failure is one RunsError."""
    try:
        replace_file(file, data)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise RunsError(
            str(file), f"cannot write the run's per-review table ({reason}); nothing was recorded"
        ) from None


@contextmanager
def _guarded(source: str, action: str) -> Iterator[None]:
    """SQLite and file-system errors of the block as one RunsError (`kweval.sqlite.database_reason`)."""
    try:
        yield
    except RunsError:
        raise
    except (sqlite3.Error, pd.errors.DatabaseError) as exc:
        raise RunsError(source, sqlite.database_reason(exc, "runs")) from None
    except OSError as exc:
        if isinstance(exc, FileNotFoundError) and action == "read":
            raise RunsError(source, "no such runs database (record one with kweval evaluate --record)") from None
        reason = exc.strerror or str(exc)
        raise RunsError(source, f"cannot {action} the runs database ({reason}); nothing was written") from None


def _tables(con: sqlite3.Connection) -> set[str]:
    return {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _ensure_schema(con: sqlite3.Connection, source: str) -> None:
    """Make the tables of a new store; refuse a database that is not one (another program's, another version's)."""
    tables = _tables(con)
    if tables and "meta" not in tables:
        raise RunsError(source, f"not a kweval runs database (it holds {', '.join(sorted(tables))}); not changed")
    if not tables:
        for statement in _SCHEMA.strip().split(";"):
            if statement.strip():
                con.execute(statement)
        con.executemany("INSERT INTO meta VALUES (?, ?)", [("kind", KIND), ("schema", SCHEMA_VERSION)])
    _check_kind(con, source)


def _check_kind(con: sqlite3.Connection, source: str) -> None:
    try:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.OperationalError:
        meta = {}
    if meta.get("kind") != KIND:
        raise RunsError(source, "not a kweval runs database (another program's SQLite file); not changed")
    if meta.get("schema") != SCHEMA_VERSION:
        raise RunsError(source, f"a runs database of another kweval version (schema {meta.get('schema')}); not changed")


def _summary_rows(run_id: str, summary: pd.DataFrame) -> list[tuple]:
    """(run id, model, movie, metric, value, low, high) rows, NaN as NULL."""
    frame = summary[SUMMARY_COLUMNS].astype(object).where(summary[SUMMARY_COLUMNS].notna(), None)
    return [(run_id, str(m), str(mv), str(k), v, lo, hi) for m, mv, k, v, lo, hi in frame.itertuples(index=False)]


def encode(value: object) -> str:
    """A run field as stored: JSON for lists and mappings, the text itself otherwise."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
