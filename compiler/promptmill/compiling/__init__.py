"""Compiling composed roles into bundles and writing the build; the public lint/compile API."""
