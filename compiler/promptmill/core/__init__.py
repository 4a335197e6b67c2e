"""Definitions every stage shares: error types, diagnostics and the code catalog."""
