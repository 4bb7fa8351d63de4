"""Every rendering: markdown, terminal tables, pandas frames, plots."""
