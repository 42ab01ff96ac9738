"""Evaluation: options, the pipeline that turns a Dataset into the per-review table, aggregation and slices."""
