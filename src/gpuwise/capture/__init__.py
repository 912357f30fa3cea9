"""Reading a machine: the Host protocol, the table of sources, and capture read/write."""
