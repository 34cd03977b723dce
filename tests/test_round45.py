"""Round 45: absurd unitless speeds said, hybrid CPU+GPU MoE from what people say, and step-model calibration."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("msg", [
    "RTX 3060 12GB, qwen2.5 14b q4_k_m, currently getting 99999999999999999999. is that slow?",
    "M2 Pro 16GB, llama 3.1 8b, it only does 5000000, is that normal?",
])
def test_an_absurd_speed_without_its_unit_is_said_as_ignored(tmp_path, msg):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), msg)
    assert r.facts.measured_decode_tps is None
    assert "is not a usable token rate; I ignored it." in r.reply
    assert r.verdict is not None  # the rest of the message is still answered


# --- RAM stated beside a card: where offloaded weights are read -------------------------------------------------

@pytest.mark.parametrize(("msg", "gbs"), [
    ("2x RTX 3090 + 128GB DDR5-6000, Qwen3-235B-A22B Q4_K_M", 96.0),  # 2 × 8 B × 6000 MT/s
    ("RTX 3060 12GB with 64GB DDR4-3200 dual channel, qwen3 30b a3b", 51.2),
    ("EPYC 9654 with 12-channel DDR5-4800, 768GB RAM + 4x RTX 3090, DeepSeek R1", 460.8),
    ("EPYC 7763 + 2x 3090, deepseek r1", 204.8),  # the CPU's catalog memory: 8 × 8 B × 3200 MT/s
    ("RTX 4090 + Ryzen 9 7950X, 96GB DDR5-6400, gpt-oss-120b", 102.4),
    ("i9-10900X with quad-channel DDR4-3200 and an RTX 2080, qwen3 30b a3b", 102.4),
])
def test_ram_said_beside_a_card_sets_the_host_bandwidth(store, msg, gbs):
    from advisor.intake._extract import extract

    e = extract(msg, store)
    assert e.host_bandwidth_gbs == pytest.approx(gbs)
    assert any(n.startswith("The system RAM beside the card") for n in e.notes)
    assert not any("You also mentioned" in n for n in e.notes)  # a host CPU is no second machine


@pytest.mark.parametrize("msg", [
    "RTX 4090 and 64GB DDR5, llama 70b",  # a generation alone says no speed
    "RTX 4090, llama 3.1 8b",
    "M2 Max 64GB with LPDDR5-6400, llama 70b",  # no card: the RAM is the machine's own
])
def test_no_host_bandwidth_without_a_stated_rate_or_host_cpu(store, msg):
    from advisor.intake._extract import extract

    assert extract(msg, store).host_bandwidth_gbs is None


def test_the_stated_host_ram_reaches_the_prediction(tmp_path):
    from advisor import service
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    slow = service.ask(st, "RTX 3060 12GB + 64GB DDR4-2133 dual channel, llama 3.3 70b q4_k_m, how fast?")
    fast = service.ask(st, "RTX 3060 12GB + 64GB DDR5-8000 dual channel, llama 3.3 70b q4_k_m, how fast?")
    ps, pf = slow.verdict.prediction, fast.verdict.prediction
    assert any("~34.1 GB/s (from the RAM or host CPU you named)" in a for a in ps.assumptions)  # 2 × 8 B × 2133 MT/s
    assert any("~128 GB/s (from the RAM or host CPU you named)" in a for a in pf.assumptions)
    assert pf.decode_tps > 2.5 * ps.decode_tps  # most of the 70B is read from system RAM


# --- --n-cpu-moe N / --cpu-moe / -ot exps=CPU ---------------------------------------------------------------

@pytest.mark.parametrize(("text", "n"), [
    ("llama-server -m q.gguf -ngl 99 --n-cpu-moe 30", 30),
    ("-ngl 99 -ncmoe 12", 12),
    ("--n-cpu-moe=8", 8),
    ("-ngl 99 --cpu-moe", 10_000),
    ("-ot exps=CPU", 10_000),
    ("-ot \".ffn_.*_exps.=CPU\"", 10_000),
    ("--override-tensor 'exps=CPU'", 10_000),
    ("LM Studio with 'force model expert weights onto CPU' on", 10_000),
    ("-ot \"blk\\.(2[0-9])\\.ffn_.*_exps=CPU\"", 10),  # blocks 20–29
    ("-ot blk\\.(1[4-9]|[2-9][0-9])\\.ffn.*exps=CPU", 86),  # blocks 14–99
    ("-ot \"blk\\.(((\\.ffn_exps=CPU\"", None),  # no readable block pattern
    ("should I try --n-cpu-moe 20?", None),  # asked about, not run
    ("llama-server -ngl 99", None),
])
def test_how_many_layers_experts_sit_in_system_ram(text, n):
    from advisor.understand.symptoms import cpu_moe_layers

    assert cpu_moe_layers(text) == n


def _moe(**kw):
    from advisor.models import ModelSpec

    base = dict(id="x", params_b=117.0, active_params_b=5.1, n_layers=36, hidden_size=2880, n_heads=64, n_kv_heads=8,
                head_dim=64, vocab_size=201088, max_context=131072, experts=128, experts_per_token=4)
    return ModelSpec(**{**base, **kw})


def test_expert_layers_share_by_hand():
    from advisor.perf.step import expert_layers_share, moe_split_bytes

    m = _moe()
    dense, routed, ke = moe_split_bytes(m, 4.25)
    per_token = dense + routed * ke
    # all experts in system RAM: only the dense part of a token's bytes is read from the GPU
    assert expert_layers_share(m, 4.25, 36) == pytest.approx(dense / per_token)
    assert expert_layers_share(m, 4.25, 10_000) == pytest.approx(dense / per_token)
    # 9 of 36 layers: a quarter of the routed bytes a token reads come from system RAM
    assert expert_layers_share(m, 4.25, 9) == pytest.approx(1 - 0.25 * routed * ke / per_token)
    assert expert_layers_share(m, 4.25, 0) == pytest.approx(1.0)
    assert expert_layers_share(_moe(experts=None, experts_per_token=None, active_params_b=None), 4.25, 10) == 1.0


def _ask(tmp_path, msg):
    from advisor import service
    from knowledge.store import Store

    return service.ask(Store(str(tmp_path / "s.duckdb")), msg)


def test_all_experts_in_system_ram_is_slower_than_as_many_as_fit(tmp_path):
    # Qwen3-30B-A3B Q4_K_M (18.6 GB) on a 12 GB card: --cpu-moe reads every expert a token uses from system RAM;
    # the fix puts the experts of as many layers as fit on the card (the memory fit's share)
    r = _ask(tmp_path, "RTX 3060 12GB + 64GB DDR4-3200 dual channel, Qwen3-30B-A3B Q4_K_M in llama.cpp -ngl 99 "
                       "--cpu-moe. How fast will it be?")
    v = r.verdict
    assert v.planned_split and v.bottleneck == "memory_fit"
    assert r.reply.startswith("**It runs split as you set it up: the routed experts in system RAM")
    top = v.fixes[0]
    assert top.title.startswith("Put more experts on the GPU: --n-cpu-moe ")
    n = int(top.title.split("--n-cpu-moe ")[1].split()[0])
    assert 10 <= n <= 30  # of 48 layers: 12 GB holds the dense part and about half of the experts
    assert top.new_decode_tps > 1.4 * v.prediction.decode_tps
    assert "does not fit" not in r.reply.split("\n")[0]
    assert not v.fixes[0].id.startswith("smaller")


def test_a_slow_planned_split_checks_the_cpu_side_first(tmp_path):
    r = _ask(tmp_path, "EPYC 9654 with 12-channel DDR5-4800, 768GB RAM + 4x RTX 3090, DeepSeek R1 Q4_K_M in llama.cpp "
                       "with --n-cpu-moe 50, only 4 tok/s. normal?")
    v = r.verdict
    assert v.planned_split and v.phase_status["decode_tps"] == "below_expected"
    assert v.fixes[0].title.startswith("Tune the CPU side of the split")
    assert "below the usual" in r.reply.split("\n")[0] and "First fix" not in r.reply.split("\n")[0]
    # the EPYC's 12 channels are where the experts are read, as stated
    assert any("at ~460.8 GB/s (from the RAM or host CPU you named)" in a for a in v.prediction.assumptions)
    assert any(a.startswith("Experts in system RAM as set up: the routed experts of 50 of 61 layers")
               for a in v.prediction.assumptions)
    assert "smaller model" not in v.fixes[0].title.lower()


def test_a_planned_split_at_its_usual_speed_is_normal(tmp_path):
    r = _ask(tmp_path, "RTX 4090 + 64GB DDR5-6000, gpt-oss-120b in llama.cpp with --n-cpu-moe 24, getting 30 tok/s, good?")
    v = r.verdict
    assert v.planned_split and v.phase_status["decode_tps"] == "normal"
    assert "normal for that split" in r.reply.split("\n")[0]
    assert ("Memory:** needs 64.5 GB: the experts you placed in system RAM sit there, the rest in the 25.2 GB of GPU "
            "memory usable") in r.reply


def test_experts_in_ram_that_ram_cannot_hold_is_no_planned_split(tmp_path):
    # DeepSeek R1 Q4_K_M (~410 GB) with 64 GB of RAM beside a 24 GB card: nothing about it is a working split
    r = _ask(tmp_path, "RTX 4090 + 64GB DDR5-6000, DeepSeek R1 Q4_K_M with --n-cpu-moe 50, how fast?")
    assert r.verdict is not None and not r.verdict.planned_split


# --- "should I switch to X?" ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "asked"), [
    ("M3 Max with llama.cpp, qwen2.5 32b, 12 tok/s. Should I switch to MLX?", "mlx"),
    ("RTX 4090, would vLLM be faster than ollama for 10 users?", "vllm"),
    ("is exllama worth trying on my 3090?", "exllamav2"),
    ("M2 Max, ollama, llama 8b. MLX instead?", "mlx"),
    ("I run vllm, would sglang be better?", "sglang"),
    ("should I use llama.cpp instead of ollama?", "llama.cpp"),
    ("thinking of moving to MLX, worth it?", "mlx"),
    ("How about TensorRT-LLM?", "tensorrt-llm"),
    ("I switched to llama.cpp, still slow", None),  # done: the engine in use
    ("I switched from ollama to llama.cpp last week", None),
    ("using llama.cpp, is it slow?", None),
    ("with LM Studio, 20 tok/s", None),
])
def test_the_engine_asked_about(text, asked):
    from advisor.understand.engine_question import engine_asked

    assert engine_asked(text) == asked


@pytest.mark.parametrize(("msg", "now"), [
    ("RTX 4090, would vLLM be faster than ollama for llama 3.1 8b with 10 users?", "ollama"),
    ("M3 Max 64GB with llama.cpp, qwen2.5 32b q4_k_m 12 tok/s. Should I switch to MLX?", "llama.cpp"),
    ("RTX 3090 running ollama, llama 3.1 8b; thinking of moving to vLLM, worth it?", "ollama"),
])
def test_the_engine_asked_about_is_not_the_engine_in_use(store, msg, now):
    from advisor.intake._extract import extract

    assert extract(msg, store).backend == now


@pytest.mark.parametrize(("q", "engine", "want"), [
    ("Q4_K_M", "mlx", "MLX 4-bit g64"), ("Q8_0", "mlx", "MLX 8-bit g64"), ("Q6_K", "mlx", "MLX 6-bit g64"),
    ("Q4_K_M", "vllm", "AWQ 4-bit g128"), ("Q8_0", "vllm", "FP8 (E4M3)"),
    ("MLX 4-bit g64", "llama.cpp", "Q4_K_M"), ("MLX 8-bit g64", "ollama", "Q8_0"),
    ("Q4_K_M", "ollama", "Q4_K_M"), ("AWQ 4-bit g128", "sglang", "AWQ 4-bit g128"),
    ("Q4_K_M", "exllamav2", "EXL2 5 bpw"),
])
def test_the_same_size_build_another_engine_loads(store, q, engine, want):
    from advisor.diagnose.engines import equivalent_quant
    from knowledge import catalog

    assert equivalent_quant(store, catalog.resolve_quant(store, q).value, engine).name == want


def test_switch_to_mlx_on_a_mac_answers_with_both_predictions(tmp_path):
    r = _ask(tmp_path, "M3 Max 64GB with llama.cpp, qwen2.5 32b q4_k_m 12 tok/s. Should I switch to MLX?")
    v = r.verdict
    assert v.engine_answer is not None and v.engine_answer.startswith("MLX instead with its MLX 4-bit g64 build: decode ≈ 12 → ")
    now, new = (float(x) for x in v.engine_answer.split("decode ≈ ")[1].split(" tok/s")[0].split(" → "))
    assert now == 12.0  # the person's own rate, scaled by the ratio of the two predictions
    ratio = float(v.engine_answer.split("× the predicted ")[1].split(")")[0])
    assert new == pytest.approx(12.0 * ratio, abs=0.06)
    assert ratio > 1.1  # MLX's kernels and its 4.5-bit build read fewer bytes at a higher share of bandwidth
    assert "**MLX instead with its MLX 4-bit g64 build:**" in r.reply
    assert v.engine_answer.endswith("worth it for speed.")


@pytest.mark.parametrize(("msg", "why"), [
    ("M2 Max 32GB, ollama, qwen3 14b. Would vLLM be faster?", "vLLM needs a discrete NVIDIA or AMD GPU"),
    ("RTX 4090 with llama.cpp, qwen3 8b. Should I switch to MLX?", "MLX is Apple's framework for Apple silicon"),
    ("RX 7900 XTX with llama.cpp, qwen3 8b. How about TensorRT-LLM?", "TensorRT-LLM runs only on NVIDIA GPUs"),
    ("M4 Max 64GB, llama.cpp, qwen3 8b. is exllama worth trying?", "ExLlamaV2 runs only on NVIDIA (CUDA) and AMD"),
])
def test_an_engine_that_cannot_run_here_is_said_so(tmp_path, msg, why):
    r = _ask(tmp_path, msg)
    assert r.verdict.engine_answer is not None and why in r.verdict.engine_answer
    assert "not here" in r.verdict.engine_answer
    assert not r.reply.startswith("**Yes")  # the question was about the engine, not "can I run it?"


def test_an_engine_that_gives_the_same_speed_is_not_worth_switching(tmp_path):
    r = _ask(tmp_path, "RTX 3090, llama 3.1 8b q4_k_m in llama.cpp, 100 tok/s. is exllama worth trying?")
    a = r.verdict.engine_answer
    assert a.startswith("ExLlamaV2 instead with its EXL2 5 bpw build")
    assert a.endswith("about the same: not worth switching for speed alone.")
    assert not any(f.title.startswith("Switch to ExLlamaV2") for f in r.verdict.fixes)


def test_no_engine_answer_without_a_question(tmp_path):
    r = _ask(tmp_path, "M3 Max 64GB with llama.cpp, qwen2.5 32b q4_k_m 12 tok/s")
    assert r.verdict.engine_answer is None


# --- a format the stated engine cannot load ----------------------------------------------------------------------

@pytest.mark.parametrize(("msg", "quant", "said"), [
    ("RTX 3090, llama 3.3 70b 4.0bpw exl2 in llama.cpp, how fast?", "Q4_K_M",
     "llama.cpp cannot load EXL2 4 bpw files (ExLlamaV2’s format)"),
    ("M2 Max 64GB, ollama, qwen2.5 32b mlx 4bit, how fast?", "Q4_K_M",
     "Ollama cannot load MLX 4-bit g64 files (MLX’s own format)"),
    ("RTX 4090, llama 3.1 8b AWQ in ollama", "Q4_K_M", "Ollama cannot load AWQ 4-bit g128 files"),
    ("RTX 4090, qwen2.5 32b q4_k_m in exllamav2", "EXL2 5 bpw", "ExLlamaV2 cannot load Q4_K_M files (llama.cpp’s format)"),
    ("M2 Max 64GB, qwen2.5 32b q8_0 in mlx_lm", "MLX 8-bit g64", "MLX cannot load Q8_0 files"),
])
def test_a_format_the_engine_cannot_load_is_sized_as_its_own_build(tmp_path, msg, quant, said):
    r = _ask(tmp_path, msg)
    p = r.verdict.prediction
    assert p.quant == quant
    assert any(a.removeprefix("Not as it is: ").startswith(said) for a in p.assumptions + r.verdict.assumptions)


@pytest.mark.parametrize(("msg", "quant"), [
    ("RTX 4090, qwen2.5 32b 4.65bpw exl2 with tabbyAPI, how fast?", "EXL2 4.65 bpw"),
    ("RTX 4090, vllm, llama 3.1 8b q4_k_m gguf", "Q4_K_M"),  # vLLM loads GGUF (experimental)
    ("M2 Max 64GB, LM Studio (MLX), qwen2.5 32b 4bit", "MLX 4-bit g64"),
    ("RTX 4090, llama.cpp, llama 3.1 8b f16", "F16"),
])
def test_a_format_the_engine_loads_is_kept(tmp_path, msg, quant):
    r = _ask(tmp_path, msg)
    assert r.verdict.prediction.quant == quant
    assert not any("cannot load" in a for a in r.verdict.prediction.assumptions + r.verdict.assumptions)


def test_vllm_cpu_offload_streams_weights_over_pcie_every_step(store):
    from advisor.perf import predict
    from advisor.perf.step import HOST_COPY_EFFICIENCY, host_link_gbs
    from knowledge import catalog

    hw = catalog.resolve_hardware(store, "RTX 4090").value
    m = catalog.resolve_model(store, "llama 3.3 70b").value
    vllm = predict(store, hardware=hw, model=m, quant=catalog.resolve_quant(store, "AWQ 4-bit g128").value, backend="vllm")
    gguf = predict(store, hardware=hw, model=m, quant=catalog.resolve_quant(store, "Q4_K_M").value, backend="llama.cpp")
    link = host_link_gbs(hw.release_year)[0] * HOST_COPY_EFFICIENCY  # PCIe 4.0 x16: 31.5 × 0.8 ≈ 25 GB/s
    host_gb = vllm.memory.weights_gb * (1 - vllm.memory.gpu_share)
    assert vllm.decode_tps < gguf.decode_tps  # PCIe (~25 GB/s) is slower than the CPU reading RAM (~50+ GB/s)
    assert vllm.decode_tps < link / host_gb  # every step copies what sits in system RAM
    assert vllm.decode_tps > 0.7 * link / host_gb  # and that copy is most of the step
    assert any("--cpu-offload-gb, which copies" in a for a in vllm.assumptions)


def test_a_team_hears_the_first_word_alone_and_in_a_burst(tmp_path):
    r = _ask(tmp_path, "We serve llama 3.3 70b fp8 on 8x H100 with vLLM to 64 concurrent users, 2000-token prompts, "
                       "300-token answers. What TTFT and tok/s per user should we expect?")
    p = r.verdict.prediction
    assert r.verdict.asks_speed  # "what TTFT … should we expect": the number first, not "Yes"
    assert r.reply.startswith("**About ")
    line = next(x for x in r.reply.splitlines() if x.startswith("- **First word:**"))
    assert "on an idle server; up to ≈ " in line and "for the last of 64 prompts sent at the same moment" in line
    from advisor.render.markdown import fmt_s
    assert fmt_s(64 * p.ttft_s) in line  # 64 prompts read one after another


@pytest.mark.parametrize("text", ["What TTFT should we expect?", "what throughput will we get?",
                                  "Which speed should I expect on it?", "what latency for 10 users?"])
def test_asking_what_to_expect_asks_for_the_number(text):
    from advisor.understand.symptoms import _HOW_FAST

    assert _HOW_FAST.search(text)


@pytest.mark.parametrize(("msg", "depth"), [
    ("M3 Max 64GB, llama 3.3 70b q4_k_m in LM Studio. After an 8k-token conversation it gets really slow, why?", 8000),
    ("M2 Ultra 192GB, qwen2.5 72b q4, our chats run to 20k tokens of history. How fast is it then?", 20000),
    ("RTX 4090, qwen3 32b, 12000 tokens into the conversation, how fast?", 12000),
])
def test_a_conversation_length_is_context_depth(store, msg, depth):
    from advisor.intake._extract import extract

    e = extract(msg, store)
    assert e.depth == depth and e.prompt_tokens is None


def test_a_long_chat_that_gets_slow_checks_the_conversation_cache(tmp_path):
    r = _ask(tmp_path, "M3 Max 64GB, llama 3.3 70b q4_k_m in LM Studio. After an 8k-token conversation it gets really "
                       "slow, why?")
    v = r.verdict
    fx = next(f for f in v.fixes if f.id == "prefix_caching")
    assert fx.title.startswith("Let the app remember the start of the conversation between turns: the context length")
    p = v.prediction
    # re-reading all 8,500 tokens vs only the new 500, at the same prefill rate
    assert fx.new_ttft_s == pytest.approx(500 / p.prefill_tps, rel=0.01)
    assert fx.speedup == pytest.approx(8500 / 500, rel=0.01)


# --- "Q4_K_M or IQ1_S?" -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("msg", "named"), [
    ("M3 Ultra 512GB, DeepSeek R1 671B: Q4_K_M or IQ1_S, which should I run?", ["Q4_K_M", "IQ1_S"]),
    ("RTX 4090, qwen3 32b, Q4_K_M vs Q5_K_M?", ["Q4_K_M", "Q5_K_M"]),
    ("RTX 3060 12GB, qwen2.5 14b: is Q6_K better than Q4_K_M here?", ["Q6_K", "Q4_K_M"]),
    ("RTX 3090 with qwen 32b q4_k_m", None),
    ("RTX 3090, Q4_K_M (4.85 bpw) of qwen 32b", None),  # a GGUF's own size, not a second format
])
def test_formats_weighed_against_each_other(store, msg, named):
    from advisor.intake._extract import extract

    assert extract(msg, store).compare_quants == named


def test_the_pick_is_the_most_bits_that_fit_at_reading_speed(tmp_path):
    r = _ask(tmp_path, "M3 Ultra 512GB, DeepSeek R1 671B: Q4_K_M or IQ1_S, which should I run?")
    a = r.verdict.format_answer
    assert a.startswith("Q4_K_M (4.89 bits): needs 423 GB, fits once the GPU memory limit is raised; decode ≈ ")
    assert "IQ1_S (1.56 bits): needs 143 GB, fits; decode ≈ " in a
    assert "Pick Q4_K_M: the most bits per weight that fit" in a
    assert "Below about 3 bits (IQ1_S) answers get visibly worse" in a
    assert "**The formats you named:**" in r.reply


def test_a_format_that_spills_is_not_the_pick(tmp_path):
    r = _ask(tmp_path, "RTX 3060 12GB, qwen2.5 14b: Q4_K_M or Q6_K?")
    a = r.verdict.format_answer
    assert "Q6_K (6.56 bits): needs 13 GB, does not fit the GPU" in a
    assert "Pick Q4_K_M" in a
    assert not r.reply.startswith("**Yes")


def test_a_later_format_replaces_the_weighed_pair(store):
    from advisor.intake import update

    first = update(None, "RTX 3060 12GB, qwen2.5 14b: Q4_K_M or Q6_K?", store).facts
    assert first.compare_quants == ["Q4_K_M", "Q6_K"]
    assert update(first, "ok, and at Q8_0?", store).facts.compare_quants is None


@pytest.mark.parametrize("msg", [
    "RTX 3060 12GB + 64GB DDR4, Qwen3-30B-A3B Q4_K_M, how fast?",  # keep only the experts in system RAM
    "gpt-oss-120b on a 4090 + 96GB DDR5-5600 with --n-cpu-moe 30, pp 199 tg 22 with a 10k token prompt. how to make "
    "prompt processing faster?",  # larger micro-batches
    "RTX 3060 12GB + 64GB DDR4-3200, Qwen3-30B-A3B Q4_K_M with --cpu-moe. How fast will it be?",  # more experts on GPU
])
def test_every_fix_has_a_contract_id_and_its_remedy(tmp_path, msg):
    from advisor.models import FIX_IDS

    v = _ask(tmp_path, msg).verdict
    assert v.fixes and all(f.id in FIX_IDS for f in v.fixes), [f.id for f in v.fixes]
    assert all(f.remedy for f in v.fixes)
    assert {f.remedy for f in v.fixes} & {"moe_expert_offload", "micro_batch", "more_experts_on_gpu"}


# --- what the two helpers found ---------------------------------------------------------------------------------

def test_a_stated_n_cpu_moe_that_overfills_the_card_is_said_and_not_predicted(tmp_path):
    r = _ask(tmp_path, "RTX 3090 + 64GB DDR4-3600, GLM 4.5 Air Q4_K_M, llama.cpp -ngl 99 --n-cpu-moe 5, "
                       "currently getting 9 tok/s")
    a = r.verdict.prediction.assumptions
    note = next(x for x in a if x.startswith("--n-cpu-moe 5 would leave about "))
    assert "it does not load as set (out of memory)" in note
    fewest = int(note.rsplit(", ", 1)[1].rstrip("."))
    assert 20 <= fewest <= 46  # GLM-4.5-Air: 46 layers, ~67 GB at Q4_K_M, 25 GB on the card
    assert any(x.startswith(f"Experts in system RAM as set up: the routed experts of {fewest} of 46 layers") for x in a)


def test_more_weights_in_ram_than_the_computer_has_are_paged_from_the_ssd(store):
    from advisor.perf import predict
    from advisor.perf.prediction import SWAP_READ_GBS
    from knowledge import catalog

    hw = catalog.resolve_hardware(store, "RTX 4090").value
    m = catalog.resolve_model(store, "llama 3.3 70b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    roomy_ram = predict(store, hardware=hw, model=m, quant=q, backend="llama.cpp", system_ram_gb=128)
    small_ram = predict(store, hardware=hw, model=m, quant=q, backend="llama.cpp", system_ram_gb=8)
    assert small_ram.decode_tps < 0.3 * roomy_ram.decode_tps
    held = small_ram.memory.weights_gb * (1 - small_ram.memory.gpu_share)
    assert small_ram.decode_tps < SWAP_READ_GBS / (held - (8 - 0.15 * 8))  # the part not in RAM alone, from the SSD
    assert any("paged in from the SSD for every token" in a for a in small_ram.assumptions)


def test_a_purchase_fix_is_not_held_to_the_expert_flags(tmp_path):
    r = _ask(tmp_path, "RTX 4090 + 128GB DDR5-6000, Qwen3 235B A22B Q4_K_M in llama.cpp with --cpu-moe, how fast?")
    now = r.verdict.prediction.decode_tps
    for f in r.verdict.fixes:
        if f.id in ("more_bandwidth", "more_compute") and "fits in VRAM" in f.title and f.new_decode_tps:
            assert f.new_decode_tps > now


@pytest.mark.parametrize(("text", "on_cpu"), [
    ("-ngl 99 -ncmoe 10", True), ("-ncmoe=10", True), ("-cmoe", True), ("-ot exps=CUDA0", False),
    ("-ot \".ffn_.*_exps.=CPU\"", True), ("--override-tensor exps=CPU", True),
])
def test_expert_placement_flags(text, on_cpu):
    from advisor.understand.symptoms import experts_on_cpu_said

    assert experts_on_cpu_said(text) is on_cpu


def test_vllm_ignores_llama_cpp_expert_flags(tmp_path):
    r = _ask(tmp_path, "RTX 4090 + 128GB DDR5-6000, Qwen3 235B A22B AWQ in vLLM with --n-cpu-moe 60, how fast?")
    assert not any(a.startswith("Experts in system RAM as set up") for a in r.verdict.prediction.assumptions)


@pytest.mark.parametrize("msg", ["I would never switch to MLX, M2 Max 32GB with llama.cpp, llama 8b",
                                 "M2 Max 32GB, llama.cpp, llama 8b. I do not want to switch to ollama"])
def test_an_engine_refused_is_not_asked_about(tmp_path, msg):
    assert _ask(tmp_path, msg).verdict.engine_answer is None


def test_faster_prompts_with_slower_answers_is_not_called_worth_it(tmp_path):
    r = _ask(tmp_path, "RTX 4090, Qwen2.5 32B Q4_K_M in ollama, would vLLM be faster for me alone?")
    a = r.verdict.engine_answer
    now, new = (float(x) for x in a.split("decode ≈ ")[1].split(" tok/s")[0].split(" → "))
    assert new < now  # AWQ on vLLM writes a single stream's answer no faster than Q4_K_M on llama.cpp here
    assert "worth it for speed" not in a
    if new < 0.95 * now:
        assert a.endswith(("slower here: stay.", "about the same: not worth switching for speed alone."))
    else:  # answers within 5 %, prompts read 1.3x faster or more: a qualified yes, for long prompts only
        pre_now, pre_new = (float(x.replace(",", "")) for x in
                            a.split("prompt reading ≈ ")[1].split(" tok/s")[0].split(" → "))
        assert pre_new >= 1.3 * pre_now and a.endswith("worth it for long prompts only.")


@pytest.mark.parametrize(("msg", "backend"), [
    ("M2 Max 32GB, Llama 3.1 8B, MLX 4-bit in ollama", "ollama"),
    ("can i run mlx-community/Llama-3.3-70B-Instruct-4bit in ollama? M3 Max 64GB", "ollama"),
    ("M3 Max 64GB, mlx-community/Llama-3.3-70B-Instruct-4bit", "mlx"),
    ("ik_llama.cpp deepseek v3 IQ2_K_R4 on EPYC 9654 w/ 768GB 12-channel DDR5-4800 + one 4090", "ik_llama.cpp"),
])
def test_a_builds_name_does_not_override_the_engine_named(store, msg, backend):
    from advisor.intake._extract import extract

    assert extract(msg, store).backend == backend


@pytest.mark.parametrize(("msg", "quant"), [
    ("RTX 3090, Qwen2.5-Coder-32B-exl2-4.0bpw in llama.cpp, it wont load", "EXL2 4 bpw"),
    ("RTX 4090, Meta-Llama-3.1-8B-Instruct-Q6_K.gguf in llama.cpp", "Q6_K"),
    ("M3 Max 64GB, mlx-community/Llama-3.3-70B-Instruct-4bit", "MLX 4-bit"),
])
def test_the_format_in_a_models_file_name(store, msg, quant):
    from advisor.intake._extract import extract

    assert extract(msg, store).quant == quant


def test_a_file_the_engine_cannot_load_is_said_in_the_answer(tmp_path):
    r = _ask(tmp_path, "RTX 3090, Qwen2.5-Coder-32B-exl2-4.0bpw in llama.cpp, it wont load")
    visible = r.reply.split("<details>")[0]
    assert visible.startswith("**Not as written: llama.cpp cannot load EXL2 4 bpw files.** Sized as Q4_K_M")


def test_a_host_cpu_written_first_is_the_cards_host_not_a_comparison(store):
    from advisor.intake._extract import extract

    e = extract("ik_llama.cpp deepseek v3 0324 IQ2_K_R4 on EPYC 9654 w/ 768GB 12-channel DDR5-4800 + one 4090, "
                "-ot exps=CPU, PP ~45 t/s TG ~9 t/s. how do i make it faster", store)
    assert e.hardware == "RTX 4090" and e.compare_hardware is None and e.host_bandwidth_gbs == pytest.approx(460.8)
    e2 = extract("should I buy an EPYC 9654 server or an RTX 4090 for deepseek?", store)
    assert e2.compare_hardware == ["EPYC 9654", "RTX 4090"]  # "or": two candidates


def test_formats_the_engine_cannot_load_stay_in_the_comparison(tmp_path):
    a = _ask(tmp_path, "RTX 4090, Qwen2.5 32B in ollama. Q4_K_M, AWQ or exl2 4.65bpw?").verdict.format_answer
    assert a.startswith("Q4_K_M (4.89 bits): needs 21 GB, fits; decode ≈ ")
    assert "AWQ 4-bit g128: Ollama cannot load AWQ 4-bit g128 files" in a
    assert "EXL2 4.65 bpw: Ollama cannot load EXL2 4.65 bpw files" in a
    assert "Pick Q4_K_M" in a


def test_mlx_runs_every_layer_on_the_macs_gpu(tmp_path):
    r = _ask(tmp_path, "M2 Max 32GB, LM Studio, qwen3-14b mlx 4bit, after ~20k tokens of conversation it does 4 tok/s")
    assert not any("natively with Metal" in f.title for f in r.verdict.fixes)


def test_cpu_moe_on_a_moe_that_fits_says_to_drop_it(tmp_path):
    r = _ask(tmp_path, "RTX 4090, Qwen3 30B A3B Q4_K_M in llama.cpp with --cpu-moe, getting 8 tok/s")
    assert r.verdict.fixes[0].title.startswith("Keep the experts on the GPU too: drop --cpu-moe")


def test_a_conversation_longer_than_the_models_context_is_cut_to_it(tmp_path):
    r = _ask(tmp_path, "RTX 3090, Llama 3.1 8B Q4_K_M in llama.cpp. After a 200k-token conversation it gets slow")
    p = r.verdict.prediction
    assert any("is more than Llama-3.1-8B holds (131,072-token context)" in a for a in r.verdict.assumptions)
    assert p.memory.fits  # the KV cache of at most the context window, not of 200k tokens


def test_a_zero_speed_is_said_as_ignored(tmp_path):
    r = _ask(tmp_path, "RTX 4090, llama 3.1 8b, currently getting 0, is that normal?")
    assert r.facts.measured_decode_tps is None and "is not a usable token rate; I ignored it." in r.reply


def test_ddr3_beside_an_old_card(store):
    from advisor.intake._extract import extract

    assert extract("GTX 1080 with 32GB DDR3-1600, llama 3.1 8b", store).host_bandwidth_gbs == pytest.approx(25.6)


def test_the_host_link_by_the_cards_year():
    from advisor.perf.step import host_link_gbs

    assert host_link_gbs(2025)[0] == pytest.approx(63.0, abs=0.1)  # RTX 5090, RX 9070: PCIe 5.0 x16
    assert host_link_gbs(2022)[0] == pytest.approx(31.5, abs=0.1)
    assert host_link_gbs(2017)[0] == pytest.approx(15.76, abs=0.1)


@pytest.mark.parametrize("text", ["switch to ollama", "ok, use vllm then", "MLX instead", "let's try llama.cpp"])
def test_an_engine_said_as_an_instruction_is_not_a_question(text):
    from advisor.understand.engine_question import engine_asked

    assert engine_asked(text) is None


def test_two_engines_weighed_with_or(tmp_path):
    from advisor.understand.engine_question import engine_asked

    assert engine_asked("ollama vs lm studio, which is faster?") == "lm-studio"
    assert engine_asked("I use ollama or sometimes lm studio") is None  # no question
    r = _ask(tmp_path, "whats faster for a 4090 single user, vllm or llama.cpp? qwen3 32b")
    assert r.verdict.prediction.quant == "AWQ 4-bit g128"  # vLLM's BF16 would not fit 24 GB: its 4-bit build
    assert r.verdict.engine_answer.startswith("llama.cpp instead with its Q4_K_M build: decode ≈ ")


def test_a_serving_engine_on_a_card_too_small_for_16_bit_assumes_its_4_bit_build(tmp_path):
    r = _ask(tmp_path, "RTX 4090, qwen3 32b in vllm, how fast for one user?")
    assert r.verdict.prediction.quant == "AWQ 4-bit g128"
    big = _ask(tmp_path, "2x H100, llama 3.3 70b in vllm, 20 users")
    assert big.verdict.prediction.quant == "BF16"  # fits: the checkpoint's own weights


@pytest.mark.parametrize(("text", "secs"), [
    ("it takes 30+ sec before it even starts answering", 30.0),
    ("about 45 seconds before it actually starts writing", 45.0),
])
def test_a_wait_said_loosely_is_the_time_to_first_token(store, text, secs):
    from advisor.intake._extract import extract

    assert extract("RTX 3090, gemma3 27b in ollama. " + text, store).measured_ttft_s == secs


def test_a_long_chat_whose_first_word_waits_is_re_reading_the_conversation(tmp_path):
    r = _ask(tmp_path, "ollama + gemma3 27b on a 3090. after like a 10k token conversation it takes 30+ sec before it "
                       "even starts answering. why?")
    v = r.verdict
    assert "the app is re-reading it on every turn instead of keeping it cached" in r.reply
    assert v.fixes[0].remedy == "prefix_caching" and "Ollama num_ctx" in v.fixes[0].title


@pytest.mark.parametrize(("text", "opened"), [
    ("why is it so slow?", True), ("What should I expect on it?", True), ("which one is faster?", True),
    ("can I run it?", False), ("what do you think, will it fit?", False), ("RTX 4090, llama 8b", False),
])
def test_an_open_question_is_told_apart_from_a_yes_no_one(text, opened):
    from advisor.understand.symptoms import asks_open

    assert asks_open(text) is opened


def test_an_open_question_gets_the_number_first(tmp_path):
    assert _ask(tmp_path, "RTX 4090, llama 3.1 8b, what should I expect?").reply.startswith("**About ")
    assert _ask(tmp_path, "Can my RTX 4070 run llama 3.1 8b for chat?").reply.startswith("**Yes")


@pytest.mark.parametrize(("msg", "backend", "asked"), [
    ("MacBook Pro M4 Max 128GB, qwen3 32b 4-bit. I'd never use MLX, how fast is it?", None, None),
    ("Should I use vLLM or Ollama for 20 users on an RTX A6000 with llama 3.1 8b?", "vllm", "ollama"),
    ("which is faster for qwen2.5 32b, vllm or llama.cpp? RTX 4090", "vllm", "llama.cpp"),
    ("I don't want to use llama.cpp or anything built on it", None, None),
])
def test_engines_refused_or_weighed(store, msg, backend, asked):
    from advisor.intake._extract import extract
    from advisor.understand.engine_question import engine_asked

    assert extract(msg, store).backend == backend
    assert engine_asked(msg) == asked


@pytest.mark.parametrize(("msg", "depth"), [
    ("Mac Studio M2 Ultra 128GB, ollama, llama 3.3 70b q4_k_m. after a break, our 12k-token chat takes 90 seconds "
     "before the first word", 12000),
    ("after lunch the first reply in our 20k-token chat takes 40 seconds", 20000),
])
def test_a_chats_length_is_depth(store, msg, depth):
    from advisor.intake._extract import extract

    e = extract(msg, store)
    assert e.depth == depth and e.prompt_tokens is None and e.gen_tokens is None


def test_a_long_chat_felt_slow_without_a_number_checks_the_cache_first(tmp_path):
    r = _ask(tmp_path, "our chats run to 20k tokens of history and the first token takes forever. RTX 3090, "
                       "qwen2.5 14b q4_k_m ollama")
    assert r.reply.startswith("**With 20,000 tokens of conversation already in the context")
    assert r.verdict.fixes[0].remedy == "prefix_caching"


def test_after_a_break_the_model_reload_comes_first(tmp_path):
    r = _ask(tmp_path, "Mac Studio M2 Ultra 128GB, ollama, llama 3.3 70b q4_k_m. after a break, our 12k-token chat "
                       "takes 90 seconds before the first word")
    assert r.verdict.fixes[0].remedy == "setup:model_load"


def test_a_costly_own_flag_is_not_nothing_to_change(tmp_path):
    r = _ask(tmp_path, "qwen3 30b a3b q4_k_m in llama.cpp with --cpu-moe, RTX 5090 + 64GB DDR5. is this the fastest setup?")
    assert "Nothing you need to change" not in r.reply
    assert r.verdict.fixes[0].remedy == "more_experts_on_gpu" and r.verdict.fixes[0].speedup > 1.5


def test_an_expert_fix_moves_only_the_expert_share(tmp_path):
    # gpt-oss-120b on a 4090 + 64 GB: from every layer's experts in RAM to the fewest that must stay there, the decode
    # gain is bounded by the bytes that leave system RAM (never the RAM-paging jump of an inconsistent what-if)
    r = _ask(tmp_path, "RTX 4090 + 128GB DDR5-6000, gpt-oss-120b in llama.cpp with --cpu-moe, how fast?")
    fx = [f for f in r.verdict.fixes if f.remedy == "more_experts_on_gpu"]
    assert len(fx) == 1 and 1.05 < fx[0].speedup < 2.0  # said once


def test_a_smaller_model_that_fits_is_not_held_to_the_users_expert_flags(tmp_path):
    r = _ask(tmp_path, "RTX 4090 + 128GB DDR5-6000, Qwen3 235B A22B Q4_K_M in llama.cpp with --n-cpu-moe 80, how fast?")
    fx = next(f for f in r.verdict.fixes if f.id == "smaller_model")
    assert "Qwen3.6 35B-A3B" in fx.title
    # a 3B-active MoE all on the card (~157 tok/s), not held to 80 layers' experts in system RAM (~10)
    assert fx.new_decode_tps is not None and fx.new_decode_tps > 80


def test_exllamav2_off_a_graphics_card_is_said(tmp_path):
    r = _ask(tmp_path, "M4 Max 64GB, llama 3.1 8b in exllamav2, how fast?")
    assert any(a.startswith("ExLlamaV2 runs only on NVIDIA (CUDA) and AMD (ROCm) graphics cards")
               for a in r.verdict.prediction.assumptions)


def test_the_expert_flags_carry_to_a_follow_up(tmp_path):
    from advisor import service
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    r1 = service.ask(st, "gpt-oss-120b on my RTX 4090 + 64GB DDR5-6000 in llama.cpp with --n-cpu-moe 30, getting 22 tok/s. "
                         "is that normal?")
    r2 = service.ask(st, "should I switch to vLLM?", r1.facts)
    assert r2.facts.cpu_moe_layers == 30 and r2.verdict.planned_split
    assert all(f.remedy != "moe_expert_offload" for f in r2.verdict.fixes)  # never what they already do
