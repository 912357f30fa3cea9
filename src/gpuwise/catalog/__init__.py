"""The catalog: sourced, dated data about GPUs, links and fabrics, cloud offers and on-prem costs.

Modules: `gpus` (specs and name matching), `fabrics` (links and networks), `offers` (cloud
instances in SkyPilot's v8 CSV format plus our columns), `costs` (on-prem TCO defaults), `tencent`
(the Tencent Cloud price fetcher), `validate` (CSV reading with file:line errors). Every row and
value carries a source and an as_of date; figures without a source stay empty.
"""
