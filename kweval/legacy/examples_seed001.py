"""Live examples of seed 001's semantic and sentiment defects (6 and 7) on real reviews.

Defect 6: the notebook embeds each review's keywords as one padded batch
without the attention mask, so a keyword's vector depends on its neighbours;
defect 7: SAS is computed from the model's scores instead of the keywords'
VADER values.  Each finder returns the first review that shows it (None when
the data holds none), as `kweval.legacy.examples`' finders do.
"""

from __future__ import annotations

from dataclasses import dataclass

from kweval.data.dataset import Dataset
from kweval.legacy import examples
from kweval.legacy.encoder import legacy_encoder, seed001_semantic
from kweval.legacy.examples import ReviewExample
from kweval.legacy.kernels import (
    LEGACY_SEMANTIC_THRESHOLD,
    NOTEBOOK_DEFAULT_THRESHOLD,
    gt_lists,
    seed001_sas,
    seed001_structured,
    vader_sentiment,
    vader_sentiments,
)
from kweval.legacy.summary import seed001_cell_entries


@dataclass(frozen=True)
class SemanticPaddingExample(ReviewExample):
    """Defect 6: a keyword whose unmasked, padded embedding moves its best GT cosine."""

    keywords: list[str]
    token_lengths: list[int]
    keyword: str
    padding_tokens: int
    cosine_padded_vs_alone: float
    cosine_alone_vs_masked: float
    best_gt_cosine_padded: float
    best_gt_cosine_alone: float
    crosses_threshold: bool
    sem_prf_at_low: tuple[float, float, float]  # at LEGACY_SEMANTIC_THRESHOLD (0.5)
    sem_prf_at_default: tuple[float, float, float]  # at NOTEBOOK_DEFAULT_THRESHOLD (0.75)


@dataclass(frozen=True)
class SasScoreExample(ReviewExample):
    """Defect 7: SAS from the model's scores against SAS from the keywords' own VADER values."""

    keywords: list[str]
    scores: list[float]
    vader_values: list[float]
    gt_sentiment: float
    sentiment_pred_notebook: float
    sentiment_pred_spec: float
    sas_keywords_notebook: float
    sas_keywords_spec: float


