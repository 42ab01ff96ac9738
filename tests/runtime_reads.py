"""What the dashboard reads from the checkout at run time, found by running it: `python -m tests.runtime_reads`.

Not a test module (tests/test_packaging.py runs it in a subprocess, since an audit hook cannot be removed).  A
`sys.addaudithook` records every file opened and every folder listed while Streamlit's configuration is read (as
`streamlit run` does at start) and every page of `dashboard.sidebar.PAGES` runs (AppTest, the embedded demo, a visitor's
first view, and the Summary's docs/metrics.md expander opened); it prints, as JSON, the paths under the
checkout that were read, relative to it.  The Docker image must hold each of them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVENTS = {"open", "os.listdir", "os.scandir"}
# made by the image's own install step (`pip install -e .`: *.egg-info, __editable__ finders) or the harness itself
NOT_SHIPPED = (".venv", "tests", ".git", ".pytest_cache", ".hypothesis")


def _recorder(found: set[str]):
    def hook(event: str, args: tuple) -> None:
        if event not in EVENTS or not args or not isinstance(args[0], (str, bytes, os.PathLike)):
            return
        try:
            path = Path(os.fsdecode(args[0]))
            relative = (path if path.is_absolute() else Path.cwd() / path).resolve().relative_to(ROOT)
        except (ValueError, OSError):
            return  # outside the checkout: site-packages, /tmp
        top = relative.parts[0] if relative.parts else ""
        if top and top not in NOT_SHIPPED and not top.endswith(".egg-info") and not top.startswith("__editable__"):
            found.add(relative.as_posix())

    return hook


def runtime_reads() -> list[str]:
    """The checkout's paths (relative, sorted) that the server's start and a run of every page read."""
    from streamlit import config
    from streamlit.testing.v1 import AppTest

    import tests.streamlit_scan  # noqa: F401 - each AppTest's component scan once (no path of the checkout read)
    from dashboard.sidebar import PAGES

    found: set[str] = set()
    os.chdir(ROOT)  # `streamlit run app.py` runs from the app's folder (the image's WORKDIR)
    sys.addaudithook(_recorder(found))
    config.get_config_options(force_reparse=True)  # .streamlit/config.toml, as the server reads it at start
    for page in PAGES:  # a visitor's first view (with the semantic metrics on, no other path is read)
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        at.run()
        at.switch_page(page.file).run()
        if page.file.endswith("summary.py"):  # docs/metrics.md is read when a visitor opens its expander
            at.session_state["metrics_doc"] = True
            at.run()
        if at.exception:
            raise SystemExit(f"{page.file}: {[e.message for e in at.exception]}")
    return sorted(path for path in found if (ROOT / path).exists())  # not what was only looked for


if __name__ == "__main__":
    os.environ.pop("KWEVAL_DATA", None)
    print(json.dumps(runtime_reads()))
