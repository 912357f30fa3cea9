#!/usr/bin/env bash
# Exercise every GPU path of `gpuwise bench` on a GPU machine (written for a lent H200) in one go,
# and leave everything under $OUT: environment, a `gpuwise capture`, bench JSON + tables, the
# gpu-marked pytest run, and the harness-overhead comparison. Each step has its own timeout and a
# failing step does not stop the others; the exit code is the number of failed steps.
#
#   OUT=/tmp/out bash benchmarks/gpu_check.sh   # step timeouts sum to 540 s: with machine start-up it fits a 15-minute device lease
#   DATA_DIR=/mnt/nvme OUT=... bash benchmarks/gpu_check.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
DATA_DIR=${DATA_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$OUT"
failed=0

step() {  # step NAME TIMEOUT_S COMMAND...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$OUT/$name.txt" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - start))s" | tee -a "$OUT/steps.txt"
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
}

# gpuwise importable: installed, or straight from this checkout
if ! python -c "import gpuwise" 2>/dev/null; then
  export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
fi
GPUWISE=(python -m gpuwise.cli)

step env 30 bash -c 'nvidia-smi; nvidia-smi topo -m; python -c "import torch, sys; print(sys.version); \
print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.device_count()); \
[print(i, torch.cuda.get_device_name(i), torch.cuda.get_device_capability(i)) for i in range(torch.cuda.device_count())]"'
if ! python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "torch has no CUDA here: install the torch build matching the driver, then rerun" | tee -a "$OUT/steps.txt"
fi

step capture 60 "${GPUWISE[@]}" capture -o "$OUT/h200.tar.gz"
step bench-quick 180 "${GPUWISE[@]}" bench --quick --data-dir "$DATA_DIR" --json "$OUT/bench-quick.json"
step pytest-gpu 150 python -m pytest -q -p no:cacheprovider -m gpu tests/bench/test_gpu_paths.py
step harness-overhead 120 python benchmarks/bench_harness_overhead.py --rounds 4

# the two numbers the issue asks for, pulled out of the JSON
python - "$OUT/bench-quick.json" >"$OUT/summary.txt" 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for m in doc["results"]:
    if m["status"] != "skipped":
        pct = f'{m["percent_of_peak"]:.1f}%' if m["percent_of_peak"] is not None else "no peak"
        print(f'{m["name"]:<28} {m["status"]:<8} {m["value"] if m["value"] is not None else "-":>14} {m["unit"]:<10} {pct}')
PY
cat "$OUT/summary.txt" "$OUT/steps.txt"
exit "$failed"
