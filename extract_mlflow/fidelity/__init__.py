"""Text fidelity: n-gram precision against the source, grounding, injection scan, approvals."""
