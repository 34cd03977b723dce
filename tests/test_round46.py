"""Round 46: decode calibration: an Apple chip's tier, and GPU levels only one machine fills."""

import pytest

from advisor.calibration._model import group_keys, soc_tier
from advisor.perf import predict
from knowledge import catalog


@pytest.mark.parametrize("hw_id, tier", [
    ("apple-m3-ultra-80gpu", "ultra"), ("apple-m1-max-32gpu", "max"), ("apple-m4-pro", "pro"),
    ("apple-m5-pro-20gpu", "pro"), ("apple-m4-10gpu", "base"), ("apple-m1-7gpu", "base"), (None, "base"),
])
def test_soc_tier_reads_the_catalog_id(hw_id, tier):
    assert soc_tier(hw_id) == tier


def _row(hw_id, kind="apple_soc", multi=False, quant="Q4_K_M"):
    return {"accel": "metal", "kind": kind, "multi": multi, "engine": "llama.cpp", "quant": quant, "hw_id": hw_id,
            "family": "Apple M4", "bandwidth_gbs": 273.0, "params_active_b": 8.0, "moe": False}


def test_apple_decode_groups_split_by_tier_before_the_format():
    keys = group_keys("decode", _row("apple-m4-pro-20gpu"))
    assert keys[4] == ("gpu", "apple_soc", "llama.cpp", "tier:pro")
    assert keys[5] == ("gpu", "apple_soc", "llama.cpp", "tier:pro", "kquant")
    assert keys[-1] == ("gpu", "apple-m4-pro-20gpu", "llama.cpp")
    # other kinds keep the format, then the bandwidth class
    gpu = group_keys("decode", {**_row("nvidia-rtx-4090", kind="discrete_gpu"), "accel": "cuda"})
    assert gpu[4] == ("gpu", "discrete_gpu", "llama.cpp", "kquant")
    assert not any(str(k[-1]).startswith("tier:") for k in gpu)
    # prefill is not split by tier (it lost accuracy on the hold-out)
    assert not any("tier:pro" in k for k in group_keys("prefill", _row("apple-m4-pro-20gpu")))


def _predict(store, name: str):
    hw = catalog.resolve_hardware(store, name).value
    m = catalog.resolve_model(store, "llama 3.1 8b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    return predict(store, hardware=hw, model=m, quant=q, backend="llama.cpp")


def _share(store, name: str) -> float:
    p = _predict(store, name)
    return p.decode_tps / p.decode_ceiling_tps


def test_an_m4_pro_runs_an_8b_k_quant_as_measured(store):
    # llmfit community runs on an M4 Pro (llama-server, 8B Q4_K_M models): 45.8-47.3 tok/s, output over wall
    # time. Without the tier level the Pro took the Max and Ultra chips' K-quant share: 38.5 tok/s.
    assert 41 < _predict(store, "M4 Pro 20-core GPU 48GB").decode_tps < 52


def test_an_ultra_reaches_a_smaller_share_of_its_bandwidth_than_a_pro(store):
    # llama.cpp's Apple table (discussion #4167): Q4_0 7B decode reaches ~71 % of the bandwidth on a Pro,
    # ~60 % on a Max and ~40 % on an Ultra (two dies); the prediction keeps that order.
    pro, mx, ultra = (_share(store, n) for n in ("M4 Pro 20-core GPU 48GB", "M4 Max 40-core GPU 128GB",
                                                 "M3 Ultra 80-core GPU 256GB"))
    assert ultra < mx < pro
    assert 0.65 < pro < 0.9 and ultra < 0.6


# One list of engine words (advisor.understand.engine.ENGINE_MENTIONS) serves the intake and the engine question.
@pytest.mark.parametrize("text, names", [
    ("ollama or vllm?", ["ollama", "vllm"]),
    ("ik_llama.cpp beats llama.cpp here", ["ik_llama.cpp", "llama.cpp"]),
    ("llama-server -ngl 99 vs TRT-LLM", ["llama.cpp", "TensorRT-LLM"]),
    ("LM Studio with mlx-community weights", ["LM Studio", "mlx"]),
    ("exl2 in tabbyAPI", ["exllamav2", "exllamav2"]),
    ("a llama in a field", []),
])
def test_engine_mentions_are_read_once(text, names):
    from advisor.understand.engine import engine_mentions

    assert [n for _, n in engine_mentions(text)] == names


@pytest.mark.parametrize("text, engine", [
    ("4090, llama 3.1 8b in ollama. would TRT-LLM be faster?", "tensorrt-llm"),
    ("RTX 3090 with ollama, should I switch to llama-server?", "llama.cpp"),
    ("M2 Max in ollama, should I switch to mlx-lm?", "mlx"),
])
def test_engine_asked_uses_the_same_words(text, engine):
    from advisor.understand.engine_question import engine_asked

    assert engine_asked(text) == engine


@pytest.mark.parametrize("msg, cannot, build", [
    ("can I run Qwen2.5 32B AWQ in ollama on my RTX 4090?", "Ollama cannot load AWQ 4-bit g128 files", "Q4_K_M"),
    ("M2 Max 32GB, Llama 3.1 8B, MLX 4-bit in ollama, how fast?", "Ollama cannot load MLX 4-bit g64 files", "Q4_K_M"),
])
def test_a_format_the_engine_cannot_load_is_said_before_any_yes(tmp_path, msg, cannot, build):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), msg)
    head = r.reply.splitlines()[0]
    assert head.startswith(f"**Not as written: {cannot}.** Sized as {build}")
    assert "Yes" not in head  # the yes is for the build the engine loads, said after it
    assert r.verdict.prediction.quant == build


