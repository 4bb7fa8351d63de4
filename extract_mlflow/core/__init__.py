"""Shared by every layer: counts, metric keys, the path convention, text formatting."""
