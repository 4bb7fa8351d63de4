"""Reading inputs (gold and prediction JSONL, source documents, a logged run's per-document
counts) and writing outputs safely."""
