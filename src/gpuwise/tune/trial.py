"""Run one trial in its own process group with a hard timeout, and type how it ended.

A trial is gpuwise.tune.worker on CONFIG.json, forked from a forkserver with torch imported
(preloaded.py), or `python -m gpuwise.tune.worker CONFIG.json` where a rank prefix (netns) needs an
exec; a command-mode trial is the user's command. One process per rank for data parallel. Its progress
lines come back as StepRecords; `on_step` may return True to stop it early (pruning). A hang past the
timeout, a crash, an out-of-memory kill or an exception becomes a failed TrialOutcome with its kind and reason, and the whole group is killed, so nothing it started
(DataLoader workers, other ranks) outlives it. Each trial keeps a folder with its command, config,
stdout/stderr and result (the layout DeepSpeed Autotuning keeps per experiment).
"""

from __future__ import annotations

import contextlib
import json
import math
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

from gpuwise.i18n import N_, joined
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
    ignored_lines: int = 0  # progress lines that were not a valid step (not finite/positive, or too long)


def because(msgid: str, **args) -> dict:
    """A trial's reason: the English text and its message (marked with N_), so a report can word it in
    its own language while the study keeps English (a study may be resumed under another --lang)."""
    return {"reason": msgid.format(**args), "reason_msg": [msgid, args]}


MAX_LINE = 4096  # bytes: a progress line is about 100; a longer line is dropped unread, never stored
MAX_LOG = 8 << 20  # bytes of rank 0's output kept in stdout.rank0.txt (the rest is counted, not written)


class BadLine(ValueError):
    """A progress line (it starts with the prefix) whose values cannot be a training step."""


@dataclass(frozen=True)
class Oversized:
    """What the reader hands on instead of a line longer than MAX_LINE: its size only."""

    size: int


def _number(fields: dict, name: str, default: str | None = None, *, zero_ok: bool = False) -> float:
    raw = fields.get(name, default)
    if raw is None:
        raise BadLine(f"no {name}=")
    try:
        value = float(raw)
    except ValueError:
        raise BadLine(f"{name}={raw[:20]} is not a number") from None
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
        raise BadLine(f"{name}={raw[:20]} is not a finite {'non-negative' if zero_ok else 'positive'} number")
    return value


def parse_line(line: str) -> StepRecord | None:
    """A worker progress line -> StepRecord; anything else (the script's own output) -> None. A line with
    the prefix whose values are not finite, positive step times raises BadLine (the trial counts it)."""
    if not line.startswith(PREFIX):
        return None
    fields = dict(part.split("=", 1) for part in line[len(PREFIX) :].split() if "=" in part)
    step = _number(fields, "step", zero_ok=True)
    if step != int(step):
        raise BadLine(f"step={fields['step'][:20]} is not a whole number")
    if "samples" in fields:
        _number(fields, "samples")
    seconds = _number(fields, "seconds")
    data_wait = _number(fields, "data_wait_s", "0", zero_ok=True)
    if data_wait > seconds:
        raise BadLine("data_wait_s is longer than the step")
    try:
        loss = float(fields.get("loss", "nan"))  # a diverged loss is information: the guard reads it
    except ValueError:
        raise BadLine("loss is not a number") from None
    return StepRecord(index=int(step), seconds=seconds, data_wait_s=data_wait, loss=loss)


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
    """Hand on rank 0's output line by line, reading at most MAX_LINE + 1 bytes at a time: a longer
    line is skipped to its end and handed on as its size (memory stays bounded whatever the line)."""
    while chunk := stream.readline(MAX_LINE + 1):
        if len(chunk) <= MAX_LINE:
            lines.put(chunk.decode("utf-8", "replace"))
            continue
        size = len(chunk)
        while not chunk.endswith(b"\n") and (chunk := stream.readline(1 << 16)):
            size += len(chunk)
        lines.put(Oversized(size))
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
    preloaded: bool | None = None,
) -> TrialOutcome:
    """Run `config` (see worker.py) in `nproc` rank processes under `folder`; never raises for the trial's
    own faults. `preloaded` forks the ranks from the forkserver with torch imported (default: in spec
    mode without a rank prefix); False starts `python -m gpuwise.tune.worker` (benchmarks compare)."""
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
    # spec mode without a rank prefix (netns, taskset) forks from the preloaded forkserver: a fork, not
    # a Python start and a torch import (see preloaded.py); a prefix or a command needs a real exec
    forked = preloaded if preloaded is not None else not config.get("command") and rank_prefix is None
    procs, handles, pgid = [], [], None
    started = time.monotonic()
    outcome = TrialOutcome(status="failed")
    lines: queue.Queue = queue.Queue()
    try:
        for rank in range(nproc):
            rank_env = {**base_env, "RANK": str(rank), "LOCAL_RANK": str(rank)} if nproc > 1 else base_env
            if forked:
                from gpuwise.tune.preloaded import Forked

                (folder / f"cmd.rank{rank}.txt").write_text(
                    f"(forked from the preloaded forkserver) {joined(' ', cmd)}\n", encoding="utf-8"
                )
                out_path = str(folder / f"stderr.rank{rank}.txt")  # its stdout and stderr both
                procs.append(Forked(str(folder / "config.json"), rank_env, out_path))
                handles.append(procs[-1])
                continue
            full = (rank_prefix(rank) if rank_prefix else []) + cmd
            (folder / f"cmd.rank{rank}.txt").write_text(joined(" ", full) + "\n", encoding="utf-8")
            group = {"process_group": 0 if pgid is None else pgid}  # one group: all ranks die together
            err = open(folder / f"stderr.rank{rank}.txt", "w")  # noqa: SIM115 (closed in finally)
            out = subprocess.PIPE if rank == 0 else open(folder / f"stdout.rank{rank}.txt", "w")  # noqa: SIM115
            handles += [err] if rank == 0 else [err, out]
            proc = subprocess.Popen(full, env=rank_env, stdout=out, stderr=err, **group)
            pgid = pgid or proc.pid
            procs.append(proc)
        if forked:
            from gpuwise.tune.preloaded import read_lines

            reader = (read_lines, (procs[0].conn, lines.put))
        else:
            reader = (_reader, (procs[0].stdout, lines))
        threading.Thread(target=reader[0], args=reader[1], daemon=True).start()
        enough = config["steps"] if config.get("command") else None
        outcome = _follow(procs, lines, folder, started + timeout_s, timeout_s, on_step, enough)
    finally:
        if pgid is not None:
            _kill_group(pgid)  # DataLoader workers and other ranks go with the trial
        for proc in procs if forked else ():
            _kill_group(proc.pid)  # each forked rank leads its own session
            proc.kill()  # and itself, in case it was stopped before it called setsid
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
        for handle in handles:
            handle.close()
    outcome.wall_s = round(time.monotonic() - started, 2)
    return outcome


