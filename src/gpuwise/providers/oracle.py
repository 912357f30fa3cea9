"""Oracle Cloud Infrastructure: how gpuwise recognises its machines (DMI) and its shipped bare-metal GPU offers."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="oracle",
    label="Oracle Cloud Infrastructure",
    dmi_order=70,
    offers_files=("oracle.csv",),
    dmi=(
        DmiRule(
            conditions=(("chassis_asset_tag", "OracleCloud.com"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init DataSourceOracle.py CHASSIS_ASSET_TAG (rule) @04eacd06",
        ),
    ),
)
