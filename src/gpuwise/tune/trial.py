"""Run one trial in its own process group with a hard timeout, and type how it ended.

A trial is `python -m gpuwise.tune.worker CONFIG.json` (one process per rank for data parallel, all
in one process group). Its progress lines come back as StepRecords; `on_step` may return True to stop
it early (pruning). A hang past the timeout, a crash, an out-of-memory kill or an exception becomes a
failed TrialOutcome with its kind and reason, and the whole group is killed, so nothing it started
(DataLoader workers, other ranks) outlives it. Each trial keeps a folder with its command, config,
stdout/stderr and result (the layout DeepSpeed Autotuning keeps per experiment).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.i18n import N_
from gpuwise.workloads.loop import StepRecord

PREFIX = "gpuwise-tune "


@dataclass
class TrialOutcome:
    status: str  # ok | failed | pruned
    steps: list[StepRecord] = field(default_factory=list)
    info: dict = field(default_factory=dict)
    failure: str | None = None  # oom | timeout | compile | distributed | crash | error
    reason: str | None = None  # in English, as the study stores it
    reason_msg: list | None = None  # [msgid, {args}]: the reason, worded again in the reader's language
    wall_s: float = 0.0


def because(msgid: str, **args) -> dict:
    """A trial's reason: the English text and its message (marked with N_), so a report can word it in
    its own language while the study keeps English (a study may be resumed under another --lang)."""
    return {"reason": msgid.format(**args), "reason_msg": [msgid, args]}


def parse_line(line: str) -> StepRecord | None:
    """A worker progress line -> StepRecord; anything else (the script's own output) -> None."""
    if not line.startswith(PREFIX):
        return None
    fields = dict(part.split("=", 1) for part in line[len(PREFIX) :].split() if "=" in part)
    try:
        return StepRecord(
            index=int(fields["step"]),
            seconds=float(fields["seconds"]),
            data_wait_s=float(fields.get("data_wait_s", 0.0)),
            loss=float(fields.get("loss", "nan")),
        )
    except (KeyError, ValueError):
        return None


def classify(error: dict | None, returncode: int | None, stderr_tail: str) -> tuple[str, str]:
    """(failure kind, reason) from the worker's error record, exit code and stderr (rule T2)."""
    kind, why = typed(error, returncode, stderr_tail)
    return kind, why["reason"]


def typed(error: dict | None, returncode: int | None, stderr_tail: str) -> tuple[str, dict]:
    """classify, with the reason as because() returns it."""
    etype = (error or {}).get("type", "")
    text = f"{etype}: {(error or {}).get('message', '')}\n{(error or {}).get('traceback', '')}\n{stderr_tail}"
    lowered = text.lower()
    if "outofmemoryerror" in lowered or "out of memory" in lowered or returncode in (-9, 137):
        if returncode in (-9, 137) and not error:
            return "oom", because(N_("out of memory: killed by SIGKILL (the kernel's OOM killer)"))
        return "oom", because(N_("out of memory: {error}"), error=etype or "out of memory")
    if (
        etype in ("BackendCompilerFailed", "InductorError")
        or "torch._inductor" in text
        or "torch._dynamo" in text
    ):
        return "compile", because(N_("torch.compile failed: {error}"), error=_first_line(error, stderr_tail))
    if "nccl" in lowered or "distbackenderror" in lowered or "gloo" in lowered:
        return "distributed", because(N_("collective failed: {error}"), error=_first_line(error, stderr_tail))
    if error:
        return "error", {"reason": f"{etype}: {error.get('message', '')}"[:400]}  # the exception, quoted
    if returncode is not None and returncode < 0:
        return "crash", because(N_("killed by signal {signal}"), signal=signal.Signals(-returncode).name)
    return "crash", because(
        N_("exited with code {code} and no result; stderr: {stderr}"),
        code=returncode,
        stderr=stderr_tail[-300:],
    )


def _first_line(error: dict | None, stderr_tail: str) -> str:
    if error:
        return f"{error.get('type')}: {error.get('message', '').strip().splitlines()[0] if error.get('message') else ''}"[
            :300
        ]
    return stderr_tail.strip().splitlines()[-1][:300] if stderr_tail.strip() else "no message"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _reader(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def run_trial(
    config: dict,
    folder: Path,
    *,
    timeout_s: float,
    nproc: int = 1,
    env: dict[str, str] | None = None,
    rank_prefix: Callable[[int], list[str]] | None = None,
    master_addr: str = "127.0.0.1",
    on_step: Callable[[StepRecord], bool] | None = None,
) -> TrialOutcome:
    """Run `config` (see worker.py) in `nproc` rank processes under `folder`; never raises for the trial's own faults."""
    folder.mkdir(parents=True, exist_ok=True)
    config = {**config, "result_path": str(folder / "result.json")}
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    (folder / "result.json").unlink(missing_ok=True)
    base_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    base_env["GPUWISE_TUNE_CONFIG"] = str(folder / "config.json")  # command mode: the script reads its knobs
    if nproc > 1:
        base_env.update(MASTER_ADDR=master_addr, MASTER_PORT=str(_free_port()), WORLD_SIZE=str(nproc))
    # command mode: the user's own command (it applies the knobs it reads and reports its steps);
    # spec mode: gpuwise's worker runs the spec in gpuwise's loop
    cmd = config.get("command") or [sys.executable, "-m", "gpuwise.tune.worker", str(folder / "config.json")]
    if config.get("command") and nproc > 1:
        nproc = 1  # the command launches its own ranks (torchrun); gpuwise runs it once
    procs, handles, pgid = [], [], None
    started = time.monotonic()
    outcome = TrialOutcome(status="failed")
    lines: queue.Queue = queue.Queue()
    try:
        for rank in range(nproc):
            rank_env = {**base_env, "RANK": str(rank), "LOCAL_RANK": str(rank)} if nproc > 1 else base_env
            full = (rank_prefix(rank) if rank_prefix else []) + cmd
            (folder / f"cmd.rank{rank}.txt").write_text(" ".join(full) + "\n", encoding="utf-8")
            group = {"process_group": 0 if pgid is None else pgid}  # one group: all ranks die together
            err = open(folder / f"stderr.rank{rank}.txt", "w")  # noqa: SIM115 (closed in finally)
            out = subprocess.PIPE if rank == 0 else open(folder / f"stdout.rank{rank}.txt", "w")  # noqa: SIM115
            handles += [err] if rank == 0 else [err, out]
            proc = subprocess.Popen(full, env=rank_env, stdout=out, stderr=err, text=True, **group)
            pgid = pgid or proc.pid
            procs.append(proc)
        threading.Thread(target=_reader, args=(procs[0].stdout, lines), daemon=True).start()
        enough = config["steps"] if config.get("command") else None
        outcome = _follow(procs, lines, folder, started + timeout_s, timeout_s, on_step, enough)
    finally:
        if pgid is not None:
            _kill_group(pgid)  # DataLoader workers and other ranks go with the trial
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
        for handle in handles:
            handle.close()
    outcome.wall_s = round(time.monotonic() - started, 2)
    return outcome


def _follow(
    procs, lines: queue.Queue, folder: Path, deadline: float, timeout_s: float, on_step, enough=None
) -> TrialOutcome:
    steps: list[StepRecord] = []
    with open(folder / "stdout.rank0.txt", "w", encoding="utf-8") as log:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return TrialOutcome(
                    "failed",
                    steps,
                    failure="timeout",
                    **because(N_("no result within {seconds} s (killed)"), seconds=f"{timeout_s:.0f}"),
                )
            try:
                line = lines.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                continue
            if line is None:
                break
            log.write(line)
            rec = parse_line(line.strip())
            if rec is not None:
                steps.append(rec)
                if enough is not None and len(steps) >= enough:
                    return TrialOutcome("ok", steps, info={"note": f"stopped after {enough} reported steps"})
                if on_step and on_step(rec):
                    return TrialOutcome(
                        "pruned",
                        steps,
                        **because(N_("slower than the median of earlier trials at this step")),
                    )
    for proc in procs:
        try:
            proc.wait(max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return TrialOutcome(
                "failed",
                steps,
                failure="timeout",
                **because(N_("no exit within {seconds} s (killed)"), seconds=f"{timeout_s:.0f}"),
            )
    result_path = folder / "result.json"
    result = json.loads(result_path.read_text(encoding="utf-8")) if result_path.exists() else None
    if result and "info" in result and procs[0].returncode == 0 and all(p.returncode == 0 for p in procs):
        return TrialOutcome("ok", steps, info=result["info"])
    stderr_tail = (folder / "stderr.rank0.txt").read_text(encoding="utf-8", errors="replace")[-3000:]
    bad = next((p.returncode for p in procs if p.returncode != 0), procs[0].returncode)
    kind, why = typed((result or {}).get("error"), bad, stderr_tail)
    return TrialOutcome("failed", steps, failure=kind, **why)
