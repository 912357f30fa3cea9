"""The rules engine: a registry of small rule functions, run over Facts (+ Measurements) into ranked Findings.

A rule is a function `fn(ctx) -> Finding | list[Finding] | None` registered with `@rule(...)`, whose
arguments are all keywords: its id, layer, title and source, its priority (one level or one per
environment kind), and optionally the environments it applies to, its controllability (a preset from
gpuwise.advise.controls), references, expected gain. The engine fills those in, so a rule body only
decides *whether* something is wrong and *what* the evidence is (`ctx.finding(status, evidence, text)`).
A rule that raises becomes an info finding "rule X failed", never a crashed doctor.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypedDict

from gpuwise.advise.finding import (
    PRIORITY_ORDER,
    Controllable,
    EnvKind,
    Evidence,
    ExpectedGain,
    Finding,
    Priority,
    Recommendation,
    Status,
)
from gpuwise.i18n import clipped, joined, msg
from gpuwise.layers import Layer
from gpuwise.registry import Registry
from gpuwise.thresholds import Threshold, load_thresholds

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

    from gpuwise.bench.nccl_debug import NcclDebugLog
    from gpuwise.documents.bench import BenchReport
    from gpuwise.facts.models import Facts
    from gpuwise.profile.model import LoadedProfile
    from gpuwise.stability.model import StabilityReport

ALL_ENVS: tuple[EnvKind, ...] = ("cloud", "onprem", "unknown")
RuleFn = Callable[["RuleContext"], "Finding | Iterable[Finding] | None"]


@dataclass(frozen=True, kw_only=True)
class Rule:
    id: str
    layer: Layer
    title: str
    source: str  # the rule's authority: a public document (URL or vendor document and section)
    fn: RuleFn
    environments: tuple[EnvKind, ...] = ALL_ENVS
    priority: dict[str, Priority] = field(default_factory=dict)
    controllable: dict[str, Controllable] = field(default_factory=dict)
    references: tuple[str, ...] = ()
    gain: ExpectedGain | None = None
    affects_numerics: bool = False
    needs_bench: bool = False

    def __call__(self, ctx: RuleContext) -> Finding | Iterable[Finding] | None:
        return self.fn(ctx)

    def priority_for(self, env: EnvKind) -> Priority:
        if env in self.priority:
            return self.priority[env]
        # Unknown environment: do not hide something that would matter in either kind.
        return min(self.priority.values(), key=PRIORITY_ORDER.index)

    def controllable_for(self, env: EnvKind) -> Controllable:
        """Who can change it in `env`, in the active language (presets are marked N_ and translated here)."""
        if env in self.controllable:
            return translated(self.controllable[env])
        if env != "unknown":
            return Controllable(can="yes", reason=msg("a setting on this machine"))
        cloud, onprem = self.controllable.get("cloud"), self.controllable.get("onprem")
        if cloud is None and onprem is None:
            return Controllable(can="yes", reason=msg("a setting on this machine"))
        on_cloud = (
            msg("on a cloud VM {can}: {reason}").format(can=can_word(cloud.can), reason=msg(cloud.reason))
            if cloud
            else msg("on a cloud VM {can}").format(can=can_word("yes"))
        )
        on_own = (
            msg("on your own hardware {can}: {reason}").format(
                can=can_word(onprem.can), reason=msg(onprem.reason)
            )
            if onprem and onprem.can != "yes"
            else msg("on your own hardware {can}").format(can=can_word("yes"))
        )
        alt = msg(cloud.alternative) if cloud and cloud.alternative else None
        reason = msg("environment unknown; {on_cloud}; {on_own}").format(on_cloud=on_cloud, on_own=on_own)
        return Controllable(can="partly", reason=reason, alternative=alt)


def can_word(can: str) -> str:
    """'yes' / 'no' / 'partly' in the active language (the JSON field `can` keeps the English value)."""
    return {"yes": msg("yes"), "no": msg("no"), "partly": msg("partly")}.get(can, can)


def translated(control: Controllable) -> Controllable:
    """A preset (its texts marked N_ at import) with its texts in the active language."""
    return control.model_copy(
        update={
            "reason": msg(control.reason) if control.reason else control.reason,
            "alternative": msg(control.alternative) if control.alternative else control.alternative,
        }
    )


# Every rule module of gpuwise/advise/rules/ (found there, not listed): a rule is a module-level value
# made by @rule. A test passes its own `rules=Registry("doctor rule")` to run_rules.
RULES: Registry[Rule] = Registry(
    "doctor rule", packages=("gpuwise.advise.rules",), item_type=Rule, order=lambda r: r.id
)


class RuleOptions(TypedDict, total=False):
    """What a rule may declare besides its id, layer, title, source and priority (all keywords)."""

    environments: tuple[EnvKind, ...]  # the kinds it applies to (default: all)
    controllable: Mapping[str, Controllable]  # env kind -> who can change it (see advise.controls)
    references: tuple[str, ...]  # links a user can open
    gain: ExpectedGain  # what fixing it typically buys, with its source
    affects_numerics: bool  # following the advice can change results (precision, determinism)
    needs_bench: bool  # judges benchmark results: runs only when there are some


def rule(
    *,
    id: str,
    layer: Layer,
    title: str,
    source: str,
    priority: Priority | Mapping[str, Priority],
    **options: Unpack[RuleOptions],
) -> Callable[[RuleFn], Rule]:
    """Declare a rule: the decorated function becomes a `Rule` (still callable as `rule(ctx)`), which the
    registry collects from its module. `priority` is one level or a mapping env kind -> level."""
    unknown = set(options) - set(RuleOptions.__annotations__)
    if unknown:
        raise TypeError(f"rule {id}: unknown option(s) {joined(', ', sorted(unknown))}")

    def deco(fn: RuleFn) -> Rule:
        prio = {"cloud": priority, "onprem": priority} if isinstance(priority, str) else dict(priority)
        return Rule(
            id=id,
            layer=layer,
            title=title,
            source=source,
            fn=fn,
            environments=tuple(options.get("environments", ALL_ENVS)),
            priority=prio,
            controllable=dict(options.get("controllable") or {}),
            references=tuple(options.get("references", ())),
            gain=options.get("gain"),
            affects_numerics=options.get("affects_numerics", False),
            needs_bench=options.get("needs_bench", False),
        )

    return deco


def registry() -> Registry[Rule]:
    """The default rule registry (every rule module of gpuwise/advise/rules/), by id."""
    return RULES


# ---------------------------------------------------------------- thresholds (data, with sources)


@lru_cache(maxsize=1)
def thresholds() -> dict[str, Threshold]:
    """advise/data/thresholds.yaml: every number (or list, or table) a rule compares against, with its source."""
    return load_thresholds("gpuwise.advise", "data/thresholds.yaml", numbers=False)


# ---------------------------------------------------------------- the context a rule sees


class FindingOverride(TypedDict, total=False):
    """What one finding may set differently from its rule's declaration."""

    title: str
    priority: Priority
    controllable: Controllable
    gain: ExpectedGain
    affects_numerics: bool


