"""Output files of the command line: checked before the work, written whole or not at all.

Every failure is an `OutputError`, which the CLI prints as one
`kweval: PATH: REASON` line (exit 2): a parent that is a file, a folder in the
way, an over-long name, a read-only place, a full device, a file-size limit.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from kweval.files import replace_file


class OutputError(Exception):
    """An output path that cannot be written (exit 2): printed as `kweval: PATH: REASON`."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")


def os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def check_output_file(out: str) -> None:
    """Fail now, before any work, if the file `out` ("-": stdout) cannot be written.

    Makes its folder if needed and opens the file for appending (a file made
    only for this check is removed again), so a parent that is a file, a
    read-only or missing place, or an over-long name is found before the
    evaluation runs.  A full device is found only when writing (`write_output`).
    """
    if out == "-":
        return
    path = Path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(out, f"cannot make its folder ({os_reason(exc)})") from None
    if os.path.isdir(path):  # (os.path.isdir, unlike Path.is_dir, is False for an over-long name)
        raise OutputError(out, "is a folder, not a file")
    existed = os.path.lexists(path)
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise OutputError(out, f"cannot be written ({os_reason(exc)})") from None
    if not existed:
        path.unlink(missing_ok=True)


def check_output_folder(folder: str) -> None:
    """Fail now if files cannot be made in `folder` (made if needed)."""
    import tempfile

    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise OutputError(folder, f"cannot write files there ({os_reason(exc)})") from None


def write_output(text: str | bytes, out: str) -> None:
    """Write `text` (or bytes) to the file `out`, or to stdout for "-"; a failed write is an OutputError."""
    mode, encoding = ("wb", None) if isinstance(text, bytes) else ("w", "utf-8")
    if out == "-":
        try:
            if isinstance(text, bytes):
                sys.stdout.buffer.write(text)
            else:
                sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError("stdout", f"writing failed ({os_reason(exc)})") from None
        return
    import stat

    path = Path(out)
    try:
        regular = not path.exists() or stat.S_ISREG(path.stat().st_mode)
        if not regular:  # a device or pipe (/dev/stdout, a FIFO): written in place
            with open(path, mode, encoding=encoding) as handle:
                handle.write(text)
            return
        replace_file(path, text)  # a regular file is replaced whole or not at all: never a truncated file
    except OSError as exc:
        raise OutputError(out, f"writing failed ({os_reason(exc)})") from None
