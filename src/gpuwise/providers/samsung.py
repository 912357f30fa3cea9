"""Samsung Cloud Platform: how gpuwise recognises its machines (DMI)."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="samsung",
    label="Samsung Cloud Platform",
    dmi_order=100,
    dmi=(
        DmiRule(
            conditions=(("chassis_asset_tag", "Samsung Cloud Platform"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init DataSourceOpenStack.py (rule) @04eacd06",
        ),
    ),
)
