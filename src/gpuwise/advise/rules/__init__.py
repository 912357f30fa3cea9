"""Doctor rules, one module per layer. The engine's registry (advise/engine.py `RULES`) imports every
module here that does not start with "_" and collects the rules its `@rule(...)` made: adding a rule
module is adding the file."""
