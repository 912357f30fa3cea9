"""Alibaba Cloud ECS: how gpuwise recognises its machines (DMI) and the shipped GPU offers (cn-shanghai list prices)."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="alibaba",
    label="Alibaba Cloud ECS",
    dmi_order=40,
    dmi=(
        DmiRule(
            conditions=(("product_name", "Alibaba Cloud ECS"),),
            confidence="strong",
            source="cloud_dmi.md: insights-core DMIDECODE_ALIBABA (recorded) @43cbb25f; canonical/cloud-init DataSourceAliYun.py ALIYUN_PRODUCT (rule)",
        ),
        DmiRule(
            conditions=(("sys_vendor", "Alibaba Cloud"),),
            confidence="strong",
            source="cloud_dmi.md: insights-core DMIDECODE_ALIBABA sys_vendor (recorded) @43cbb25f",
        ),
    ),
    offers_files=("alibaba.csv",),
)
