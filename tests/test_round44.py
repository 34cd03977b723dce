"""Round 44: a CPU's tier digit is no GPU count; the multi-GPU split's efficiency from the single card's."""

from __future__ import annotations

import pytest

from knowledge import catalog


@pytest.mark.parametrize(("text", "hw_id"), [
    ("NVIDIA GeForce GTX 1070 (8.0 GB reported, host CPU AMD Ryzen 5 3600, linux)", "nvidia-gtx-1070"),
    ("RTX 3060 12GB, host CPU AMD Ryzen 7 3700, windows", "nvidia-rtx-3060"),
    ("RTX 4090 with a Ryzen 9 7950X", "nvidia-rtx-4090"),
    ("RTX 4070 in a laptop with a Core Ultra 7 155H", None),
    ("2x RTX 3090, Ryzen 5 5600", "nvidia-rtx-3090x2"),
    ("8x H100 SXM", "nvidia-h100-sxmx8"),
])
def test_a_cpu_tier_digit_is_no_gpu_count(store, text, hw_id):
    from knowledge.catalog._gpus import device_count

    n = device_count(text)
    assert n == (int(hw_id.rsplit("x", 1)[1]) if hw_id and hw_id[-2] == "x" else 1)
    if hw_id:
        assert catalog.resolve_hardware(store, text).value.id == hw_id


def test_moe_split_factor_is_the_one_card_moe_to_dense_ratio():
    """Hand value: root log(0.5); one card's MoE level (w 2) at log(0.25) → MoE walk log(√(0.25 × 0.5)), dense
    walk log(0.5): the factor is √0.5 = 0.7071."""
    import math

    from advisor.calibration._model import _Group, moe_split_log

    groups = {("all",): _Group(n=10, log_eff=math.log(0.5), sources=set()),
              ("gpu", "discrete_gpu", "llama.cpp/moe"): _Group(n=2, log_eff=math.log(0.25), sources=set())}
    g = {"accel": "cuda", "kind": "discrete_gpu", "multi": True, "engine": "llama.cpp", "moe": True,
         "quant": "Q4_K_M", "bandwidth_gbs": 936.0, "family": "NVIDIA Ampere", "hw_id": "nvidia-rtx-3090",
         "params_active_b": 13.0, "n_devices": 2}
    assert math.exp(moe_split_log(groups, g)) == pytest.approx(0.7071, abs=1e-4)


def test_a_moe_on_two_cards_decodes_about_as_fast_as_on_one(store):
    """A layer split keeps each card's MoE rate: 2× RTX A6000 with Mixtral 8x7B Q4_K_M was predicted at 17.6 tok/s
    (six 2× R9700 rows of hybrid Mamba MoEs set every multi-GPU MoE group) against ~66 on one card."""
    from advisor.perf import predict

    m = catalog.resolve_model(store, "mixtral 8x7b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    one = predict(store, hardware=catalog.get_hardware(store, "nvidia-rtx-a6000"), model=m, quant=q).decode_tps
    two = predict(store, hardware=catalog.resolve_hardware(store, "2x RTX A6000").value, model=m, quant=q).decode_tps
    assert 50 < one < 90
    assert 0.85 * one < two <= 1.05 * one


@pytest.mark.parametrize(("quant", "bpw"), [("Q2_K", 4.236), ("IQ2_M", 4.230), ("Q4_K_M", 4.258), ("F16", 4.400),
                                           ("MXFP4", 4.25), ("MLX 4-bit g64", 4.5), ("AWQ 4-bit g128", 4.156)])
def test_a_gpt_oss_gguf_keeps_its_mxfp4_experts(store, quant, bpw):
    """Hand values: gpt-oss-120b routed R = (116.83 − 5.1) / (1 − 4/128) = 115.34B at 4.25 bits, the other 1.49B
    at the format's bits (Q2_K 3.1593: (115.34 × 4.25 + 1.49 × 3.1593) / 116.83 = 4.236). Non-GGUF formats are
    their own bits."""
    from advisor.perf.moe import weights_bpw, with_moe

    m = with_moe(catalog.resolve_model(store, "gpt-oss-120b").value)
    assert weights_bpw(m, catalog.resolve_quant(store, quant).value) == pytest.approx(bpw, abs=2e-3)


def test_a_dense_model_is_its_formats_bits(store):
    from advisor.perf.moe import weights_bpw

    q = catalog.resolve_quant(store, "Q2_K").value
    assert weights_bpw(catalog.resolve_model(store, "llama 3.1 8b").value, q) == q.bits_per_weight
    assert weights_bpw(catalog.resolve_model(store, "qwen3 30b a3b").value, q) == q.bits_per_weight


def test_gpt_oss_that_does_not_fit_is_not_offered_a_lower_bit_gguf(tmp_path):
    """Its GGUFs are ~62 GB at any format: a 64 GB Mac gets a smaller model, not 'IQ2_M needs 41 GB'."""
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "M4 Max 64GB, will gpt-oss 120b fit?")
    assert r.verdict is not None and "does not fit" in r.reply
    best = r.reply.split("**Best fix:**", 1)[1].split("\n", 1)[0]
    assert "IQ2" not in best and "Q2_K" not in best and "Q3_K" not in best
    assert "smaller model" in best


