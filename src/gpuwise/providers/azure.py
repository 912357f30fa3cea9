"""Microsoft Azure: how gpuwise recognises its machines (DMI) and its shipped ND offers."""

from gpuwise.providers import DmiRule, Provider

PROVIDER = Provider(
    name="azure",
    label="Microsoft Azure",
    dmi_order=30,
    offers_files=("azure.csv",),
    dmi=(
        DmiRule(
            conditions=(("chassis_asset_tag", "7783-7084-3265-9085-8269-3286-77"),),
            confidence="strong",
            source="cloud_dmi.md: canonical/cloud-init tools/ds-identify azure_chassis and cloudinit/sources/azure/identity.py AZURE_CLOUD (rule) @04eacd06",
        ),
        DmiRule(
            conditions=(("sys_vendor", "Microsoft Corporation"), ("product_name", "Virtual Machine")),
            confidence="weak",
            source="saltstack/salt salt/grains/core.py Hyper-V/VirtualPC rule (Manufacturer Microsoft Corporation + Product Name Virtual Machine) @56343940; cloud_dmi.md cites banzaicloud/satellite providers/azure.go sys_vendor rule @93d438db; Hyper-V VMs outside Azure show the same strings",
            label="Microsoft Azure (or another Hyper-V host)",
        ),
    ),
)
