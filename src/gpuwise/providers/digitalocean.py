"""DigitalOcean: how gpuwise recognises its machines (DMI)."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="digitalocean",
    label="DigitalOcean",
    dmi_order=120,
    dmi=(
        DmiRule(
            conditions=(("sys_vendor", "DigitalOcean"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init tools/ds-identify (rule) @04eacd06",
        ),
    ),
)
