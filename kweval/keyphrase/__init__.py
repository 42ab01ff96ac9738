"""The keyphrase field: evaluation protocols as presets and baseline extractors."""
