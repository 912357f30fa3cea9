"""Monitoring: a Prometheus collector over live NVML or recorded data, tuning signals, and `watch` sessions.

Layering: export sits above capture/facts/catalog/bench and below advise/plan; it never imports advise,
plan, report, pipeline or commands. NVML is read only through gpuwise.capture.nvml.

  sample.py      Snapshot / GpuSample: one reading of every GPU (what every source produces)
  sources.py     where readings come from: live NVML, a capture, nvidia-smi --query-gpu CSV or dmon
  replay_*.py    parsers of recorded text into Snapshots
  signals.py     tuning signals (idle while held, data-starved, power/thermal limited, ...) from data/
  collector.py   the prometheus-client Collector: dcgm-exporter names plus gpuwise_* metrics
  serve.py       HTTP (optional basic auth / TLS) and node_exporter textfile output
  watch.py       a watch session: sample while a process runs, keep samples, summarise
"""
