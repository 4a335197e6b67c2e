"""The account of a render: what was kept and trimmed, and why (`PromptRequest.explain()`)."""
