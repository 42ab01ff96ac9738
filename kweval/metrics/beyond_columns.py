"""The metrics beyond the reference list (docs/metrics.md §12): grounding (--grounding) and diversity (--diversity).

Rows of (name, label, definition, option, better direction, micro ratio,
undefined without text, (count, why) of an undefined value) that
`kweval.metrics.registry` registers as metrics of the group ``beyond``;
`kweval.evaluation.beyond_columns` computes them (NaN, not 0, where the count
is 0: no prediction graded, or none given).
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
        (
            "n_grounded",
            "no keyword of the model was graded for this {review} (none given, or the {review} has no text)",
        ),
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
        (
            "n_grounded",
            "no keyword of the model was graded for this {review} (none given, or the {review} has no text)",
        ),
    ),
    (
        "unsupported",
        "Unsupported",
        "share of the predictions neither present nor supported by the text (candidate hallucinations)",
        "grounding",
        "lower",
        ("n_unsupported", "n_grounded"),
        True,
        (
            "n_grounded",
            "no keyword of the model was graded for this {review} (none given, or the {review} has no text)",
        ),
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
        ("n_pred", "the model gave no keyword for this {review}"),
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
        ("n_pred", "the model gave no keyword for this {review}"),
    ),
)
