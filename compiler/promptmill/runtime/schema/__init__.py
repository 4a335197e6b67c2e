"""JSON Schema validation of render state and replies without jsonschema on the fast path."""
