"""Provider renderers: a fitted PromptRequest -> a plain dict for the provider's SDK."""
