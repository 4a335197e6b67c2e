"""Deprecated: the renderers moved into `promptmill.runtime.wires` (one module per wire); removed in the next release."""
