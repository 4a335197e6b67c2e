"""Composing: the typed template model, extends chains, the id index, context, constraints, contracts and budgets."""
