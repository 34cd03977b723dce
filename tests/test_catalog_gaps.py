"""Catalog kinds added for the stop-11 gaps: mixed boxes, versions of one card, Grace/GB200/Thor/Xeon Max, models."""

from __future__ import annotations

import pytest

from advisor.errors import AmbiguousError, InputError, NotFoundError
from advisor.models import Hardware, Scenario
from advisor.perf import predict_situation
from advisor.understand import understand
from knowledge import catalog
from knowledge.store import Store


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


# ---------------------------------------------------------------------------------------------- mixed boxes
def test_mixed_layer_split_is_share_weighted() -> None:
    a = Hardware(id="a", name="A", kind="discrete_gpu", bandwidth_gbs=936, memory_gb=24, fp16_tflops=71)
    b = Hardware(id="b", name="B", kind="discrete_gpu", bandwidth_gbs=360, memory_gb=12, fp16_tflops=25)
    box = catalog.mixed_hardware([a, b])
    # 24:12 GB → 2/3 of the layers at 936 GB/s, 1/3 at 360 GB/s: 1 / (2/3/936 + 1/3/360) = 610.4 GB/s.
    assert box.n_devices == 2 and box.memory_gb * 2 == 36.0 and box.bandwidth_gbs == pytest.approx(610.4, abs=0.1)
    assert box.fp16_tflops == pytest.approx(1 / (2 / 3 / 71 + 1 / 3 / 25), abs=0.1)
    assert box.id == "a+b" and "36 GB in all" in box.notes


def test_mixed_tensor_parallel_runs_at_the_slowest_card() -> None:
    a = Hardware(id="a", name="A", kind="discrete_gpu", bandwidth_gbs=1008, memory_gb=24, fp16_tflops=165)
    b = Hardware(id="b", name="B", kind="discrete_gpu", bandwidth_gbs=1792, memory_gb=32, fp16_tflops=209)
    box = catalog.mixed_hardware([a, b], "tensor_parallel")
    assert (box.bandwidth_gbs, box.memory_gb, box.fp16_tflops, box.n_devices) == (1008, 24, 165, 2)


def test_mixed_needs_gpus() -> None:
    cpu = Hardware(id="c", name="C", kind="cpu", bandwidth_gbs=90, memory_gb=64)
    gpu = Hardware(id="g", name="G", kind="discrete_gpu", bandwidth_gbs=900, memory_gb=24)
    with pytest.raises(InputError):
        catalog.mixed_hardware([cpu, gpu])


@pytest.mark.parametrize(("text", "want_id", "n", "total_gb"), [
    ("RTX 4090 + RTX 3090", "nvidia-rtx-4090+nvidia-rtx-3090", 2, 48.0),
    ("4090 + 3090", "nvidia-rtx-4090+nvidia-rtx-3090", 2, 48.0),
    ("RTX 3090 + RTX 3060 12GB", "nvidia-rtx-3090+nvidia-rtx-3060", 2, 36.0),
    ("2x RTX 3090 + RTX 3060", "nvidia-rtx-3090x2+nvidia-rtx-3060", 3, 60.0),
    ("RTX 3090 + RTX 3090", "nvidia-rtx-3090x2", 2, 48.0),
    ("nvidia-rtx-4090+nvidia-rtx-3090", "nvidia-rtx-4090+nvidia-rtx-3090", 2, 48.0),
])
def test_mixed_names_resolve(store: Store, text: str, want_id: str, n: int, total_gb: float) -> None:
    hw = catalog.resolve_hardware(store, text).value
    assert (hw.id, hw.n_devices, (hw.memory_gb or 0) * hw.n_devices) == (want_id, n, total_gb)


def test_a_plus_inside_a_name_is_no_mixed_box(store: Store) -> None:
    assert catalog.resolve_hardware(store, "Ryzen AI Max+ 395").value.id.startswith("amd-ryzen-ai-max-plus-395")
    assert catalog.resolve_hardware(store, "Snapdragon X Plus X1P-42-100").value.id == "qualcomm-snapdragon-x-elite"


