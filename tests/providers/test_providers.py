"""Offer sources: one module per cloud in gpuwise/providers/, read by facts (DMI) and catalog (offers)."""

from __future__ import annotations

import re

from gpuwise import providers
from gpuwise.catalog import offers
from gpuwise.facts.platform import DMI_FIELDS, match_cloud


def test_every_provider_is_well_formed_and_cites_a_source_per_pattern():
    found = providers.providers()
    assert len(found) >= 16 and len({p.name for p in found}) == len(found)
    for p in found:
        assert p.name == p.name.lower() and p.label
        for rule in p.dmi:
            assert rule.conditions and rule.source and rule.confidence in ("strong", "weak"), p.name
            assert all(field in DMI_FIELDS for field, _ in rule.conditions), p.name
            if rule.instance_type:
                assert rule.instance_type[0] in DMI_FIELDS and re.compile(rule.instance_type[1])


def test_shipped_offers_files_are_exactly_the_ones_providers_name():
    on_disk = sorted(offers.shipped_offers_dir().glob("*.csv"))
    assert offers.shipped_offers_files() == on_disk  # no orphan file, no missing one


def test_live_fetchers_resolve_and_tencent_backs_catalog_fetch_tencent():
    from gpuwise.catalog import tencent

    for p in providers.providers():
        if p.fetcher:
            assert callable(p.load_fetcher()), p.name
    assert providers.get("tencent").load_fetcher() is tencent.fetch_tencent_offers
    assert providers.get("aws").load_fetcher() is None


def test_a_specific_cloud_wins_over_the_openstack_it_runs_on():
    dmi = {"product_name": "OpenStack Nova", "chassis_asset_tag": "HUAWEICLOUD"}
    rule, _ = match_cloud(dmi)
    assert rule.provider == "huawei"
    assert match_cloud({"product_name": "OpenStack Nova"})[0].provider == "openstack"
