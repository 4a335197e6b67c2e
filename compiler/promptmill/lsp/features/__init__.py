"""One module per LSP request kind; each takes plain values and returns lsprotocol types."""
