"""Metrics: the per-review metric functions and the registry of what every reported number means (docs/metrics.md
§3)."""
