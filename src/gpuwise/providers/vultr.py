"""Vultr: how gpuwise recognises its machines (DMI)."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="vultr",
    label="Vultr",
    dmi_order=140,
    dmi=(
        DmiRule(
            conditions=(("sys_vendor", "Vultr"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init tools/ds-identify (rule) @04eacd06",
        ),
    ),
)
