"""Cloud instance types ("p4d.24xlarge", "a2-highgpu-1g", "Standard_ND96isr_H100_v5") → the GPUs they carry.

The table is ``knowledge/seed/cloud_instances.csv`` (instance, provider, GPU count, catalog id, the provider's
instance-type page as source). A name resolves to ``count`` × that GPU, with the instance stated as an assumption.

>>> from knowledge.store import Store
>>> m = cloud_instance(Store(":memory:"), "an AWS p4d.24xlarge")
>>> m.value.id, m.value.n_devices
('nvidia-a100-40gbx8', 8)
"""

from __future__ import annotations

import re
from functools import lru_cache

from knowledge.catalog._load import Match, all_known_hardware, with_memory
from knowledge.seed import read_csv
from knowledge.store import Store

__all__ = ["cloud_instance", "instance_pattern"]


@lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, str]]:
    return {r["instance"].lower(): r for r in read_csv("cloud_instances.csv")}


@lru_cache(maxsize=1)
def instance_pattern() -> re.Pattern[str]:
    """Every instance name of the table, longest first, as written (case-insensitive, whole names)."""
    names = sorted(_table(), key=len, reverse=True)
    return re.compile(r"(?<![\w.-])(?:" + "|".join(map(re.escape, names)) + r")(?![\w.-])", re.I)


def cloud_instance(store: Store, text: str) -> Match | None:
    """The GPUs of the cloud instance named in ``text`` (``count`` × the catalog GPU), or None."""
    m = instance_pattern().search(text)
    if not m:
        return None
    r = _table()[m.group(0).lower()]
    hw = all_known_hardware(store).get(r["hw_id"])
    if hw is None:
        return None
    n = int(r["gpus"])
    return Match(with_memory(hw, None, n), 0.95,
                 [f"{r['provider']} {r['instance']}: {r['notes']} (the provider's instance-type page)."])