def test_gpt_oss_q2_k_is_sized_like_the_file(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "RTX A6000 48GB, gpt-oss-120b at Q2_K, how fast?")
    assert r.verdict is not None and r.verdict.prediction is not None
    assert r.verdict.prediction.memory.weights_gb == pytest.approx(61.9, abs=0.3)
    assert "Q2_K (about 4.2 bits per weight over the whole model)" in r.reply


@pytest.mark.parametrize(("text", "hw_id", "mem"), [
    ("NVIDIA A100 80GB PCIe (80.0 GB reported, host CPU 2 x Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz, linux)",
     "nvidia-a100-80gb-pcie", 80.0),
    ("NVIDIA GeForce RTX 3090 (24.0 GB reported, host CPU AMD Ryzen Threadripper PRO 5995WX 64-Cores, linux)",
     "nvidia-rtx-3090", 24.0),
    ("AMD Radeon RX 9070 XT (16.0 GB reported, host CPU AMD Ryzen 5 7600, linux)", "amd-rx-9070-xt", 16.0),
    ("Tesla T4 (15.0 GB reported, host CPU Intel(R) Xeon(R) CPU @ 2.20GHz, linux)", "nvidia-tesla-t4", 16.0),
    ("NVIDIA GeForce GTX 1070 (8.0 GB reported, host CPU AMD Ryzen 5 3600, linux)", "nvidia-gtx-1070", 8.0),
    ("Apple M4 Pro (24.0 GB reported, macos)", "apple-m4-pro-20gpu", 24.0),
    ("Apple M2 Max (38-core GPU, 96 GB reported, macos)", "apple-m2-max-38gpu", 96.0),
])
def test_a_harness_report_of_the_host_is_no_part_of_the_card(store, text, hw_id, mem):
    """A benchmark harness prints the card with its host ("(8.0 GB reported, host CPU …)"): the host's "2 x Xeon"
    is no count, its "Ryzen 5 7600" no RX 7600, its "64-Cores" no card, a usable 15.0 GB no other T4."""
    h = catalog.resolve_hardware(store, text).value
    assert (h.id, h.n_devices, h.memory_gb) == (hw_id, 1, mem)


