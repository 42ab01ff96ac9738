"""Text: normalization, stemming, keyword matching and the present/absent rule (docs/metrics.md §1–2)."""
