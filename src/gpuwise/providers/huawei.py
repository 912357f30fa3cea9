"""Huawei Cloud: how gpuwise recognises its machines (DMI)."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="huawei",
    label="Huawei Cloud",
    dmi_order=60,
    dmi=(
        DmiRule(
            conditions=(("chassis_asset_tag", "HUAWEICLOUD"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init DataSourceOpenStack.py DMI_ASSET_TAG_HUAWEICLOUD (rule) @04eacd06",
        ),
        DmiRule(
            conditions=(("sys_vendor", "Huawei Cloud"),),
            confidence="weak",
            source="bin456789/reinstall trans.sh is_dmi_contains() comment lists dmidecode 'Manufacturer: Huawei Cloud' @1afc1a00",
        ),
    ),
)
