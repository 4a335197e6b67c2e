"""Lint passes over composed roles and their templates; each returns diagnostics."""