def test_mixed_box_is_predicted_as_one_machine(store: Store) -> None:
    sit = understand(store, Scenario(hardware="RTX 4090 + RTX 3090", model="llama 3.3 70b", quant="Q4_K_M"))
    p = predict_situation(store, sit)
    # 45.2 GB needed; one 4090 (23.5 GB usable) does not hold it, the two cards (47 GB usable) do.
    assert p.memory.fits and p.memory.total_gb == pytest.approx(48 * 2**30 / 1e9)  # 2 × 24 GiB, in decimal GB
    # Decode ceiling = effective 970.7 GB/s over 42.52 GB read per token.
    assert p.decode_ceiling_tps == pytest.approx(970.7 / 42.52, rel=0.01)
    one = predict_situation(store, understand(store, Scenario(hardware="RTX 4090", model="llama 3.3 70b",
                                                              quant="Q4_K_M")))
    assert not one.memory.fits


def test_mixed_box_under_vllm_is_tensor_parallel_at_the_slower_card(store: Store) -> None:
    sit = understand(store, Scenario(hardware="RTX 4090 + RTX 5090", backend="vllm", model="qwen2.5 32b"))
    hw = sit.hardware
    assert hw is not None and hw.bandwidth_gbs == 1008 and hw.memory_gb == 24 and hw.n_devices == 2


# ---------------------------------------------------------------------------------------------- card versions
def test_versions_of_one_card_carry_a_conservative_default(store: Store) -> None:
    with pytest.raises(catalog.VariantsError) as e:
        catalog.resolve_hardware(store, "H100")
    assert e.value.default is not None and e.value.default.value.id == "nvidia-h100-pcie"
    assert "3350 GB/s" in e.value.default.assumptions[-1]
    with pytest.raises(catalog.VariantsError) as e2:
        catalog.resolve_hardware(store, "A100")
    assert e2.value.default is not None and e2.value.default.value.id == "nvidia-a100-40gb"


def test_distinct_products_are_no_variants(store: Store) -> None:
    with pytest.raises(AmbiguousError) as e:
        catalog.resolve_hardware(store, "Mac Studio")
    assert not isinstance(e.value, catalog.VariantsError)


def test_situation_answers_for_the_default_unless_measured(store: Store) -> None:
    sit = understand(store, Scenario(hardware="H100", model="llama 3.1 8b"))
    assert sit.hardware is not None and sit.hardware.id == "nvidia-h100-pcie" and not sit.unresolved
    measured = understand(store, Scenario(hardware="H100", model="llama 3.1 8b", measured_decode_tps=20))
    assert measured.hardware is None and measured.unresolved_field("hardware") is not None


# ---------------------------------------------------------------------------------------------- new machines
@pytest.mark.parametrize(("text", "want", "n"), [
    ("NVIDIA Grace", "nvidia-grace", 1),
    ("Grace CPU superchip", "nvidia-grace", 1),
    ("Grace Hopper", "nvidia-gh200", 1),
    ("GB200", "nvidia-gb200x2", 2),
    ("4x GB200", "nvidia-gb200x4", 4),
    ("Jetson AGX Thor", "nvidia-agx-thor-t5000", 1),
    ("Jetson Thor", "nvidia-agx-thor-t5000", 1),
    ("Intel Xeon Max 9480", "intel-xeon-max-9480", 1),
    ("DGX Spark", "nvidia-dgx-spark-gb10", 1),
    ("p5.48xlarge", "nvidia-h100-sxmx8", 8),
    ("g6e.xlarge", "nvidia-l40s", 1),
    ("a2-ultragpu-8g", "nvidia-a100-80gb-sxmx8", 8),
])
def test_new_machines(store: Store, text: str, want: str, n: int) -> None:
    hw = catalog.resolve_hardware(store, text).value
    assert (hw.id, hw.n_devices) == (want, n)


def test_every_cloud_instance_names_a_catalog_gpu(store: Store) -> None:
    from knowledge.seed import read_csv

    hws = catalog.all_known_hardware(store)
    rows = read_csv("cloud_instances.csv")
    assert len(rows) >= 50 and all(r["hw_id"] in hws and int(r["gpus"]) >= 1 and r["source_url"] for r in rows)


