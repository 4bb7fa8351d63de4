"""Field scoring: typed comparison, list alignment, per-path TP/FP/FN."""
