"""Specs: the model, their YAML form and schema, extract (doc pages to specs) and lint."""
