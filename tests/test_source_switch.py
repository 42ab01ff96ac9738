"""Nothing lost silently when the data source changes (issue 28, item 4): each source keeps its own movie and models,
and a URL's models that the data lacks are said."""

from __future__ import annotations

from pathlib import Path

from tests.apptest import run, texts
from tests.helpers import edge_collection


def _collection(tmp_path: Path) -> Path:
    """A small collection whose two models are "yake" (a demo model's name too) and "firstphrases"."""
    return edge_collection(tmp_path / "Edge", {"firstphrases": False, "yake": True})


def _models(at) -> list[str]:
    return list(at.session_state["ctx"].selection.models)


def _notices(at) -> str:
    return "\n".join(str(w.value) for w in at.warning).replace("\\", "")


def test_switching_sources_restores_each_ones_selection(monkeypatch, tmp_path):
    folder = _collection(tmp_path)
    at = run(monkeypatch, folder, {"movie": "ALL"})
    assert _models(at) == ["firstphrases", "yake"]
    at.radio(key="data_source").set_value("demo").run()  # the issue: the demo showed yake alone
    assert not at.exception
    assert _models(at) == ["keybert", "yake", "keybert_vader"]
    said = _notices(at)
    assert "Data source changed to embedded demo: model(s) firstphrases of the previous data are not in it" in said
    assert at.query_params["models"] in (["keybert,yake,keybert_vader"], "keybert,yake,keybert_vader")
    at.sidebar.multiselect(key="sel_models").set_value(["keybert", "yake"]).run()  # a selection of the demo's own
    at.radio(key="data_source").set_value("configured").run()  # back: firstphrases is not lost
    assert not at.exception and _models(at) == ["firstphrases", "yake"]
    assert "keybert" in _notices(at)  # the demo's keybert is not in the collection: said
    at.radio(key="data_source").set_value("demo").run()  # and the demo's own selection comes back
    assert _models(at) == ["keybert", "yake"]


def test_a_link_s_unknown_models_are_said(monkeypatch, tmp_path):
    folder = _collection(tmp_path)
    at = run(monkeypatch, folder, {"movie": "ALL", "models": "firstphrases,keybert"})
    assert _models(at) == ["firstphrases"]
    assert "unknown model(s) keybert ignored; used firstphrases" in _notices(at)
    assert "Summary" in texts(at)