class RuleContext:
    """What one rule may read (facts, bench, env, thresholds) and helpers to build its findings."""

    def __init__(
        self,
        facts: Facts,
        bench: BenchReport | None,
        env: EnvKind,
        rule: Rule,
        nccl_logs: tuple[NcclDebugLog, ...] = (),
        profiles: tuple[LoadedProfile, ...] = (),
        stability: StabilityReport | None = None,
    ):
        self.facts = facts
        self.stability = stability  # a gpuwise-stability/1 result of this machine (doctor --stability)
        self.bench = bench
        self.nccl_logs = nccl_logs  # NCCL_DEBUG=INFO logs of the user's runs (doctor --nccl-log)
        self.profiles = profiles  # gpuwise-profile/1 files of the user's training step (doctor --profile)
        self.env = env
        self.rule = rule
        self.used_thresholds: list[Threshold] = []

    def t(self, name: str) -> Any:
        """A threshold's value; its source is cited in the finding's references."""
        th = thresholds()[name]
        if th not in self.used_thresholds:
            self.used_thresholds.append(th)
        return th.value

    def finding(
        self,
        status: Status,
        evidence: Iterable[Evidence | tuple[str, Any]],
        text: str = "",
        *,
        commands: Iterable[str] = (),
        config: Iterable[str] = (),
        env: dict[str, str] | None = None,
        **override: Unpack[FindingOverride],
    ) -> Finding:
        """One finding of this rule: its status, the evidence it read, and what to do (`text` plus the
        commands, config lines and environment variables to set). `override` replaces, for this finding
        only, what the rule declared (title, priority, controllable, gain, affects_numerics)."""
        unknown = set(override) - set(FindingOverride.__annotations__)
        if unknown:
            raise TypeError(f"finding(): unknown override(s) {joined(', ', sorted(unknown))}")
        title = override.get("title")
        priority, controllable = override.get("priority"), override.get("controllable")
        gain, affects_numerics = override.get("gain"), override.get("affects_numerics")
        r = self.rule
        refs = list(r.references) + [
            f"threshold {t.name} = {t.value}{(' ' + t.unit) if t.unit else ''}: {t.source}"
            for t in self.used_thresholds
        ]
        return Finding(
            id=r.id,
            layer=r.layer,
            priority=priority or r.priority_for(self.env),
            status=status,
            title=title or msg(r.title),
            evidence=[e if isinstance(e, Evidence) else ev(*e) for e in evidence],
            recommendation=Recommendation(
                text=text, commands=list(commands), config=list(config), env=dict(env or {})
            ),
            controllable=translated(controllable) if controllable else r.controllable_for(self.env),
            expected_gain=_gain(gain or r.gain),
            affects_numerics=r.affects_numerics if affects_numerics is None else affects_numerics,
            references=refs,
            source=r.source,
        )

    def passed(self, evidence: Iterable[Evidence | tuple[str, Any]], title: str) -> Finding:
        """The rule checked and found nothing wrong: shown as a pass, so the plan says what was checked."""
        return self.finding("pass", evidence, title=title, priority="low")


