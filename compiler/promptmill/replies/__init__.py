"""Replies: reading a model reply back against the role's output contract (`parse_reply`)."""
