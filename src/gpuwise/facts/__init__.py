"""Typed facts about a machine, parsed from a Host. One module per layer; models in models.py."""
