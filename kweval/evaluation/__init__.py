"""Evaluation: options, the pipeline that turns a Dataset into the per-review table, aggregation and slices.

`pipeline.evaluate` calls the stages in order: `clean` (the GT), `match`
(predictions cleaned and assigned one-to-one), `count` (confidences and
per-review counts), `score` (every metric, `presence` for present/absent),
`tables` (keywords, coverage, skipped); then the add-ons `semantic_columns`
(any τ) and `sentiment_columns`.  `options` holds `EvalOptions` and
`Evaluation`, `combine` joins evaluations of disjoint movie sets,
`aggregate` and `slices` summarise the per-review table, `sentiment` is VADER.
"""