def _gain(gain: ExpectedGain | None) -> ExpectedGain | None:
    return gain.model_copy(update={"text": msg(gain.text)}) if gain else None


def ev(path: str, value: Any) -> Evidence:
    """Evidence from a fact path; paths starting with 'bench:' are measurements."""
    if path.startswith("bench:"):
        return Evidence(kind="measurement", path=path[len("bench:") :], value=value)
    return Evidence(kind="fact", path=path, value=value)


# ---------------------------------------------------------------- running


def _failed(rule_: Rule, env: EnvKind, exc: Exception) -> Finding:
    return Finding(
        id=rule_.id,
        layer=rule_.layer,
        priority="low",
        status="info",
        title=clipped(
            msg("rule {id} failed: {error}").format(id=rule_.id, error=f"{type(exc).__name__}: {exc}"), 300
        ),
        recommendation=Recommendation(
            text=msg(
                "This check could not run on these facts; the others are unaffected. "
                "Please report it with the capture (`gpuwise capture`)."
            )
        ),
        controllable=Controllable(can="yes", reason=msg("a gpuwise problem, not a machine problem")),
        source=rule_.source,
    )


def run_rules(
    facts: Facts,
    bench: BenchReport | None,
    env_kind: EnvKind,
    rules: Iterable[Rule] | Registry[Rule] | None = None,
    nccl_logs: Iterable[NcclDebugLog] = (),
    profiles: Iterable[LoadedProfile] = (),
    stability: StabilityReport | None = None,
) -> list[Finding]:
    """Run every applicable rule and return the findings ranked (priority, status, layer, id)."""
    out: list[Finding] = []
    logs, profs = tuple(nccl_logs), tuple(profiles)
    chosen = RULES if rules is None else rules
    for r in sorted(chosen.values() if isinstance(chosen, Registry) else chosen, key=lambda r: r.id):
        if env_kind not in r.environments or (r.needs_bench and bench is None):
            continue
        ctx = RuleContext(facts, bench, env_kind, r, logs, profs, stability)
        try:
            result = r.fn(ctx)
            if result is None:
                continue
            items = [result] if isinstance(result, Finding) else list(result)
            for item in items:
                if not isinstance(item, Finding):
                    raise TypeError(f"rule returned {type(item).__name__}, not a Finding")
            out.extend(items)
        except Exception as exc:  # a rule bug must not sink the doctor
            out.append(_failed(r, env_kind, exc))
    return sorted(out, key=Finding.sort_key)
