"""Linode (Akamai): how gpuwise recognises its machines (DMI)."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="linode",
    label="Linode (Akamai)",
    dmi_order=160,
    dmi=(
        DmiRule(
            conditions=(("sys_vendor", "Linode"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init tools/ds-identify (rule) @04eacd06",
        ),
        DmiRule(
            conditions=(("sys_vendor", "Akamai"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init tools/ds-identify (rule) @04eacd06",
        ),
    ),
)
