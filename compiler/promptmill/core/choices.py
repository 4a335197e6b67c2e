"""The fixed word lists users choose from, each defined once: the loaders, the runtime and
the CLI's options read them from here (a module with no imports, cheap for the CLI to load)."""

TEMPLATE_KINDS = ("role", "constraints", "output", "fragment")  # `kind:` of a template file
SCHEMA_NAMES = (*TEMPLATE_KINDS, "project", "bundle", "manifest")  # the shipped JSON Schemas
EVENTS = ("start", "continue")  # what a render is for: the first turn of a conversation or a later one