def test_bench_per_machine_median_counts_each_machine_once():
    """Hand value: machine a (APE 1, 2, 3; 1/3 each) and b (APE 10; weight 1): half of the weight 2 is reached at 3
    (the plain median would be 2.5)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("bench_accuracy", Path(__file__).resolve().parents[1] / "bench" / "accuracy.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.machine_median([(1.0, 0.0, "a"), (2.0, 0.0, "a"), (3.0, 0.0, "a"), (10.0, 0.0, "b")]) == 3.0


@pytest.mark.parametrize(("text", "bpw"), [("4.0bpw", 4.0), ("4.65 bpw", 4.65), ("6bpw", 6.0)])
def test_a_bare_bpw_is_an_exl2_file(store, text, bpw):
    m = catalog.resolve_quant(store, text)
    assert (m.value.name, m.value.bits_per_weight) == (f"EXL2 {bpw:g} bpw", bpw)
    assert "EXL2" in m.assumptions[0]


def test_exllamav2_says_how_it_is_modelled(store):
    from advisor.perf import predict

    p = predict(store, hardware=catalog.resolve_hardware(store, "RTX 3090").value,
                model=catalog.resolve_model(store, "llama 3.1 8b").value,
                quant=catalog.resolve_quant(store, "4.0bpw").value, backend="exllamav2")
    assert p.backend == "ExLlamaV2 (modelled as llama.cpp-cuda)"
    assert any(a.startswith("ExLlamaV2: no measured runs") for a in p.assumptions)
    assert 90 < p.decode_tps < 160  # 3.74 GB a token at 936 GB/s: ceiling 245 tok/s


@pytest.mark.parametrize(("msg", "tps"), [
    ("RTX 3060 12GB, qwen2.5 14b q4_k_m in ollama. I want at least 15 tok/s; currently getting 8", 8.0),
    ("M2 Pro 16GB, llama 3.1 8b, it only does 12, is that normal?", 12.0),
    ("my 4090 with llama 3.3 70b q4_k_m is slow, getting 3 on it", 3.0),
    ("RTX 3090, mistral small 24b q4_k_m. Seeing about 25 right now, expected more tokens", 25.0),
    ("M4 Pro 48GB qwen3 32b q4, it gives me like 9.5 and feels slow", 9.5),
])
def test_a_speed_said_without_its_unit_is_the_measured_decode(tmp_path, msg, tps):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), msg)
    assert r.facts.measured_decode_tps == tps
    assert "taken as the generation (decode) speed, in tokens a second" in r.reply


@pytest.mark.parametrize("msg", [
    "I get 2 of them, RTX 3090s, llama 70b, how fast?",
    "RTX 4090, llama 3.1 8b, got 64GB of ram too, how fast is it?",
    "M3 Max 64GB, llama 3.1 8b q4. It does 4 bit fine, how fast will it be?",
])
def test_a_number_that_is_no_speed_is_not_read_as_one(tmp_path, msg):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), msg)
    assert r.verdict is not None
    assert r.facts.measured_decode_tps is None


def test_a_low_bit_moe_build_keeps_its_dense_part_at_higher_bits(store):
    """Hand values, DeepSeek-R1 (671B, 37B active, 8 of 256) in IQ1_S (1.56 bits): routed R = 634 / (1 − 1/32) =
    654.5B, 20.45B of them read a token; the 16.55B others at 5 bits. File: (654.5 × 1.56 + 16.5 × 5) / 671 = 1.645
    bits (138 GB; unsloth's 131 GB); a token reads (20.45 × 1.56 + 16.55 × 5) / 37 = 3.10 bits (14.3 GB, not 7.2)."""
    from advisor.perf.moe import active_bpw, expert_dense_bits, weights_bpw, with_moe

    m = with_moe(catalog.resolve_model(store, "deepseek r1").value)
    q = catalog.resolve_quant(store, "IQ1_S").value
    assert expert_dense_bits(m, q) == (1.56, 5.0)
    assert weights_bpw(m, q) == pytest.approx(1.645, abs=2e-3)
    assert active_bpw(m, q) == pytest.approx(3.10, abs=5e-3)
    q4 = catalog.resolve_quant(store, "Q4_K_M").value  # at 3 bits and up the format is the whole model's
    assert weights_bpw(m, q4) == active_bpw(m, q4) == q4.bits_per_weight


def test_r1_iq1_s_on_an_m2_ultra_reads_its_dense_part_at_higher_bits(store):
    """Reported ~13-16 tok/s; it was predicted at 42 with every weight at 1.56 bits."""
    from advisor.perf import predict

    p = predict(store, hardware=catalog.resolve_hardware(store, "M2 Ultra 192GB").value,
                model=catalog.resolve_model(store, "deepseek r1").value, quant=catalog.resolve_quant(store, "IQ1_S").value)
    assert p.weight_bytes_per_token_gb == pytest.approx(14.3, abs=0.1)
    assert 12 < p.decode_tps < 32
    assert any("keeps attention, shared experts and dense layers at 4–6 bits" in a for a in p.assumptions)


@pytest.mark.parametrize(("text", "hw_id"), [
    ("RX 9070 XT with a Ryzen 5 7600", "amd-rx-9070-xt"), ("Ryzen 5 7600 with RX 9070 XT", "amd-rx-9070-xt"),
    ("Ryzen 7 5700, RX 6600", "amd-rx-6600"), ("RTX 3090, Xeon E5-2690 v4 x2", "nvidia-rtx-3090"),
    ("Xeon E5-2690 v4 x2, RTX 3090", "nvidia-rtx-3090"), ("NVIDIA GeForce RTX 4090, host CPU Intel Xeon x2", "nvidia-rtx-4090"),
    ("2x RTX 3090 with EPYC 7302 x 2", "nvidia-rtx-3090x2"), ("i7-7600 with GTX 1080", "nvidia-gtx-1080"),
    ("RX 7600", "amd-rx-7600"),
])
def test_a_host_cpu_named_beside_a_card_is_neither_a_card_nor_a_count(store, text, hw_id):
    assert catalog.resolve_hardware(store, text).value.id == hw_id


def test_multi_gpu_gpt_oss_in_its_own_format_keeps_one_cards_rate(store):
    """MXFP4 sits in the "legacy" block-format class, whose multi-GPU rows are 2023 builds' Q4_0: the split's cost is
    taken at the engine and era level (2× RTX 4060 Ti had read 47 tok/s against 109 on one card)."""
    from advisor.perf import predict

    m = catalog.resolve_model(store, "gpt-oss-20b").value
    for q in ("MXFP4", "Q4_K_M"):
        quant = catalog.resolve_quant(store, q).value
        one = predict(store, hardware=catalog.resolve_hardware(store, "RTX 4060 Ti 16GB").value, model=m, quant=quant)
        two = predict(store, hardware=catalog.resolve_hardware(store, "2x RTX 4060 Ti 16GB").value, model=m, quant=quant)
        assert 0.85 * one.decode_tps < two.decode_tps <= 1.02 * one.decode_tps
    mx = predict(store, hardware=catalog.resolve_hardware(store, "RTX 4060 Ti 16GB").value, model=m,
                 quant=catalog.resolve_quant(store, "MXFP4").value).decode_tps
    q4 = predict(store, hardware=catalog.resolve_hardware(store, "RTX 4060 Ti 16GB").value, model=m,
                 quant=catalog.resolve_quant(store, "Q4_K_M").value).decode_tps
    assert q4 == pytest.approx(mx, rel=0.06)  # a gpt-oss "Q4_K_M" GGUF multiplies the same MXFP4 experts


def test_gpt_oss_advice_offers_its_own_format_and_common_formats_for_other_models(tmp_path):
    from advisor import service
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    fixes = {f.id: f.title for f in service.ask(st, "RTX 3060 12GB, gpt-oss-20b F16, how fast?").verdict.fixes}
    assert "MXFP4" in fixes["fit_in_memory"] and "Q3_K" not in fixes["fit_in_memory"]
    assert fixes["smaller_model"].endswith("at Q4_K_M")
    fixes = {f.id: f.title for f in service.ask(st, "RTX 4060 8GB, gpt-oss-20b, how fast?").verdict.fixes}
    assert fixes["smaller_model"].endswith("at Q4_K_M") and "MXFP4" not in fixes["smaller_model"]


def test_a_size_the_driver_reports_is_the_cards_not_a_cut_down_variant(tmp_path):
    from advisor import service
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    r = service.ask(st, "Tesla T4 15GB, llama 3.1 8b q4_k_m, how fast?")
    assert "what the driver reports of the NVIDIA Tesla T4's 16 GB" in r.reply and "cut-down" not in r.reply
    r = service.ask(st, "RTX 4060 laptop with 6GB, llama 3.2 3b, how fast?")  # 6 of 8 GB: a variant, as said
    assert "cut-down" in r.reply


def test_a_card_without_int8_tensor_cores_is_not_said_to_use_them(store):
    from advisor.perf import predict

    m, q = catalog.resolve_model(store, "llama 3.1 8b").value, catalog.resolve_quant(store, "Q4_K_M").value
    pascal = predict(store, hardware=catalog.resolve_hardware(store, "GTX 1070").value, model=m, quant=q)
    assert not any("tensor-core" in a for a in pascal.assumptions)
    ada = predict(store, hardware=catalog.resolve_hardware(store, "RTX 4090").value, model=m, quant=q)
    assert any("INT8 tensor-core rate" in a for a in ada.assumptions)


def test_too_many_gpus_says_so_in_the_cli():
    import json

    from typer.testing import CliRunner

    from advisor.cli import app

    out = CliRunner().invoke(app, ["predict", "--hardware", "100x RTX 3090", "--model", "llama 3.1 8b", "--json",
                                   "--store", ":memory:"])
    assert "100 GPUs in one machine is more than the advisor models" in json.loads(out.stdout.splitlines()[0])["error"]


@pytest.mark.parametrize(("msg", "tps"), [
    ("gpt-oss-120b on 2x 3090 + 128GB DDR4 (Ryzen 9 5950X). Using llama-server with --n-cpu-moe 24 and -ngl 99, "
     "context 32k. Getting 8. Is that what I should expect or is my config bad?", 8.0),
    ("Mixtral 8x7B Q4_K_M on an RTX 4090 + 64GB DDR5, partially offloaded (ngl 20 out of 33). getting 8. Should I just "
     "go for a second GPU?", 8.0),
    ("DeepSeek R1 IQ1_S (131GB) on my gaming PC: RTX 4090, 192GB DDR5, 7950X. Offloaded 7 layers to GPU. getting 2. "
     "Is it even worth it?", 2.0),
])
def test_a_unitless_speed_in_a_sentence_of_its_own_is_the_measured_decode(tmp_path, msg, tps):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), msg)
    assert r.facts.measured_decode_tps == tps
    assert r.facts.gen_tokens is None  # "ngl 20 out of 33" is no 20-token answer


