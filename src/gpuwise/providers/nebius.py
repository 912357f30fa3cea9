"""Nebius (GPU neocloud): the shipped on-demand offers. No DMI rule: no recorded DMI dump was found."""

from gpuwise.providers import Provider

PROVIDER = Provider(name="nebius", label="Nebius", offers_files=("nebius.csv",))
