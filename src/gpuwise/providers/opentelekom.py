"""Open Telekom Cloud: how gpuwise recognises its machines (DMI)."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="opentelekom",
    label="Open Telekom Cloud",
    dmi_order=80,
    dmi=(
        DmiRule(
            conditions=(("chassis_asset_tag", "OpenTelekomCloud"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init DataSourceOpenStack.py (rule) @04eacd06",
        ),
    ),
)
