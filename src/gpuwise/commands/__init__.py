"""One module per CLI command. Each defines `register(app)` and imports heavy code lazily."""
