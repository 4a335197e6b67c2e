"""The runtime: reads a compiled build and renders it under an exact token budget. Imports nothing from the compile-time stages."""
