"""OpenStack (public or private cloud): how gpuwise recognises its machines (DMI)."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="openstack",
    label="OpenStack (public or private cloud)",
    dmi_order=900,
    dmi=(
        DmiRule(
            conditions=(("product_name", "OpenStack Nova"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init DataSourceOpenStack.py (rule) @04eacd06",
        ),
        DmiRule(
            conditions=(("product_name", "OpenStack Compute"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init DataSourceOpenStack.py (rule) @04eacd06",
        ),
        DmiRule(
            conditions=(("chassis_asset_tag", "OpenStack Nova"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init DataSourceOpenStack.py (rule) @04eacd06",
        ),
        DmiRule(
            conditions=(("chassis_asset_tag", "OpenStack Compute"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init DataSourceOpenStack.py (rule) @04eacd06",
        ),
    ),
)
