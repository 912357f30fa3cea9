#!/usr/bin/env bash
# Every GPU-only check of gpuwise in one go, for a lent GPU machine (written for an H200):
# a `gpuwise capture` (NVML + nvidia-smi XML both recorded, so their agreement can be checked
# anywhere later), live probe JSON, the gpu-marked tests, `gpuwise bench --quick`, the harness
# overhead comparison, and doctor on the capture with the bench results. Each step has its own
# timeout and a failing step does not stop the others; the exit code is the number of failed steps.
# Everything lands in $OUT as at most 8 files: log.txt (all step output), h200.tar.gz,
# probe.json, bench-quick.json, doctor.txt, summary.txt, tune-gpt.json, tune-gpt.txt.
# tune-gpt: `gpuwise tune --workload gpt-small` from its fp32 baseline; tune-gpt.txt (also in summary.txt)
# has the winner's speedup with its interval, the knobs that gave it, and each one-knob probe's speedup.
#
#   OUT=/tmp/out bash benchmarks/gpu_check.sh        # step timeouts sum to 810 s
#   DATA_DIR=/mnt/nvme OUT=... bash benchmarks/gpu_check.sh
#   ONLY=tune TUNE_TRIALS=3 TUNE_STEPS=5 TUNE_LIMIT=900 TUNE_TIMEOUT=400 OUT=/tmp/out bash benchmarks/gpu_check.sh
#       (the tune steps alone; on a CPU-only machine this is the dry path: the CPU gpt-small)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
DATA_DIR=${DATA_DIR:-${TMPDIR:-/tmp}}
PY=${PYTHON:-$(command -v python3 || command -v python)}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
LOG="$OUT/log.txt"
failed=0

step() {  # step NAME TIMEOUT_S COMMAND...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  echo "===== $name (limit ${limit}s)" >>"$LOG"
  timeout --kill-after=10 "$limit" "$@" >>"$LOG" 2>&1
  local rc=$?
  echo "===== $name rc=$rc $((SECONDS - start))s" | tee -a "$LOG" >>"$OUT/summary.txt"
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
}

# gpuwise importable: installed, or straight from this checkout
"$PY" -c "import gpuwise" 2>/dev/null || export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
GW=("$PY" -m gpuwise.cli)

if [ "${ONLY:-all}" = all ]; then
step env 60 bash -c "nvidia-smi; nvidia-smi topo -m; $PY -c 'import torch, sys; print(sys.version); \
print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.device_count()); \
[print(i, torch.cuda.get_device_name(i), torch.cuda.get_device_capability(i)) for i in range(torch.cuda.device_count())]'"
step capture 90 "${GW[@]}" capture -o "$OUT/h200.tar.gz"
step probe 60 bash -c "${GW[*]} probe --json > $OUT/probe.json && ${GW[*]} probe"
step pytest-gpu 150 "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/facts/test_nvml.py tests/bench/test_gpu_paths.py tests/tune/test_gpu_loop.py
step bench-quick 240 "${GW[@]}" bench --quick --data-dir "$DATA_DIR" --save "$OUT/bench-quick.json"
step doctor 60 bash -c "${GW[*]} doctor --from $OUT/h200.tar.gz --bench-results $OUT/bench-quick.json > $OUT/doctor.txt; test \$? -le 2"
step harness-overhead 120 "$PY" benchmarks/bench_harness_overhead.py --rounds 3
fi
# tune from an fp32 baseline (needs the tune extra: optuna): which knobs buy what on this GPU. A fresh
# study each run (the storage is removed first), so a rerun measures again instead of resuming.
TUNE_DIR="${TMPDIR:-/tmp}/gw-tune-gpu"
rm -rf "$TUNE_DIR"
step tune-gpt "${TUNE_LIMIT:-300}" "${GW[@]}" tune --workload gpt-small --trials "${TUNE_TRIALS:-8}" --steps "${TUNE_STEPS:-10}" \
  --timeout "${TUNE_TIMEOUT:-120}" --study gpu-check --storage "$TUNE_DIR/tune.sqlite3" --format json -o "$OUT/tune-gpt.json"
step tune-summary 30 bash -c "$PY benchmarks/tune_gpu_summary.py $OUT/tune-gpt.json > $OUT/tune-gpt.txt"
cat "$OUT/tune-gpt.txt" >>"$OUT/summary.txt" 2>/dev/null

[ "${ONLY:-all}" = all ] || { cat "$OUT/summary.txt"; exit "$failed"; }
# one line per result, for the note
"$PY" - "$OUT/bench-quick.json" >>"$OUT/summary.txt" 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for m in doc["results"]:
    pct = f'{m["percent_of_peak"]:.1f}%' if m["percent_of_peak"] is not None else "no peak"
    val = f'{m["value"]:.4g}' if m["value"] is not None else "-"
    print(f'{m["name"]:<30} {m["status"]:<8} {val:>12} {m["unit"]:<10} {pct:<8} {m.get("reason") or ""}')
PY
cat "$OUT/summary.txt"
exit "$failed"