def _tail(path: Path, size: int) -> str:
    """The last `size` bytes of a file as text (a trial may write gigabytes to stderr)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - size))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _follow(
    procs, lines: queue.Queue, folder: Path, deadline: float, timeout_s: float, on_step, enough=None
) -> TrialOutcome:
    steps: list[StepRecord] = []
    ignored, logged = 0, 0

    def done(status: str, **kw) -> TrialOutcome:
        return TrialOutcome(status, steps, ignored_lines=ignored, **kw)

    with open(folder / "stdout.rank0.txt", "w", encoding="utf-8") as log:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return done(
                    "failed",
                    failure="timeout",
                    **because(N_("no result within {seconds} s (killed)"), seconds=f"{timeout_s:.0f}"),
                )
            try:
                line = lines.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                continue
            if line is None:
                break
            if isinstance(line, Oversized):
                ignored += 1
                line = f"[gpuwise: a line of {line.size} bytes, over {MAX_LINE}, was not kept]\n"
            if logged < MAX_LOG:
                log.write(line if logged + len(line) < MAX_LOG else "[gpuwise: output cut here]\n")
                logged += len(line)
            try:
                rec = parse_line(line.strip())
            except BadLine:
                ignored += 1
                continue
            if rec is not None:
                steps.append(rec)
                if enough is not None and len(steps) >= enough:
                    return done("ok", info={"note": f"stopped after {enough} reported steps"})
                if on_step and on_step(rec):
                    return done(
                        "pruned",
                        **because(N_("slower than the median of earlier trials at this step")),
                    )
    for proc in procs:
        try:
            proc.wait(max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return done(
                "failed",
                failure="timeout",
                **because(N_("no exit within {seconds} s (killed)"), seconds=f"{timeout_s:.0f}"),
            )
    result_path = folder / "result.json"
    result = json.loads(result_path.read_text(encoding="utf-8")) if result_path.exists() else None
    if result and "info" in result and procs[0].returncode == 0 and all(p.returncode == 0 for p in procs):
        return done("ok", info=result["info"])
    stderr_tail = _tail(folder / "stderr.rank0.txt", 3000)
    bad = next((p.returncode for p in procs if p.returncode != 0), procs[0].returncode)
    kind, why = typed((result or {}).get("error"), bad, stderr_tail)
    return done("failed", failure=kind, **why)
