"""SAP Converged Cloud: how gpuwise recognises its machines (DMI)."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="sap",
    label="SAP Converged Cloud",
    dmi_order=90,
    dmi=(
        DmiRule(
            conditions=(("chassis_asset_tag", "SAP CCloud VM"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init DataSourceOpenStack.py (rule) @04eacd06",
        ),
    ),
)
