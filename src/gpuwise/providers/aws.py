"""Amazon Web Services (EC2): DMI patterns, the shipped on-demand and Capacity Blocks offers."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="aws",
    label="Amazon EC2",
    dmi_order=10,
    dmi=(
        DmiRule(
            conditions=(("chassis_asset_tag", "Amazon EC2"),),
            confidence="strong",
            source="cloud_dmi.md: RedHatInsights/insights-core insights/tests/combiners/test_cloud_provider.py DMIDECODE_AWS_UUID (recorded) and insights/combiners/cloud_provider.py asset_tag rule @43cbb25f",
            instance_type=("product_name", "^[a-z][a-z0-9-]*\\.[a-z0-9-]+$"),
        ),
        DmiRule(
            conditions=(("sys_vendor", "Amazon EC2"),),
            confidence="strong",
            source='cloud_dmi.md: systemd/systemd src/basic/virt.c detect_vm_dmi_vendor() table {"Amazon EC2"} (rule)',
            instance_type=("product_name", "^[a-z][a-z0-9-]*\\.[a-z0-9-]+$"),
        ),
        DmiRule(
            conditions=(("board_vendor", "Amazon EC2"),),
            confidence="strong",
            source="cloud_dmi.md: systemd/systemd src/basic/virt.c detect_vm_dmi_vendor() checks board_vendor (rule)",
            instance_type=("product_name", "^[a-z][a-z0-9-]*\\.[a-z0-9-]+$"),
        ),
        DmiRule(
            conditions=(("bios_vendor", "Amazon EC2"),),
            confidence="strong",
            source="cloud_dmi.md: systemd/systemd src/basic/virt.c detect_vm_dmi_vendor() checks bios_vendor (rule)",
            instance_type=("product_name", "^[a-z][a-z0-9-]*\\.[a-z0-9-]+$"),
        ),
        DmiRule(
            conditions=(("bios_version", "*.amazon"),),
            confidence="strong",
            source="cloud_dmi.md: insights-core DMIDECODE_AWS bios_version 4.2.amazon (recorded) @43cbb25f",
            label="Amazon EC2 (Xen)",
        ),
        DmiRule(
            conditions=(("product_version", "*.amazon"),),
            confidence="strong",
            source="cloud_dmi.md: insights-core DMIDECODE_AWS product_version 4.2.amazon (recorded) @43cbb25f",
            label="Amazon EC2 (Xen)",
        ),
        DmiRule(
            conditions=(("product_uuid", "EC2*"),),
            confidence="weak",
            source="cloud_dmi.md: canonical/cloud-init tools/ds-identify ec2_identify_platform() uuid prefix rule @04eacd06",
        ),
        DmiRule(
            conditions=(("product_uuid", "ec2*"),),
            confidence="weak",
            source="cloud_dmi.md: canonical/cloud-init tools/ds-identify ec2_identify_platform() uuid prefix rule @04eacd06",
        ),
    ),
    offers_files=("aws.csv", "aws-capacity-blocks.csv"),
)
