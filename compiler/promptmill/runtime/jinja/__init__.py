"""The sandboxed Jinja environment, its guards and filters."""
