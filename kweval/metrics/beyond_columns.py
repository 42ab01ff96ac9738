"""The metrics beyond the reference list (docs/metrics.md §12): grounding (--grounding) and diversity (--diversity).

Rows of (name, label, definition, option, better direction, micro ratio,
undefined without text) that `kweval.metrics.registry` registers as metrics
of the group ``beyond``; `kweval.evaluation.beyond_columns` computes them.
Plain data: this module imports nothing.
"""

from __future__ import annotations

METRICS: tuple[tuple, ...] = (
    (
        "grounded_present",
        "Grounded: present",
        "share of the predictions that occur in the review's text under the present rule in force",
        "grounding",
        "neither",
        ("n_grounded_present", "n_grounded"),
        True,
    ),
    (
        "grounded_supported",
        "Grounded: supported",
        "share of the predictions not present but supported: every word in one sentence of the text, or cosine ≥ "
        "τ_g to a sentence or phrase of it",
        "grounding",
        "neither",
        ("n_grounded_supported", "n_grounded"),
        True,
    ),
    (
        "unsupported",
        "Unsupported",
        "share of the predictions neither present nor supported by the text (candidate hallucinations)",
        "grounding",
        "lower",
        ("n_unsupported", "n_grounded"),
        True,
    ),
    (
        "dup_token_ratio",
        "Duplicate tokens",
        "1 − distinct / all stemmed tokens of the predictions as given, repeats included (KPEval); undefined "
        "without predictions",
        "diversity",
        "lower",
        None,
        False,
    ),
    (
        "self_similarity",
        "Self-similarity",
        "mean cosine over the pairs of predictions as given (all-MiniLM-L6-v2; KPEval uses mpnet); 1 for one, "
        "undefined without predictions",
        "diversity",
        "lower",
        None,
        False,
    ),
)
