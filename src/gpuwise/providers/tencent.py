"""Tencent Cloud (CVM): DMI pattern, the shipped GPU instance sizes, and the live price fetcher
(`gpuwise catalog fetch tencent`, needs the `gpuwise[tencent]` extra)."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="tencent",
    label="Tencent Cloud CVM",
    dmi_order=50,
    dmi=(
        DmiRule(
            conditions=(("sys_vendor", "Tencent Cloud"),),
            confidence="weak",
            source="bin456789/reinstall trans.sh is_dmi_contains() comment lists dmidecode 'Manufacturer: Tencent Cloud' @1afc1a00 (observed value; no recorded dump found)",
        ),
    ),
    offers_files=("tencent.csv",),
    fetcher="gpuwise.catalog.tencent:fetch_tencent_offers",
)
