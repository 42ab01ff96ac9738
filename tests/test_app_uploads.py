"""Uploads and hostile data in the dashboard (AppTest).

Escaped everywhere, never pickles, newest copy wins, links made from uploads.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.escape import md
from tests.apptest import MD_IMAGE, PAGES, XSS, _csv, _upload, _warnings, hostile_files, run, table, texts, xss_files


def test_uploads_render_escaped_everywhere(monkeypatch):
    at = run(monkeypatch, None, {})
    at.sidebar.radio(key="data_source").set_value("upload").run()
    uploader = at.sidebar.file_uploader(key="upload")
    assert set(uploader.allowed_type) == {".parquet", ".csv"}
    uploader.set_value(xss_files()).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.sidebar.selectbox(key="sel_movie").options[1].endswith("(m1)")  # widget options are plain text
    at.query_params["review"] = "r1"
    seen = []
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.message for e in at.exception])
        out = texts(at)
        seen.append(out)
        assert "<img" not in out, page
    everything = "\n".join(seen)
    assert "&lt;img src=x onerror=alert(1)&gt;" in everything
    explorer = seen[1]
    assert "<mark" in explorer and "&lt;img" in explorer  # the keyword matched and its text is shown, escaped
    data = seen[4]
    assert "not a tidy table" in data and "&lt;img" in data  # the odd file name, escaped
    # query parameters are user content too
    at.query_params["review"] = XSS
    at.switch_page("pages/explorer.py").run()
    out = texts(at)
    assert "is not among the evaluated reviews" in out and "<img" not in out and "&lt;img" in out


def test_uploads_never_take_pickles(monkeypatch):
    at = run(monkeypatch, None, {})
    at.sidebar.radio(key="data_source").set_value("upload").run()
    at.sidebar.file_uploader(key="upload").set_value(
        [("predictions.pkl", b"\x80\x04K\x01.", "application/octet-stream")]
    ).run()
    # refused by the widget itself (its message is redacted for visitors: client.showErrorDetails = "none")
    assert at.exception and any(
        t in at.exception[0].message for t in ("Invalid file extension", "error message is redacted")
    )
    assert not at.sidebar.selectbox  # nothing was loaded


def test_a_link_made_after_an_upload_says_so_elsewhere(monkeypatch):
    at = _upload(run(monkeypatch, None, {}), xss_files())
    assert at.query_params["data"] == "upload"
    link = dict(at.query_params)
    elsewhere = run(monkeypatch, None, link)  # a new session: no upload
    assert any("uploaded" in w and "cannot carry" in w for w in _warnings(elsewhere)), _warnings(elsewhere)
    assert "data" not in elsewhere.query_params


def test_an_upload_under_the_same_name_replaces_the_earlier_one(monkeypatch):
    files = xss_files()[:2]
    first = pd.DataFrame(
        {"movie": "m1", "review_id": ["r1"], "model": "base", "rank": [0], "keyword": ["nothing"], "score": [0.9]}
    )
    fixed = pd.DataFrame(
        {"movie": "m1", "review_id": ["r1"], "model": "fixed", "rank": [0], "keyword": ["fraud"], "score": [0.9]}
    )
    at = _upload(run(monkeypatch, None, {}), [("predictions.csv", _csv(first), "text/csv"), files[1]])
    assert at.sidebar.multiselect(key="sel_models").options == ["base"]
    # the corrected file is uploaded later under the same name: both chips are there, the newest wins
    at.sidebar.file_uploader(key="upload").set_value(
        [("predictions.csv", _csv(first), "text/csv"), files[1], ("predictions.csv", _csv(fixed), "text/csv")]
    ).run()
    assert not at.exception
    assert at.sidebar.multiselect(key="sel_models").options == ["fixed"]
    notes = [i.value.replace("\\", "") for i in at.sidebar.info]
    assert any("predictions.csv was uploaded 2 times" in n and "newest" in n for n in notes), notes
    using = " ".join(c.value.replace("\\", "") for c in at.sidebar.caption)
    assert f"predictions.csv ({len(_csv(fixed))} B)" in using and "ground_truth.parquet (" in using
    at.switch_page("pages/data.py").run()
    assert f"predictions.csv ({len(_csv(fixed))} B)" in texts(at).replace("\\", "")


def test_newest_by_name_follows_the_order_first_seen():
    from dashboard.uploads import format_size, newest_by_name

    seen: dict[str, int] = {}
    assert newest_by_name([("id1", "p.csv", b"old")], seen).files == (("p.csv", b"old"),)
    # a later run lists the new copy first: still the newest wins, whatever the listing order or contents
    later = newest_by_name([("id2", "p.csv", b"new"), ("id1", "p.csv", b"old"), ("id3", "g.csv", b"g")], seen)
    assert later.files == (("g.csv", b"g"), ("p.csv", b"new")) and later.replaced == {"p.csv": 1}
    assert later.sizes == {"g.csv": 1, "p.csv": 3}
    assert [format_size(n) for n in (999, 1234, 2_500_000)] == ["999 B", "1.2 kB", "2.5 MB"]


def test_hostile_uploads_give_messages_and_finite_metrics(monkeypatch):
    at = _upload(run(monkeypatch, None, {}), hostile_files())
    summary = table(at, "summary_table")
    assert np.isfinite(summary[["w_precision", "w_recall", "w_f1"]].to_numpy(dtype="float64")).all()
    for page in [
        "pages/data.py",
        "pages/explorer.py",
        "pages/parity.py",
        "pages/ndcg.py",
    ]:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.message for e in at.exception])
        markdown = "\n".join(
            str(e.value)
            for kind in ("markdown", "caption", "title", "subheader", "info", "warning", "error")
            for e in getattr(at, kind)
        )
        assert MD_IMAGE not in markdown and "](http" not in markdown, (
            page
        )  # never Markdown that renders an image or link
        html_parts = "\n".join(e.proto.body for e in at.html)
        assert "<img" not in html_parts and 'href="http' not in html_parts, page  # st.html shows it as text
    at.switch_page("pages/data.py").run()
    assert "not a tidy table" in texts(at)  # the odd file name is reported, escaped


def test_an_empty_score_direction_cell_in_an_upload_is_reported(monkeypatch):
    at = _upload(
        run(monkeypatch, None, {}),
        [*hostile_files()[:3], ("models.csv", b"model,score_direction\nbase,\n", "text/csv")],
    )
    assert table(at, "summary_table")["model"].tolist()[0] == "base"
    at.switch_page("pages/data.py").run()
    assert "score_direction" in texts(at)


def test_markdown_escaping_never_makes_an_autolink():
    """GFM links bare URLs, www. names and e-mail addresses even when their punctuation is escaped."""
    out = md("see http://x.invalid/a, HTTPS://y.invalid, www.z.invalid and a@b.invalid; ndcg@5")
    plain = out.replace("\\", "")
    assert (
        "http://" not in plain.lower()
        and "https://" not in plain.lower()
        and "www." not in plain
        and "a@b" not in plain
    )
    assert (
        plain.replace("\u2060", "")
        == "see http://x.invalid/a, HTTPS://y.invalid, www.z.invalid and a@b.invalid; ndcg@5"
    )
    assert "ndcg@5" in plain  # metric names keep their @


def test_a_nul_byte_in_a_typed_local_path_is_one_line(monkeypatch):
    """Issue 23: a NUL byte in the dashboard's local path gave a traceback (ValueError: embedded null byte)."""
    at = run(monkeypatch, None, {}, env={"KWEVAL_ALLOW_LOCAL_PATHS": "1"})
    at.sidebar.radio(key="data_source").set_value("local").run()
    at.sidebar.text_input(key="local_path").input("/tmp/data\x00\u202eevil").run()
    assert not at.exception, [e.message for e in at.exception]
    errors = [e.value.replace("\\", "") for e in at.sidebar.error]
    assert errors == [
        "kweval: local path “/tmp/datax00u202eevil”: holds an unprintable character (shown as an escape); "
        "type the folder's path again."
    ], errors
    assert "\x00" not in errors[0] and "\u202e" not in errors[0]
    assert [i.value for i in at.main.info] == ["Choose a dataset in the sidebar (Dataset)."]


def test_parity_escapes_review_ids_holding_backticks(monkeypatch, tmp_path):
    """Issue 23: the parity page put review ids in a Markdown code span; a backtick in the id closed it and the
    rest (an image here) went live."""
    from kweval.data import demo_path

    hostile = f"`{MD_IMAGE}`"
    out = tmp_path / "demo"
    out.mkdir()
    for name in ("reviews", "predictions"):
        frame = pd.read_parquet(demo_path() / f"{name}.parquet")
        frame["review_id"] = frame["review_id"] + hostile
        frame.to_parquet(out / f"{name}.parquet")
    for name in ("ground_truth", "movies", "models"):
        (out / f"{name}.parquet").write_bytes((demo_path() / f"{name}.parquet").read_bytes())
    at = run(monkeypatch, out, {}, page="pages/parity.py")
    said = [m.value for m in at.markdown if "tracker" in m.value]
    assert any(m.startswith("Movie ") for m in said), said  # an example names a hostile review id
    for m in said:
        assert "`" not in m.replace("\\`", "") and "![t](" not in m, m
