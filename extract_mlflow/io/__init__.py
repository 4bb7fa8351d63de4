"""Reading inputs: gold and prediction JSONL, source documents."""
