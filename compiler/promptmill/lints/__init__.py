"""Checks over composed roles and their templates; each returns diagnostics. The role-level
passes and their order: `passes.py`."""
