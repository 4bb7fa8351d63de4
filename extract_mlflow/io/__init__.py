"""Reading inputs (gold and prediction JSONL, source documents) and writing outputs safely."""
