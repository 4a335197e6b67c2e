"""The version of promptmill: one place, read by the package, the build manifests and pyproject.toml."""

__version__ = "0.1.0"
