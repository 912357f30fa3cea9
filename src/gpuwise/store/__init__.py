"""Bottom layer: the run history in SQLite (history.py) and what it can tell (regress.py).

Imports only gpuwise.errors, gpuwise.atomic and gpuwise.i18n (its messages follow --lang); it reads the public JSON documents of bench and
doctor (schemas gpuwise-bench/1, gpuwise-report/1) as plain dicts (records.py), never their models.
"""
