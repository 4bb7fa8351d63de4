"""An evaluation as mergeable statistics: per-document records, accumulators, bootstrap, slices."""
