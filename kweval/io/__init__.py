"""Outputs: report formats, the protocol card, atomic output files, TREC export."""
