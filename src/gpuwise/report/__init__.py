"""Report model, renderers and compare."""
