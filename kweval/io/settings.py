"""Every setting behind a view's numbers, said in captions and file names: backend, τ, sentiment, scope, protocol.

The summary's meta dict (``data``, ``k``, ``match``, ``aggregate``) names the
basic settings; a view (the dashboard's, a CLI run's) also has the semantic
matching (τ and its embedding backend change the sem_* numbers), sentiment,
the scope (every movie or one) and the protocol preset.  `setting_texts` and
`setting_slugs` say them, in one order, for `report.latex_caption` and
`report.download_name`, so two files of two views never share a name or a caption.

Recognised meta keys (each optional): ``semantic`` (bool), ``threshold``
(float), ``backend`` (str; or ``embedding_backend``, `EvalOptions.as_dict`'s
name, as the CLI's meta has it), ``sentiment`` (bool), ``scope`` (a movie's
title, or ALL), ``scope_id`` (the movie's id, for file names), ``protocol`` (str),
``grounding`` (bool) with ``grounding_threshold`` (τ_g) and ``diversity`` (bool): said only when on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kweval.data.vocabulary import MOVIE_WORDS, Vocabulary

ALL = "ALL"  # kweval.evaluation.aggregate.ALL (io sits above evaluation; restated to keep this module light)


def _tau(value: object) -> str:
    return f"{float(value):.2f}"  # type: ignore[arg-type]


def setting_texts(meta: Mapping[str, object], words: Vocabulary = MOVIE_WORDS) -> list[str]:
    """The settings of `meta` beyond k, match and aggregation, for a caption: ``["semantic matching τ = 0.75
    (backend onnx-int8)", "sentiment on", "all movies", "protocol kweval"]``; a key absent from `meta` is not said.

    >>> setting_texts({"semantic": False, "sentiment": False, "scope": "ALL", "protocol": "pke"})
    ['semantic matching off', 'sentiment off', 'all movies', 'protocol pke']
    """
    out = []
    if "semantic" in meta:
        if meta["semantic"]:
            name = meta.get("backend") or meta.get("embedding_backend")  # the dashboard's / EvalOptions' key
            backend = f" (backend {name})" if name else ""
            tau = f" τ = {_tau(meta['threshold'])}" if meta.get("threshold") is not None else ""
            out.append(f"semantic matching{tau}{backend}")
        else:
            out.append("semantic matching off")
    if "sentiment" in meta:
        out.append(f"sentiment {'on' if meta['sentiment'] else 'off'}")
    if meta.get("grounding"):
        tau_g = f" τ_g = {_tau(meta['grounding_threshold'])}" if meta.get("grounding_threshold") is not None else ""
        out.append(f"grounding{tau_g}")
    if meta.get("diversity"):
        out.append("diversity")
    if meta.get("scope") is not None:
        scope = str(meta["scope"])
        out.append(f"all {words.movies.lower()}" if scope == ALL else f"{words.movie.lower()} {scope}")
    if meta.get("protocol"):
        out.append(f"protocol {meta['protocol']}")
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^\w.-]+", "-", text).strip("-.")


def setting_slugs(meta: Mapping[str, object]) -> list[str]:
    """The same settings as short file-name parts: ``["sem0.75-onnx-int8", "sas", "ALL", "kweval"]``
    (``nosem`` / ``nosas`` when off); a key absent from `meta` gives no part.

    >>> setting_slugs({"semantic": True, "threshold": 0.7, "backend": "auto", "sentiment": False, "scope": "ALL"})
    ['sem0.70-auto', 'nosas', 'ALL']
    """
    out = []
    if "semantic" in meta:
        if meta["semantic"]:
            tau = _tau(meta["threshold"]) if meta.get("threshold") is not None else ""
            name = meta.get("backend") or meta.get("embedding_backend")
            out.append(f"sem{tau}" + (f"-{name}" if name else ""))
        else:
            out.append("nosem")
    if "sentiment" in meta:
        out.append("sas" if meta["sentiment"] else "nosas")
    if meta.get("grounding"):
        out.append("grd" + (_tau(meta["grounding_threshold"]) if meta.get("grounding_threshold") is not None else ""))
    if meta.get("diversity"):
        out.append("div")
    scope = meta.get("scope_id", meta.get("scope"))
    if scope is not None:
        out.append(str(scope))
    if meta.get("protocol"):
        out.append(str(meta["protocol"]))
    return [s for s in (_slug(p) for p in out) if s]
