"""The JSON documents gpuwise commands pass to each other, below every reader (docs/documents.md).

ids.py: every schema id (one constant each). One module per document holds its pydantic model:
bench.py (the writer's own model, gpuwise-bench/1), and the readers' views of the others: what
gpuwise reads back from a plan (plan.py), a doctor report (doctor.py), a tune result (tune.py), a
fleet report (fleet.py), a stability result (stability.py), a launch record (launch.py) and the
fleet link test's result (links.py), and the lenient view `gpuwise compare` reads a bench file, a
doctor report or a stability run with, hand-edited ones too (compared.py); the header and trailer lines of a
`gpuwise watch --record` recording (watch.py). load.py reads and validates a file into a model (a clear
UserInputError naming the file and the first bad field, never a KeyError); schemas.py writes each
model's JSON Schema into schemas/ (`make schemas`).

Imports pydantic and the small utilities only (pyproject.toml's layers).
"""