def test_a_format_the_engine_loads_keeps_the_plain_answer(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "can I run Qwen2.5 32B AWQ in vllm on my RTX 4090?")
    assert not r.reply.startswith("**Not as written") and r.verdict.prediction.quant.startswith("AWQ")


# --- engines as people write them: paths, engines left behind, "switch from X to Y", a team queueing -------------
@pytest.mark.parametrize("msg, backend", [
    ("my model file is ./models/vllm-llama-3-8b-q4_k_m.gguf, running llama-server on RTX 3080 10GB, 40 tok/s", "llama.cpp"),
    ("cloned github.com/sgl-project/sglang but I run ollama on an RTX 4090 with qwen3 14b, 25 tok/s", "ollama"),
    ("I moved away from vllm, now using exllamav2 on a 4090 with llama 3 8b exl2 6bpw, getting 90 tok/s", "exllamav2"),
    ("was on LM Studio, switched to llama.cpp with -ngl 20 on RTX 3060 12GB, llama 3.1 8b q4_k_m 20 tok/s", "llama.cpp"),
    ("used to run ollama, now koboldcpp on a 3090 with qwen2.5 32b q4_k_m, 30 tok/s", "koboldcpp"),
])
def test_an_engine_in_a_path_or_left_behind_is_not_the_engine_in_use(tmp_path, msg, backend):
    from advisor import service
    from knowledge.store import Store

    assert service.ask(Store(str(tmp_path / "s.duckdb")), msg).facts.backend == backend


@pytest.mark.parametrize("msg, now, asked", [
    ("should I switch from ollama to vLLM? RTX 4090, qwen3 14b, 8 users", "ollama", "vllm"),
    ("switch from TRT-LLM to SGLang? H100 80GB, llama 3.1 8b, 32 users", "TensorRT-LLM", "sglang"),
    ("I'm using vllm now but thinking about sglang. H100, llama 3.1 8b, 32 users", "vllm", "sglang"),
])
def test_switch_from_x_to_y_weighs_y_against_x(tmp_path, msg, now, asked):
    from advisor import service
    from advisor.understand.engine_question import engine_asked
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), msg)
    assert engine_asked(msg) == asked and r.facts.backend == now
    assert r.verdict.engine_answer and " now → " in r.verdict.engine_answer


def test_a_team_whose_caches_do_not_all_fit_queues_and_is_not_told_it_crawls(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "A100 80GB vLLM Llama 3.3 70B FP8 for 50 users, 1k in / 500 out. enough?")
    p = r.verdict.prediction
    # 85.4 GB usable - 70.5 GB weights - 2.6 GB overhead = 12.3 GB for caches of 0.49 GB each: 24 run at once
    assert p.running == 24 and p.concurrency == 50
    head = r.reply.split("<details>")[0]
    assert head.startswith("**Not all at once: about 24 of the 50 users are served together")
    assert "crawl" not in head and "will not load" not in head


