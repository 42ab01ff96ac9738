"""Streamlit's component scan answered once per process (imported by tests/apptest.py and tests/runtime_reads.py).

Before its first run each AppTest scans every installed distribution's metadata for Streamlit components (~140
distributions, ~0.33 s of CPU); a test run makes hundreds of AppTests while what is installed does not change.
This module imports nothing of the checkout (runtime_reads records what the app reads from it).
"""

from __future__ import annotations

import functools


def scanned_once(scan):
    """`scan` answered once per process; each call gets a fresh list of the first answer."""
    first = functools.cache(lambda: tuple(scan()))

    @functools.wraps(scan)
    def once(max_workers: int | None = None) -> list:
        return list(first())

    once.real = scan  # type: ignore[attr-defined]  # the plain definition (tests/test_app_shell.py compares them)
    return once


try:  # a Streamlit without the module only makes the dashboard tests slower
    from streamlit.components.v2 import manifest_scanner
except ImportError:  # pragma: no cover
    manifest_scanner = None
else:
    if not hasattr(manifest_scanner.scan_component_manifests, "real"):
        manifest_scanner.scan_component_manifests = scanned_once(manifest_scanner.scan_component_manifests)
