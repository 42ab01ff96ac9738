"""The ONNX exports on disk: their SHA-256 manifests, the check before a load, moving a damaged one aside, listing.

An export (``<cache>/onnx/<model>-<hash>/model.onnx`` and ``model_int8.onnx``)
is written once and then loaded by every run on a CPU, so a damaged file
(truncated by a full disk, emptied, overwritten) would break every run.  Each
file gets a manifest beside it when it is built (``model.onnx.sha256``: its
size and SHA-256); `check` compares them before a load (streamed, once per
file state and process).  A file without a manifest (an older build) is left
to the load check of `kweval.embeddings.onnx`.  `move_aside` renames a
damaged file to ``<file>.corrupt-<stamp>`` so that it is rebuilt.  Stdlib
only: `kweval cache info` lists the exports without loading onnxruntime.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

from kweval.files import not_a_file_reason

__all__ = [
    "EXPORTS_DIR",
    "MANIFEST",
    "check",
    "not_a_file",
    "write_manifest",
    "move_aside",
    "export_info",
    "clear_exports",
]

EXPORTS_DIR = "onnx"
MANIFEST = ".sha256"
CHUNK = 1 << 20
_CHECKED: set[tuple] = set()  # (path, inode, size, mtime) of files that matched their manifest in this process


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def manifest_path(path: Path) -> Path:
    return path.with_name(path.name + MANIFEST)


def write_manifest(path: Path) -> None:
    """Record `path`'s size and SHA-256 beside it (atomically); a failed write only leaves the load check."""
    target = manifest_path(path)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        body = {"bytes": path.stat().st_size, "sha256": _digest(path)}
        tmp.write_text(json.dumps(body) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        tmp.unlink(missing_ok=True)


def check(path: Path) -> str | None:
    """Why the export at `path` is damaged (empty, of another size or checksum than its manifest), or None.

    None too when it has no readable manifest: then only loading it can tell (an older export).
    """
    st = path.stat()
    if st.st_size == 0:
        return "empty (0 bytes)"
    try:
        wanted = json.loads(manifest_path(path).read_text(encoding="utf-8"))
        size, digest = int(wanted["bytes"]), str(wanted["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    identity = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
    if identity in _CHECKED:
        return None
    if st.st_size != size:
        return f"{st.st_size:,} bytes where its manifest says {size:,} (truncated or overwritten)"
    if _digest(path) != digest:
        return "its SHA-256 differs from its manifest's (overwritten or damaged)"
    _CHECKED.add(identity)
    return None


def has_manifest(path: Path) -> bool:
    return manifest_path(path).is_file()


def move_aside(path: Path) -> Path:
    """Rename a damaged export to ``<file>.corrupt-<stamp>`` (its manifest removed) so that it is rebuilt."""
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
    os.replace(path, target)
    manifest_path(path).unlink(missing_ok=True)
    return target


def _files(folder: Path) -> list[Path]:
    """Every entry named like an export: files, and folders or links in an export's place (damage to name)."""
    root = folder / EXPORTS_DIR
    try:
        return sorted(root.glob("*/*.onnx"))
    except OSError:
        return []


def not_a_file(path: Path) -> str | None:
    """What stands in an export's place when it is no regular file (a folder, a dangling link, a link loop): damage
    a load moves aside like any other; None for a file or nothing."""
    return f"not a file: {not_a_file_reason(path)}" if os.path.lexists(path) and not path.is_file() else None


def export_info(folder: Path) -> list[dict]:
    """One dict per export file under `folder`: path, bytes, and `damage` (None when sound or not checkable)."""
    out = []
    for path in _files(folder):
        try:
            damage = not_a_file(path) or check(path)
            size = path.stat().st_size if damage is None else 0
        except OSError as exc:
            damage, size = str(exc), 0
        out.append({"path": str(path), "bytes": size, "damage": damage, "manifest": has_manifest(path)})
    return out


def clear_exports(folder: Path) -> int:
    """Delete every export under `folder` (with manifests and moved-aside copies); returns the export files removed."""
    root = folder / EXPORTS_DIR
    removed = len(_files(folder))
    if root.is_dir():
        shutil.rmtree(root, ignore_errors=True)
    return removed
