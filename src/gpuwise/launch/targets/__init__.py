"""Launch targets: one module per target in this package, each declaring `TARGET = SomeTarget()`.

A `Target` says what it can do as data (its `unsupported` features, each with the reason a user is
shown; the flags only it reads) and implements what `gpuwise launch` dispatches to: `build` (the dry
run: files and what would be created), `create` (--yes) and `down` (--down ID). An ID names its
target: `slurm:JOBID`, `skypilot:CLUSTER`, `tencent:REGION/ins-a,ins-b`, `alibaba:REGION/i-a,i-b`. Which catalog providers a
target launches on is data in catalog/launchable.py (plan reads it, below this layer).

Every check of a flag against a target is here (`check_flags`), so a flag a target does not use is an
error naming the target and its reason, never silently ignored. The module's name is the target's name,
so --help lists targets without importing them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, ClassVar

from gpuwise.errors import UserInputError
from gpuwise.i18n import N_, joined, msg
from gpuwise.launch import steps
from gpuwise.registry import Registry, named_after_module

if TYPE_CHECKING:
    from gpuwise.launch.build import LaunchOptions
    from gpuwise.launch.model import LaunchPlan


class Feature(str, Enum):
    """What `gpuwise launch` may ask of a target besides the dry run every target has."""

    CREATE = "create"  # --yes: create what the dry run showed
    WAIT = "wait"  # --wait / --wait-timeout: follow the job to its end and exit with its result
    DOWN = "down"  # --down ID: delete what a launch created


# the flags that ask for a feature (a target without the feature refuses them)
FEATURE_FLAGS: dict[str, Feature] = {
    "--yes": Feature.CREATE,
    "--wait": Feature.WAIT,
    "--wait-timeout": Feature.WAIT,
    "--down": Feature.DOWN,
}


class Target(ABC):
    """One place a job can be launched. Subclasses set the class attributes and implement `build`."""

    name: ClassVar[str]  # what --target takes, the launch ID's prefix, and the module's name
    label: ClassVar[str]  # "Slurm", in messages
    id_form: ClassVar[str]  # the launch ID's form for --down, e.g. "slurm:JOBID"
    # the flags only this target reads, e.g. ("--zone",); any other target refuses them
    options: ClassVar[tuple[str, ...]] = ()
    # features this target does not have -> why (N_-marked; shown when a flag asks for one)
    unsupported: ClassVar[Mapping[Feature, str]] = {}
    # True: runs on machines you already have (no --plan/--offer needed; the plan's on-prem builds);
    # False: rents an instance type, named by --plan PLAN.json or --offer PROVIDER:INSTANCE
    own_machines: ClassVar[bool] = False
    where: ClassVar[str] = N_("your own machines")  # the report's "where" when no instance type is rented
    shared_filesystem: ClassVar[bool] = False  # a local or NFS dataset is read in place, not copied
    needs_credentials: ClassVar[bool] = False  # --yes / --down need the provider's credentials
    example_offer: ClassVar[str | None] = None  # an --offer this target launches, for the hint

    def supports(self, feature: Feature) -> bool:
        return feature not in self.unsupported

    @abstractmethod
    def build(self, plan: LaunchPlan, o: LaunchOptions) -> None:
        """The dry run: fill plan.files, plan.copies, plan.creates, plan.notes and plan.scrape_config."""

    def create(self, plan: LaunchPlan, o: LaunchOptions, wait: bool, timeout_s: float | None) -> dict:
        """--yes: create it; returns the launch ID ("id") and what the target reported."""
        raise self._refused(Feature.CREATE, "--yes")

    def down(self, rest: str) -> str:
        """--down NAME:REST: delete what a launch created; returns what was done, in words."""
        raise self._refused(Feature.DOWN, "--down")

    def _refused(self, feature: Feature, flag: str) -> UserInputError:
        return unsupported_error(self, feature, flag)


def unsupported_error(target: Target, feature: Feature, flag: str) -> UserInputError:
    reason = target.unsupported.get(feature) or N_("not implemented for this target")
    return UserInputError(
        msg("--target {target} does not support {flag}: {reason}").format(
            target=target.name, flag=flag, reason=msg(reason)
        ),
        msg("drop {flag}").format(flag=flag),
    )


# Every target module of this package. A test passes its own `TARGETS.like()` to the functions below.
TARGETS: Registry[Target] = Registry(
    "launch target",
    packages=(__name__,),
    attribute="TARGET",
    item_type=Target,
    make=named_after_module(__name__),
    unknown=N_("--target {name!r} is not one of {names}"),
    unknown_fix=N_("pick one of them"),
)


def _registry(registry: Registry[Target] | None) -> Registry[Target]:
    return registry if registry is not None else TARGETS


def get(name: str, registry: Registry[Target] | None = None) -> Target:
    """The target --target names, or a UserInputError listing the known ones."""
    return _registry(registry).lookup(name)


def check_flags(
    target: Target, given: Mapping[str, object], registry: Registry[Target] | None = None
) -> None:
    """Refuse a flag the target does not use: another target's option, or a feature it does not have.
    `given`: flag -> value (None or False = not given)."""
    owners: dict[str, list[str]] = {}
    for t in _registry(registry).values():
        for flag in t.options:
            owners.setdefault(flag, []).append(t.name)
    for flag, value in given.items():
        if value in (None, False):
            continue
        feature = FEATURE_FLAGS.get(flag)
        if feature is not None and not target.supports(feature):
            raise unsupported_error(target, feature, flag)
        names = owners.get(flag)
        if names and flag not in target.options:
            owner = "/".join(sorted(names))  # "alibaba/tencent": every target that reads the flag
            raise UserInputError(
                msg("{flag} is a --target {owner} option; --target {target} does not use it").format(
                    flag=flag, owner=owner, target=target.name
                ),
                msg("drop {flag}, or launch with --target {owner}").format(flag=flag, owner=owner),
            )


def build(plan: LaunchPlan, o: LaunchOptions, registry: Registry[Target] | None = None) -> None:
    """Fill plan.files, plan.creates and plan.scrape_config for the plan's target."""
    get(plan.target, registry).build(plan, o)


def create(
    plan: LaunchPlan,
    o: LaunchOptions,
    wait: bool,
    timeout_s: float | None,
    registry: Registry[Target] | None = None,
) -> dict:
    """What --yes does, for the plan's target; returns the launch ID and what the target reported."""
    target = get(plan.target, registry)
    if not target.supports(Feature.CREATE):
        raise unsupported_error(target, Feature.CREATE, "--yes")
    return target.create(plan, o, wait, timeout_s)


def down(launch_id: str, registry: Registry[Target] | None = None) -> str:
    """--down ID: the target the ID names deletes what it created."""
    reg = _registry(registry)
    name, sep, rest = launch_id.partition(":")
    target = reg.find(name) if sep and rest else None
    if target is None:
        forms = joined(", ", (t.id_form for t in reg.values() if t.supports(Feature.DOWN)))
        raise UserInputError(
            msg("--down {id!r} is not a launch ID").format(id=launch_id),
            msg("pass the ID the launch printed: {forms}").format(forms=forms),
        )
    if not target.supports(Feature.DOWN):
        raise unsupported_error(target, Feature.DOWN, "--down")
    return target.down(rest)


def static_scrape_config(plan: LaunchPlan, address: str) -> str:
    """A scrape config listing each node by a placeholder (`address` holds {i}) the user fills in."""
    return steps.scrape_config(plan.job, [address.format(i=i) for i in range(plan.job.nodes)])