def find_semantic_padding_example(
    dataset: Dataset, movie: str | None = None, model: str | None = None, max_reviews: int = 200
) -> SemanticPaddingExample | None:
    """Defect 6 on a real review: a keyword whose unmasked, padded embedding changes its semantic match.

    Among the first `max_reviews` reviews of `movie` × `model` (default: the
    first movie with GT, the first model), finds a keyword whose best cosine to
    the GT crosses 0.5 depending on whether it is embedded inside its review's
    padded batch (the notebook) or alone; falls back to the keyword whose best
    cosine moves most.  Also reports the review's semantic precision/recall at
    the two thresholds the notebook uses (0.5 and 0.75).  Loads the packaged
    all-MiniLM-L6-v2 (offline).
    """
    movie, model = examples.first_pair(dataset, movie, model)
    gt = gt_lists(dataset).get(movie, [])
    reviews = examples.reviews_of(dataset, movie, model).head(max_reviews)
    batches = [[kw for kw, _ in e if isinstance(kw, str)] for e in reviews["entries"]]
    keep = [i for i, b in enumerate(batches) if b]
    if not gt or not keep:
        return None
    enc = legacy_encoder()
    gt_emb = enc.embed_batches([gt])[0]
    padded = enc.embed_batches([batches[i] for i in keep])
    unique = list(dict.fromkeys(kw for i in keep for kw in batches[i]))
    alone = dict(zip(unique, (v[0] for v in enc.embed_batches([[kw] for kw in unique]))))
    best_alone = {kw: float((vec @ gt_emb.T).max()) for kw, vec in alone.items()}
    best = None
    for slot, i in enumerate(keep):
        batch = batches[i]
        lengths = enc.lengths(batch)
        if len(set(lengths)) < 2:
            continue
        best_padded = (padded[slot] @ gt_emb.T).max(axis=1)
        for t, kw in enumerate(batch):
            if lengths[t] == max(lengths):
                continue
            s_pad = float(best_padded[t])
            s_alone = best_alone[kw]
            crosses = (s_pad > LEGACY_SEMANTIC_THRESHOLD) != (s_alone > LEGACY_SEMANTIC_THRESHOLD)
            rank = (crosses, abs(s_pad - s_alone))
            if best is None or rank > best[0]:
                best = (rank, i, slot, t, kw, s_pad, s_alone)
    if best is None:
        return None
    (crosses, _), i, slot, t, kw, s_pad, s_alone = best
    batch = batches[i]
    at = {
        thr: seed001_semantic(padded[slot], gt_emb, thr)
        for thr in (LEGACY_SEMANTIC_THRESHOLD, NOTEBOOK_DEFAULT_THRESHOLD)
    }
    alone_vec = alone[kw]
    masked_vec = enc.embed_masked([kw])[0]
    return SemanticPaddingExample(
        movie=movie,
        model=model,
        review_id=reviews.iloc[i]["review_id"],
        keywords=batch,
        token_lengths=enc.lengths(batch),
        keyword=kw,
        padding_tokens=max(enc.lengths(batch)) - enc.lengths([kw])[0],
        cosine_padded_vs_alone=float(padded[slot][t] @ alone_vec),
        cosine_alone_vs_masked=float(alone_vec @ masked_vec),
        best_gt_cosine_padded=s_pad,
        best_gt_cosine_alone=s_alone,
        crosses_threshold=bool(crosses),
        sem_prf_at_low=at[LEGACY_SEMANTIC_THRESHOLD],
        sem_prf_at_default=at[NOTEBOOK_DEFAULT_THRESHOLD],
    )


def find_sas_score_example(
    dataset: Dataset, movie: str | None = None, model: str | None = None
) -> SasScoreExample | None:
    """Defect 7 on a real review: SAS computed from the model's scores vs from the keywords' own VADER sentiment.

    Among the reviews of `movie` × `model` (default: the first movie with GT,
    the first model) picks the one where the two `sas_keywords` differ most.
    Returns keywords, scores, their VADER values, the GT sentiment, both
    sentiment_pred values and both SAS.
    """
    movie, model = examples.first_pair(dataset, movie, model)
    gt = gt_lists(dataset).get(movie, [])
    if not gt:
        return None
    gt_value = sum(vader_sentiment(g) for g in gt) / len(gt)
    best = None
    cells = [
        (rid, seed001_structured(entries))
        for rid, entries in zip(*seed001_cell_entries(examples.reviews_of(dataset, movie, model)))
    ]
    keywords = list(dict.fromkeys(kw for _, structured in cells for kw, _ in structured))
    value_of = dict(zip(keywords, vader_sentiments(keywords)))
    for rid, structured in cells:
        values = [value_of[kw] for kw, _ in structured]
        sas_nb = seed001_sas(structured, gt_value)
        assert sas_nb is not None  # the cell's list is not empty (seed001_cell_entries) and gt_value is a number
        sas_spec = 1 - abs(sum(values) / len(values) - gt_value)
        gap = abs(sas_nb - sas_spec)
        if best is None or gap > best[0]:
            best = (gap, rid, structured, values, sas_nb, sas_spec)
    if best is None:
        return None
    _, rid, structured, values, sas_nb, sas_spec = best
    return SasScoreExample(
        movie=movie,
        model=model,
        review_id=rid,
        keywords=[kw for kw, _ in structured],
        scores=[s for _, s in structured],
        vader_values=values,
        gt_sentiment=gt_value,
        sentiment_pred_notebook=sum(s for _, s in structured) / len(structured),
        sentiment_pred_spec=sum(values) / len(values),
        sas_keywords_notebook=sas_nb,
        sas_keywords_spec=sas_spec,
    )
