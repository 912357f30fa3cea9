"""The run history in SQLite (history.py) and what it can tell (regress.py).

Imports only gpuwise.documents, gpuwise.errors, gpuwise.atomic and gpuwise.i18n (its messages follow
--lang); it reads the JSON documents of bench, doctor, tune, fleet and stability runs through their
models in gpuwise.documents (records.py), never by key lookups on a dict.
"""