def test_new_machine_figures(store: Store) -> None:
    hws = catalog.all_known_hardware(store)
    assert (hws["nvidia-grace"].kind, hws["nvidia-grace"].bandwidth_gbs) == ("cpu", 512)
    assert (hws["nvidia-gb200"].bandwidth_gbs, hws["nvidia-gb200"].fp16_tflops) == (8000, 2500)
    assert (hws["nvidia-agx-thor-t5000"].bandwidth_gbs, hws["nvidia-agx-thor-t5000"].memory_gb_options) == (273, [128])
    assert (hws["intel-xeon-max-9480"].bandwidth_gbs, hws["intel-xeon-max-9480"].memory_gb_options) == (1000, [64])
    assert all(hws[h].source_url for h in ("nvidia-grace", "nvidia-gb200", "nvidia-agx-thor-t5000", "intel-xeon-max-9480"))


# ---------------------------------------------------------------------------------------------- models
@pytest.mark.parametrize(("text", "want", "layers", "kv", "params"), [
    ("mistral nemo", "mistralai/Mistral-Nemo-Instruct-2407", 40, 8, 12.0),
    ("llama 3.1 405b", "meta-llama/Llama-3.1-405B", 126, 8, 405.85),
    ("qwen2.5:72b", "Qwen/Qwen2.5-72B-Instruct", 80, 8, 72.71),
    ("qwen2.5-coder:32b", "Qwen/Qwen2.5-Coder-32B-Instruct", 64, 8, 32.76),
    ("qwen 2.5 coder 14b", "Qwen/Qwen2.5-Coder-14B-Instruct", 48, 8, 14.77),
    ("codestral", "mistralai/Codestral-22B-v0.1", 56, 8, 22.25),
    ("mistral small 3.2", "mistralai/Mistral-Small-3.1-24B-Instruct-2503", 40, 8, 24.0),
    ("gemma 3n e4b", "google/gemma-3n-E4B-it", 35, 2, 4.0),
    ("deepseek r1 8b", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", 32, 8, 8.03),
    ("deepseek-r1:1.5b", "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", 28, 2, 1.78),
])
def test_models_added(store: Store, text: str, want: str, layers: int, kv: int, params: float) -> None:
    m = catalog.resolve_model(store, text).value
    assert (m.id, m.n_layers, m.n_kv_heads, m.params_b) == (want, layers, kv, params) and not m.generic
    assert m.source_url


def test_an_unlisted_version_is_assumed_aloud(store: Store) -> None:
    m = catalog.resolve_model(store, "mistral 7b v0.1")
    assert m.value.id == "mistralai/Mistral-7B-Instruct-v0.2" and any("v0.1 is not in the catalog" in a
                                                                       for a in m.assumptions)
    assert catalog.resolve_model(store, "mistral 7b v0.3").value.id == "mistralai/Mistral-7B-Instruct-v0.3"
    assert catalog.resolve_model(store, "gemma 3 4b").value.id == "google/gemma-3-4b-it"  # not Gemma 3n


def test_a_dense_size_is_never_a_moe_of_another_size(store: Store) -> None:
    # "qwen3 72b" names no catalog model; the 80B-A3B MoE within 12 % would decode ~20x faster: sized generically.
    assert catalog.resolve_model(store, "qwen3 72b").value.generic
    assert catalog.resolve_model(store, "llama 4 scout 109b").value.id == "meta-llama/Llama-4-Scout-17B-16E-Instruct"
    assert catalog.resolve_model(store, "mistral small 2501").value.id == "mistralai/Mistral-Small-24B-Instruct-2501"
    assert catalog.resolve_model(store, "gpt-oss 21b").value.id == "openai/gpt-oss-20b"


def test_unknown_still_not_found(store: Store) -> None:
    with pytest.raises(NotFoundError):
        catalog.resolve_hardware(store, "Apple A17 Pro")
