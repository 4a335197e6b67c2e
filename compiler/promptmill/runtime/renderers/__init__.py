"""Deprecated: the renderers moved into `promptmill.wires` (one module per wire); removed in the next release."""
