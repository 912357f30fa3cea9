"""Hetzner Cloud: how gpuwise recognises its machines (DMI)."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="hetzner",
    label="Hetzner Cloud",
    dmi_order=130,
    dmi=(
        DmiRule(
            conditions=(("sys_vendor", "Hetzner"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init tools/ds-identify (rule) @04eacd06",
        ),
    ),
)