@pytest.mark.parametrize(("text", "ngl"), [("ngl 20 out of 33", 20), ("20/33 layers offloaded", 20),
                                           ("20 out of 33 layers on gpu", 20), ("offloaded 7 layers to GPU", 7)])
def test_layers_on_the_gpu_said_with_the_total(store, text, ngl):
    from advisor import intake

    ext = intake.extract(f"RTX 4090, mixtral 8x7b, {text}", store)
    assert (ext.n_gpu_layers, ext.gen_tokens) == (ngl, None)


def test_a_pasted_run_on_two_cards_is_two_cards_and_a_plural_mac_is_the_mac(tmp_path):
    from advisor import service
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    two = ("ggml_cuda_init: found 2 CUDA devices:\n"
           "  Device 0: NVIDIA GeForce RTX 4060 Ti, compute capability 8.9, VMM: yes\n"
           "  Device 1: NVIDIA GeForce RTX 4060 Ti, compute capability 8.9, VMM: yes\n"
           "| model                          |       size |     params | backend    | ngl |            test |                  t/s |\n"
           "| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |\n"
           "| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | CUDA       |  99 |           pp512 |       1850.32 ± 12.1 |\n"
           "| qwen3moe 30B.A3B Q4_K - Medium |  17.28 GiB |    30.53 B | CUDA       |  99 |           tg128 |         62.41 ± 0.30 |\n"
           "\nthese are 16GB cards. is tg128 of 62 good for this setup?")
    r = service.ask(st, two)
    assert r.verdict is not None and r.verdict.prediction is not None
    assert r.verdict.prediction.hardware["id"] == "nvidia-rtx-4060-tix2" and "does not fit" not in r.reply
    mac = ("ggml_metal_init: found device: Apple M2 Ultra\n"
           "| model                          |       size |     params | backend    | threads |            test |                  t/s |\n"
           "| ------------------------------ | ---------: | ---------: | ---------- | ------: | --------------: | -------------------: |\n"
           "| gpt-oss 20B MXFP4 MoE          |  11.27 GiB |    20.91 B | Metal,BLAS |      16 |           pp512 |       1780.44 ± 5.33 |\n"
           "| gpt-oss 20B MXFP4 MoE          |  11.27 GiB |    20.91 B | Metal,BLAS |      16 |           tg128 |        118.90 ± 0.41 |\n"
           "Is this in line with other M2 Ultras?")
    r = service.ask(st, mac)
    assert r.facts.hardware == "M2 Ultra" and "another machine" not in r.reply