@pytest.mark.parametrize("flags", ["--n-cpu-moe 48 -ngl 99", '-ngl 99 -ot ".ffn_.*_exps.=CPU"'])
def test_experts_kept_in_ram_when_the_model_fits_the_card_is_the_fault(tmp_path, flags):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")),
                    f"RTX 3090 24GB + 64GB RAM, qwen3 30b a3b q4_k_m, llama.cpp {flags}, 12 tok/s")
    assert r.verdict.fixes[0].remedy in ("offload_all", "more_experts_on_gpu")  # drop the flag, never "the GPU is slowed"
    t = r.verdict.fixes[0].title
    assert "drop --" in t or "no --n-cpu-moe / --cpu-moe at all" in t, t
    assert r.verdict.fixes[0].new_decode_tps > 100  # Qwen3-30B-A3B all on a 3090: ~136 tok/s
    assert all(f.remedy != "setup:gpu_state" for f in r.verdict.fixes[:1])


def test_a_switch_never_promises_past_the_other_engines_ceiling(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")),
                    "M3 Max 128GB 40 core, llama 3.3 70b Q4_K_M in LM Studio, getting 7.5 tok/s. Should I switch to MLX?")
    a = r.verdict.engine_answer
    to = float(a.split("decode ≈ 7.5 → ")[1].split(" tok/s")[0])
    # 7.5 x the predicted ratio (1.43) would be 10.7, above MLX's own 4-bit ceiling on 400 GB/s (~10.2)
    assert to < 10.2 and "held under the other engine's ceiling" in a


def test_a_70b_too_big_for_a_32gb_card_is_offered_its_3_bit_build(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")),
                    "RTX 5090 32GB, want to run Llama 3.3 70B. Q4_K_M won't fit right? what are my options and speeds?")
    fx = r.verdict.fixes[0]
    # 70.6 B x 3.44 bits = 30.4 GB of weights: the most bits that fit 33.8 GB usable (IQ3_M at 3.66 would not)
    assert fx.id == "fit_in_memory" and "IQ3_S" in fx.title
    assert fx.new_decode_tps is not None and 30 < fx.new_decode_tps < 50  # all on the card, ~1.8 TB/s / 30 GB


@pytest.mark.parametrize("text, share", [
    ("ollama says 50% CPU 50% GPU", 0.5), ("60% GPU / 40% CPU", 0.6), ("30% cpu and 70% gpu", 0.7),
    ("48%/52% CPU/GPU", 0.52), ("50% CPU 60% GPU", None), ("90% GPU utilization, 20% CPU", None),
])
def test_a_cpu_gpu_split_said_in_words_is_read(text, share):
    from advisor.understand.symptoms import read_symptoms

    assert read_symptoms(text).gpu_fraction == share


@pytest.mark.parametrize("rate, kept", [("0.0001", None), ("0.005", 0.005), ("0.0015", 0.0015), ("12.3456", 12.346)])
def test_a_tiny_rate_is_kept_as_said_or_said_back_as_ignored(tmp_path, rate, kept):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), f"RTX 4090 llama 3 8b {rate} tok/s")
    assert r.facts.measured_decode_tps == kept
    if kept is None:
        assert f"'{rate} tok/s' is not a usable speed; I ignored it." in r.reply


def test_the_verdict_card_says_a_queue_not_a_model_that_does_not_fit(tmp_path):
    from advisor import service
    from knowledge.store import Store
    from ui.handlers import verdict_card

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "A100 80GB vLLM Llama 3.3 70B FP8 for 50 users, 1k in / 500 out. enough?")
    card = verdict_card(r.verdict)
    assert "the model does not fit" not in card and "does not fit**" not in card
    assert "→ the weights and 24 users' caches fit; **the other 26 wait**." in card
    assert "| decode, 24 of 50 users together (the rest wait) |" in card
    # a card whose bottleneck is memory names the queue, not the model
    r2 = service.ask(Store(str(tmp_path / "s2.duckdb")), "RTX 4090, ollama, qwen2.5 32b q4_k_m, 50 users, 1k in / 500 out")
    assert r2.verdict.bottleneck == "memory_fit" and r2.verdict.prediction.running == 10
    assert "memory (the KV caches of 50 users do not all fit: 10 at once, the rest wait)" in verdict_card(r2.verdict)
