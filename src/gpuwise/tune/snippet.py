"""The winning setting as paste-ready Python, environment variables and YAML.

The code stays as it is in every language; its comment lines are for the person pasting it, so they
follow --lang (the YAML and the environment lines have none).
"""

from __future__ import annotations

from gpuwise.i18n import joined
from gpuwise.registry import Registry
from gpuwise.tune.knob_plugins import KNOB_CODE, KnobCode


def python_lines(
    changes: dict, device: str, batch_size: int, code: Registry[KnobCode] | None = None
) -> list[str]:
    """Python for the non-baseline values in `changes` (knob name -> value), each knob's lines from its
    KnobCode (tune/knob_plugins/), in their order; knobs that are keywords of one call share its line."""
    registry = code if code is not None else KNOB_CODE
    lines: list[str] = []
    calls: dict[str, list[str]] = {}  # a shared call -> its keywords so far (the line is placed once)
    for knob in registry.values():
        if knob.name not in changes:
            continue
        value = changes[knob.name]
        if knob.argument_of is not None:
            if knob.argument_of not in calls:
                calls[knob.argument_of] = []
                lines.append(knob.argument_of)  # filled in below
            calls[knob.argument_of].append(f"{knob.name}={value!r}")
        elif knob.python is not None:
            lines += knob.python(value, device, batch_size)
    return [line.format(args=joined(", ", calls[line])) if line in calls else line for line in lines]


def env_lines(changes: dict, code: Registry[KnobCode] | None = None) -> list[str]:
    registry = code if code is not None else KNOB_CODE
    env = {k.name for k in registry.values() if k.env}
    return [f"export {k}={v}" for k, v in changes.items() if k in env and v != "default"]


def yaml_lines(changes: dict) -> list[str]:
    import yaml

    if not changes:
        return []
    return yaml.safe_dump({"gpuwise_tune": dict(changes)}, sort_keys=False).splitlines()
