"""Catalog look-up: hardware, models and weight formats by id or by the names people write.

Resolution is rule-first (chip and GPU model numbers with their variant words, CPU model
numbers, sizes like ``8b`` and ``30b-a3b``, format names) with fuzzy matching (rapidfuzz) as the
fallback. A name that matches nothing well raises :class:`~advisor.errors.NotFoundError` with the
closest candidates; one that matches several entries that differ in ways that matter raises
:class:`~advisor.errors.AmbiguousError`. A detail that only refines the answer (an Apple chip's
GPU-core bin, a laptop CPU's memory system) is picked and stated as an assumption. Versions of one card that
differ in memory or form factor ("A100", "H100") raise :class:`VariantsError` (an AmbiguousError) carrying
``default``: the smallest, slowest version with the assumption stated, for callers that answer rather than ask.
Several cards of one machine ("RTX 4090 + RTX 3090") resolve to one combined device (:func:`mixed_hardware`,
id ``a+b``).

Hardware comes from the curated seed rows and the GPU spec database (see
:mod:`knowledge.hardware_seed`); :func:`all_hardware` lists the curated ones,
:func:`all_known_hardware` all of them.
"""

from __future__ import annotations

from knowledge.catalog._cloud import cloud_instance, instance_pattern
from knowledge.catalog._gpus import VariantsError
from knowledge.catalog._hardware import card_head, closest_hardware, drop_presets, resolve_hardware
from knowledge.catalog._load import (
    Match,
    all_hardware,
    all_known_hardware,
    all_models,
    all_quants,
    catalog_stats,
    find_hardware,
    get_hardware,
    hardware_source,
    integrated_gpu,
    is_spec_db,
    with_memory,
)
from knowledge.catalog._mixed import GPU_KINDS, MIXED_SEP, host_cpu_note, mixed_hardware
from knowledge.catalog._models import generic_model, release_format, resolve_model
from knowledge.catalog._quants import resolve_quant

__all__ = [
    "MIXED_SEP",
    "Match",
    "VariantsError",
    "all_hardware",
    "all_known_hardware",
    "all_models",
    "all_quants",
    "release_format",
    "catalog_stats",
    "cloud_instance",
    "closest_hardware",
    "find_hardware",
    "generic_model",
    "get_hardware",
    "integrated_gpu",
    "hardware_source",
    "instance_pattern",
    "is_spec_db",
    "mixed_hardware",
    "resolve_hardware",
    "resolve_model",
    "resolve_quant", "with_memory", "drop_presets", "card_head", "GPU_KINDS", "host_cpu_note"]
