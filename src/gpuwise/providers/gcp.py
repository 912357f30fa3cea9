"""Google Compute Engine: how gpuwise recognises its machines (DMI) and its shipped A3 offers."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="gcp",
    label="Google Compute Engine",
    dmi_order=20,
    offers_files=("gcp.csv",),
    dmi=(
        DmiRule(
            conditions=(("product_name", "Google Compute Engine"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init tools/ds-identify dscheck_GCE and DataSourceGCE.py (rule) @04eacd06",
        ),
        DmiRule(
            conditions=(("product_name", "Google"),),
            confidence="strong",
            source='cloud_dmi.md: canonical/cloud-init DataSourceGCE.py older images pname == "Google" (rule) @04eacd06',
        ),
        DmiRule(
            conditions=(("product_serial", "GoogleCloud-*"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init DataSourceGCE.py / test_ds_identify.py serial GoogleCloud-<hex> @04eacd06",
        ),
        DmiRule(
            conditions=(("bios_vendor", "Google"),),
            confidence="strong",
            source="cloud_dmi.md: insights-core DMIDECODE_GOOGLE BIOS block (recorded) @43cbb25f",
        ),
    ),
)
