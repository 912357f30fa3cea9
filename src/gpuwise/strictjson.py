"""JSON that every parser accepts: NaN and Infinity become null, never the `NaN` Python writes.

`json.dumps` writes float('nan') as `NaN` and infinities as `Infinity`, which is not JSON (RFC 8259
section 6: "Numeric values that cannot be represented ... such as Infinity and NaN are not
permitted"); `jq` and most parsers reject the whole document. Every JSON gpuwise writes for a user or
another program goes through `dumps`. Where the object holding the number has an `unknown` map
(facts' "why is this None"), the reason is recorded there, so a null still says why.
"""

from __future__ import annotations

import json
import math
from typing import Any

NON_FINITE_KIND = "unparsable"  # a facts UnknownKind: there was a value, and it is not usable


def finite(obj: Any) -> Any:
    """A copy of `obj` (dicts, lists, tuples, scalars) with every non-finite float replaced by None."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        out = {key: finite(value) for key, value in obj.items()}
        unknown = out.get("unknown")
        if isinstance(unknown, dict):
            for key, value in obj.items():
                if isinstance(value, float) and not math.isfinite(value) and key not in unknown:
                    unknown[key] = {"kind": NON_FINITE_KIND, "text": f"not a finite number ({value})"}
        return out
    if isinstance(obj, (list, tuple)):
        return [finite(value) for value in obj]
    return obj


def dumps(obj: Any, **kwargs: Any) -> str:
    """json.dumps of finite(obj); allow_nan=False, so a non-finite float that slipped through (in an
    object `default=` produced) is an error here rather than invalid JSON on the user's side."""
    return json.dumps(finite(obj), allow_nan=False, **kwargs)
