"""UpCloud: how gpuwise recognises its machines (DMI)."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="upcloud",
    label="UpCloud",
    dmi_order=150,
    dmi=(
        DmiRule(
            conditions=(("sys_vendor", "UpCloud"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init tools/ds-identify (rule) @04eacd06",
        ),
    ),
)
