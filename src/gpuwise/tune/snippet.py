"""The winning setting as paste-ready Python, environment variables and YAML.

The code stays as it is in every language; its comment lines are for the person pasting it, so they
follow --lang (the YAML and the environment lines have none).
"""

from __future__ import annotations

from gpuwise.i18n import N_, _

PRECISION_LINES = {
    "tf32": ["torch.backends.cuda.matmul.allow_tf32 = True", "torch.backends.cudnn.allow_tf32 = True"],
    "bf16": [
        N_("# wrap the forward pass and the loss:"),
        'with torch.autocast("DEVICE", dtype=torch.bfloat16):',
        "    loss = compute_loss(model, batch)",
    ],
    "fp16": [
        'scaler = torch.amp.GradScaler("DEVICE")',
        'with torch.autocast("DEVICE", dtype=torch.float16):',
        "    loss = compute_loss(model, batch)",
        "scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()",
    ],
    "fp8": ["from torchao.float8 import convert_to_float8_training", "convert_to_float8_training(model)"],
}


def python_lines(changes: dict, device: str, batch_size: int) -> list[str]:
    """Python for the non-baseline values in `changes` (knob name -> value)."""
    lines: list[str] = []
    if "precision" in changes:
        lines += [
            _(line) if line.startswith("#") else line.replace("DEVICE", device)
            for line in PRECISION_LINES.get(changes["precision"], [])
        ]
    if changes.get("cudnn_benchmark"):
        lines.append("torch.backends.cudnn.benchmark = True")
    if changes.get("channels_last"):
        lines.append(
            "model = model.to(memory_format=torch.channels_last)  " + _("# and images.to(memory_format=...)")
        )
    if changes.get("checkpointing"):
        lines.append(
            _("# wrap each marked block: {call}").format(
                call="torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)"
            )
        )
    impl = changes.get("optimizer_impl")
    if impl in ("foreach", "fused"):
        lines.append(f"optimizer = torch.optim.AdamW(model.parameters(), lr=..., {impl}=True)")
    ddp = {
        k: changes[k] for k in ("bucket_cap_mb", "gradient_as_bucket_view", "static_graph") if k in changes
    }
    if ddp:
        args = ", ".join(f"{k}={v!r}" for k, v in ddp.items())
        lines.append(f"model = DistributedDataParallel(model, {args})")
    hook = changes.get("comm_hook")
    if hook in ("fp16", "bf16"):
        lines.append("from torch.distributed.algorithms.ddp_comm_hooks import default_hooks")
        lines.append(f"model.register_comm_hook(None, default_hooks.{hook}_compress_hook)")
    elif hook and hook.startswith("powersgd-"):
        lines += [
            "from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as ps",
            f"state = ps.PowerSGDState(process_group=None, matrix_approximation_rank={hook.split('-')[1]}, "
            "start_powerSGD_iter=1000)",
            "model.register_comm_hook(state, ps.powerSGD_hook)",
        ]
    if "compile" in changes and changes["compile"] != "off":
        mode = "" if changes["compile"] == "default" else f', mode="{changes["compile"]}"'
        lines.append(f"model = torch.compile(model{mode})")
    loader = {
        k: changes[k]
        for k in ("num_workers", "pin_memory", "prefetch_factor", "persistent_workers")
        if k in changes
    }
    if loader:
        args = ", ".join(f"{k}={v!r}" for k, v in loader.items())
        lines.append(f"loader = DataLoader(dataset, batch_size=..., {args})")
    accum = changes.get("accumulation")
    if accum and accum > 1:
        lines.append(
            _(
                "# gradient accumulation: {accum} micro-batches of {micro} per optimizer step "
                "(global batch {batch}); divide each micro-batch loss by {accum}"
            ).format(accum=accum, micro=batch_size // accum, batch=batch_size)
        )
    return lines


def env_lines(changes: dict) -> list[str]:
    return [f"export {k}={v}" for k, v in changes.items() if k.isupper() and v != "default"]


def yaml_lines(changes: dict) -> list[str]:
    import yaml

    if not changes:
        return []
    return yaml.safe_dump({"gpuwise_tune": dict(changes)}, sort_keys=False).splitlines()
