"""Filters without Jinja: what a plan applies itself (`plain.py`) and the YAML emitter behind `to_yaml` (`yamlemit.py`).

The sandbox (runtime/jinja/filters.py) registers the same functions, wrapped with its guards, so a template
renders the same through a plan or through Jinja. Uses nothing of promptmill but `core/`.
"""
