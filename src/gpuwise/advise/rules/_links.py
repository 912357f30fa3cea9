"""Public documents the rules cite, one name per URL (a user can open every one of them)."""

# NVIDIA: NCCL, DCGM, NVML, driver, fabric, containers
NCCL_ENV = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
NCCL_TROUBLESHOOTING = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"
NCCL_TESTS_PERFORMANCE = "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"
NCCL_ACS = NCCL_TROUBLESHOOTING + "#pci-access-control-services-acs"
DCGM_DIAG = "https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html"
DCGMI_NVLINK = (
    "https://docs.nvidia.com/datacenter/dcgm/latest/reference/command-line-reference/dcgmi/dcgmi-nvlink.html"
)
DCGM_EXPORTER = "https://github.com/NVIDIA/dcgm-exporter"
NVML_CLOCK_EVENTS = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html"
DRIVER_PERSISTENCE = "https://docs.nvidia.com/deploy/driver-persistence/persistence-daemon.html"
FABRIC_MANAGER = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/"
MIG_GUIDE = "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/"
CUDA_COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/"
GPU_OPERATOR_RDMA = (
    "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html"
)
TOOLKIT = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"
OFED_TUNING = "https://docs.nvidia.com/networking/display/mlnxofedv24100700/Performance+Tuning"
TRANSFORMER_ENGINE = "https://docs.nvidia.com/deeplearning/transformer-engine/"
GRACE_PLATFORM = "https://nvidia.github.io/grace-cpu-benchmarking-guide/platform/"

# PyTorch
TORCH_INSTALL = "https://pytorch.org/get-started/locally/"
TORCH_TUNING = "https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html"
TORCH_CUDA_NOTES = "https://pytorch.org/docs/stable/notes/cuda.html"
CUDA_NOTES_TF32 = TORCH_CUDA_NOTES + "#tensorfloat-32-tf32-on-ampere-and-later-devices"
AMP_DOC = "https://pytorch.org/docs/stable/amp.html"
TORCH_CPP_EXTENSION = "https://pytorch.org/docs/stable/cpp_extension.html"

# ml-engineering (Stas Bekman), chapters
MLE_ACCELERATOR = "https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md"
MLE_NETWORK = "https://github.com/stas00/ml-engineering/blob/master/network/README.md"
MLE_PERFORMANCE = "https://github.com/stas00/ml-engineering/blob/master/training/performance/README.md"
MLE_STORAGE = "https://github.com/stas00/ml-engineering/blob/master/storage/README.md"

# Others: health checks, issues with measurements, vendor and kernel documentation
AZURE_NHC = "https://github.com/Azure/azurehpc-health-checks"
AREAL_639 = "https://github.com/areal-project/AReaL/issues/639"
NCCL_209 = "https://github.com/NVIDIA/nccl/issues/209"
AMD_MI300X = "https://instinct.docs.amd.com/projects/system-acceptance/en/latest/gpus/mi300x.html"
AWS_EFA_NCCL = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start-nccl.html"
AWS_OFI_NCCL = "https://github.com/aws/aws-ofi-nccl"
AWS_PLACEMENT = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-groups.html"
DOCKER_RUN = "https://docs.docker.com/reference/cli/docker/container/run/"
NODE_EXPORTER = "https://github.com/prometheus/node_exporter"
KERNEL_SYSCTL_VM = "https://docs.kernel.org/admin-guide/sysctl/vm.html"
KERNEL_THP = "https://docs.kernel.org/admin-guide/mm/transhuge.html"
KERNEL_CGROUP_V2 = "https://docs.kernel.org/admin-guide/cgroup-v2.html"

# Kernel documentation for the kernel-log events (doctor --evidence, captured journal / dmesg)
KERNEL_AER = "https://docs.kernel.org/PCI/pcieaer-howto.html"
KERNEL_EDAC = "https://docs.kernel.org/driver-api/edac.html"
KERNEL_MCE = "https://docs.kernel.org/arch/x86/x86_64/machinecheck.html"
KERNEL_HUNG_TASK = "https://docs.kernel.org/admin-guide/sysctl/kernel.html#hung-task-timeout-secs"
KERNEL_OOM = "https://docs.kernel.org/admin-guide/mm/concepts.html#oom-killer"
KERNEL_BONDING = "https://docs.kernel.org/networking/bonding.html"
