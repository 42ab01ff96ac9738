"""Explanations: step-by-step nDCG tables and why a keyword did or did not match."""
