"""Baidu AI Cloud: the shipped GPU offer (a BML platform price; no DMI rule: no recorded DMI dump was found)."""

from gpuwise.providers import Provider

PROVIDER = Provider(name="baidu", label="Baidu AI Cloud", offers_files=("baidu.csv",))
