"""Reader judgments that correct the reference (docs/metrics.md §11): store, judged evaluation, agreement, export.

The API a page or the CLI calls:

- `JudgmentStore.for_dataset(dataset, path=None)` or `JudgmentStore(path, content_hash)` (`default_path(content_hash)`
  beside the kweval cache): `add`, `undo`,
  `list(movie, review_id)` (a review's judgments and its movie's), `list()` (all);
- `load_judgments(path)` (a store, CSV or Parquet) and `checked(judgments, dataset, source)`: the usable ones
  and one problem per kind dropped;
- `judged_evaluation(dataset, judgments, options)`: the same pipeline on G'; `judged_summary` puts its metrics
  beside the reference ones (`_judged` columns, `n_judgments`);
- `agreement(judgments)`: Cohen's κ (two annotators) or Krippendorff's α (more);
- `judged_ground_truth_table(judged)`: G' as a tidy table (TREC qrels: `kweval.io.export.write_trec`).
"""

from kweval.judgments.agreement import Agreement, agreement
from kweval.judgments.combine import JudgedGroundTruth, combined_grades, judged_evaluation, judged_ground_truth
from kweval.judgments.export import judged_ground_truth_table
from kweval.judgments.store import GRADES, SIDES, JudgmentsError, JudgmentStore, default_path, read_store
from kweval.judgments.summary import judged_summary
from kweval.judgments.table import checked, load_judgments

__all__ = [
    "GRADES",
    "SIDES",
    "Agreement",
    "JudgedGroundTruth",
    "JudgmentStore",
    "JudgmentsError",
    "agreement",
    "checked",
    "combined_grades",
    "default_path",
    "judged_evaluation",
    "judged_ground_truth",
    "judged_ground_truth_table",
    "judged_summary",
    "load_judgments",
    "read_store",
]
