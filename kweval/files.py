"""Files written whole or not at all (the one definition of atomic writing), and what a path that cannot be read
as a file is, in words (stdlib only).

A file is written to a temporary file beside its place and renamed over it
only once every byte is written, so a full disk or a file-size limit never
leaves a truncated file, and several files (a tidy dataset's tables) are
renamed into place only once all of them are written, so no mix of old and
new remains.  The reader of a path sees the old file or the new one.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path


def umask() -> int:
    """The process's file-creation mask (read by setting and restoring it: there is no other way)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode(path: Path) -> int:
    """The permission bits a file written at `path` gets: the existing file's, else what `open` would give."""
    return path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~umask()


def replace_all_or_none(targets: Sequence[tuple[Path, Callable[[str], None]]]) -> list[Path]:
    """Write every target `(path, write)`, `write(tmp)` filling a temporary file beside `path`; then rename all.

    A failure while writing (an OSError, or anything `write` raises) removes
    every temporary file and is raised, leaving every `path` as it was.
    Returns the paths written.
    """
    staged: list[tuple[str, Path]] = []
    try:
        for path, write in targets:
            handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            os.close(handle)
            staged.append((tmp, path))
            write(tmp)
            os.chmod(tmp, new_file_mode(path))
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    for tmp, path in staged:
        os.replace(tmp, path)
    return [path for _, path in staged]


def replace_file(path: Path, data: str | bytes) -> None:
    """Write `data` (text as UTF-8, or bytes) to `path`, replacing it whole or not at all."""

    def write(tmp: str) -> None:
        if isinstance(data, bytes):
            Path(tmp).write_bytes(data)
        else:
            with open(tmp, "w", encoding="utf-8") as handle:  # no newline translation beyond text mode's, as before
                handle.write(data)

    replace_all_or_none([(path, write)])


def os_error_reason(path: Path, exc: OSError) -> str:
    """What an OSError met while reading `path` means, in words."""
    if exc.errno == errno.ELOOP:
        return "a symbolic link loop"
    if exc.errno == errno.ENAMETOOLONG:
        return "a path longer than the system allows"
    if exc.errno == errno.ENOENT and os.path.islink(path):
        return f"a dangling symbolic link (to {os.readlink(path)})"
    if exc.errno == errno.EISDIR:
        return "a folder, not a file"
    return exc.strerror or type(exc).__name__


def not_a_file_reason(path: Path) -> str:
    """What `path`, an entry a reader listed that is no readable regular file, is: a folder, a link loop, a dangling
    link (and where to), an unreadable entry, a socket or device."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return os_error_reason(path, exc)
    return "a folder" if stat.S_ISDIR(mode) else "not a regular file"
