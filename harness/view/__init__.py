"""``harness view``: a local web viewer over run folders (see docs/results.md)."""
