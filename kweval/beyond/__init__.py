"""Beyond the reference list: grounding of each prediction in its document, and diversity of a list (§12)."""
