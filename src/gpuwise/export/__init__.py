"""Monitoring: a Prometheus collector over live NVML or recorded data, tuning signals, and `watch` sessions.

Layering: export sits above capture/facts/catalog/bench and below advise/plan; it never imports advise,
plan, report, pipeline or commands. NVML is read only through gpuwise.capture.nvml.

  sample.py      Snapshot / GpuSample: one reading of every GPU (what every source produces)
  sources.py     where readings come from: live NVML (+ psutil per GPU process) or a replayed recording
  replay_xml.py  recorded `nvidia-smi -q -x` (what a capture holds) -> Snapshot
  replay_csv.py  recorded `nvidia-smi --query-gpu ... --format=csv` and `nvidia-smi dmon` -> Snapshots
  processes.py   CPU share, I/O wait and RSS of the processes using a GPU
  signals.py     tuning signals (idle while held, data-starved, power/thermal limited, ...) from data/
  collector.py   the prometheus-client Collector: dcgm-exporter names plus gpuwise_* metrics
  serve.py       HTTP (optional basic auth / TLS) and node_exporter textfile output
  recording.py   `watch --record` files, written to a temporary file and renamed into place
  watch.py       a watch session: sample while a process runs, then summarise
"""
