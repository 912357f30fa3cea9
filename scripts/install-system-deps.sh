#!/usr/bin/env bash
# Debian packages gpuwise's tests and benchmarks use: fio (storage bench), numactl, pciutils (lspci),
# iproute2 (ip, tc, network namespaces), chromium (opens --format html reports headless in tests),
# slurm-wlm and munge (the fleet tests' real Slurm cluster), prometheus (the server and promtool, for the
# exporter's tests), a CJK font (fonts-wqy-microhei: Chromium draws --lang zh-CN reports with it instead of
# empty boxes), shellcheck (the launch tests lint every script launch generates). Installs what is missing
# when run as root with apt-get; otherwise says what to install and carries on (the tests that need a tool
# skip without it).
set -u
need=()
command -v fio >/dev/null || need+=(fio)
command -v numactl >/dev/null || need+=(numactl)
command -v lspci >/dev/null || need+=(pciutils)
command -v tc >/dev/null || need+=(iproute2)
command -v chromium >/dev/null || need+=(chromium)
command -v slurmctld >/dev/null || need+=(slurm-wlm)
command -v munged >/dev/null || need+=(munge)
command -v promtool >/dev/null || need+=(prometheus)
command -v shellcheck >/dev/null || need+=(shellcheck)
{ command -v fc-list >/dev/null && fc-list :lang=zh | grep -q .; } || need+=(fonts-wqy-microhei)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "installing Debian packages: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
else
  echo "note: missing tools: ${need[*]}; install them with: sudo apt-get install ${need[*]}" >&2
fi
exit 0
