"""Round 43: one engine table for settings and names; the calibration fit warmed at app start."""

from __future__ import annotations

import re
import time

import pytest

from advisor.diagnose.context import build_ctx
from advisor.models import Scenario
from advisor.understand import understand


def _ctx(store, **kw):
    return build_ctx(store, understand(store, Scenario(**kw)))


@pytest.mark.parametrize(("engine", "knob"), [
    ("koboldcpp", "llama-server -np"), ("kobold", "llama-server -np"), ("LM Studio", "llama-server -np"),
    ("ik_llama.cpp", "llama-server -np"), ("TensorRT-LLM", "--max_batch_size"), ("vllm 0.6.3", "--max-num-seqs"),
    ("exllamav2", "max batch size"),
])
def test_batching_setting_follows_the_classified_engine(store, engine, knob):
    from advisor.diagnose.remedies import batch_knob

    assert batch_knob(_ctx(store, hardware="RTX 4090", model="llama 3.1 8b", backend=engine)).startswith(knob)


@pytest.mark.parametrize(("engine", "where"), [
    ("ollama", "`ollama ps`"), ("LM Studio", "LM Studio's GPU offload setting"), ("kobold", "KoboldCpp's --gpulayers"),
    ("llama.cpp CUDA", "the load log's"), ("ik_llama.cpp", "the load log's"), ("vllm", "your tool's GPU offload"),
])
def test_offload_check_follows_the_classified_engine(store, engine, where):
    from advisor.diagnose.tools import offload_check

    assert offload_check(_ctx(store, hardware="RTX 4090", model="llama 3.1 8b", backend=engine)).startswith(where)


def test_a_model_named_llama_does_not_make_the_engine_llama_cpp(store):
    # The engine comes from the engine words, never from "llama" in a model name.
    from advisor.diagnose.tools import offload_check

    c = _ctx(store, hardware="RTX 4090", model="llama 3.1 8b", backend="vllm")
    assert c.sit.engine == "vllm" and "load log" not in offload_check(c).split(" or ")[0]


def test_warm_up_builds_the_fit_the_first_verdict_uses(tmp_path):
    from advisor import service
    from advisor.perf.fit import calibration_model
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    service.warm_up(st)
    t = time.perf_counter()
    cal = calibration_model(st)
    assert time.perf_counter() - t < 0.5 and cal is calibration_model(st)  # cached, not rebuilt


def test_row_hardware_resolves_a_family_id_and_refuses_an_unknown_one(store):
    from advisor.errors import NotFoundError
    from advisor.perf.fit import row_hardware

    hw = row_hardware(store, {"hw_id": None, "base_hw_id": "apple-m1-ultra", "fp16_tflops": 20.0})
    assert hw.id.startswith("apple-m1-ultra-") and hw.fp16_tflops == 20.0
    with pytest.raises(NotFoundError):
        row_hardware(store, {"hw_id": "no-such-chip-9000", "base_hw_id": "no-such-chip-9000", "fp16_tflops": None})


# --- a graphics card named beside its host's CPU and RAM is the machine --------------------------------------

@pytest.mark.parametrize(("text", "hw", "ram"), [
    ("qwen3:30b-a3b on my RTX 3060 12GB with 32GB DDR4-3600, 17.8 tok/s. worth switching?", "RTX 3060", 32.0),
    ("gpt-oss-120b on a 4090 + 96GB DDR5-5600 with --n-cpu-moe 30, Ryzen 9 7950X, pp 199 tg 22", "RTX 4090", 96.0),
    ("Ryzen 9 7950X with an RTX 4090 and 64GB DDR5-6000, llama 3.1 8b", "RTX 4090", 64.0),
    ("my pc: 5800X3D, 3090, 64gb ddr4 3200. mixtral runs at 8 t/s", "RTX 3090", 64.0),
    ("i7-12700k, 32gb, rtx 3080, llama 3 8b", "RTX 3080", 32.0),
    ("Threadripper 7980X, 256GB DDR5-5200 and an RTX 5090 for deepseek", "RTX 5090", 256.0),
])
def test_the_card_is_the_machine_and_the_cpu_and_ram_its_host(store, text, hw, ram):
    from advisor.intake import extract

    e = extract(text, store)
    assert e.hardware == hw and e.system_ram_gb == ram and not e.compare_hardware and e.bandwidth_gbs is None


@pytest.mark.parametrize(("text", "machine"), [("Threadripper 7980X with 8 channels DDR5-5200, deepseek r1", "Threadripper 7980X"),
                                              ("no GPU, 64GB DDR5-5600, llama 70b", "Desktop dual-channel DDR5-5600")])
def test_without_a_card_the_cpu_or_ram_is_still_the_machine(store, text, machine):
    from advisor.intake import extract

    assert extract(text, store).hardware == machine


@pytest.mark.parametrize(("text", "hw"), [
    ("WARNING 11-02 model_runner.py:1060] Sequence group 0 is preempted. A100 40GB, llama 3.1 8b", "A100"),
    ("error at line 1060, my 3090 with llama 8b", "RTX 3090"),
    ("server on localhost:3090 with an RTX 4090", "RTX 4090"),
    ("File \"llama.cpp:2080\" crashed on my 4070", "RTX 4070"),
    ("my gpu: 3060, llama 8b", "RTX 3060"),
])
def test_a_place_in_code_or_a_port_is_no_card(store, text, hw):
    from advisor.intake import extract

    assert extract(text, store).hardware == hw


_CPU_BENCH = """| model                          |       size |     params | backend    | threads |          test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | ------: | ------------: | -------------------: |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CPU        |      16 |         pp512 |        142.31 ± 1.20 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CPU        |      16 |         tg128 |         13.02 ± 0.05 |
"""


@pytest.mark.parametrize(("said", "flag"), [("I built llama.cpp myself and my RTX 4090 sits idle.", "-DGGML_CUDA=ON"),
                                            ("llama.cpp on my RX 7900 XTX, why so slow?", "-DGGML_HIP=ON"),
                                            ("my Arc A770 does nothing", "-DGGML_SYCL=ON")])
def test_a_cpu_build_on_a_card_is_told_to_rebuild_with_the_cards_backend(tmp_path, said, flag):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), said + "\n" + _CPU_BENCH)
    first = r.verdict.fixes[0]
    assert first.title.startswith("Use a llama.cpp build with your GPU's backend") and flag in first.title
    # judged against the card (its CUDA/ROCm/SYCL speed), not the card's bandwidth at CPU efficiency
    assert r.verdict.prediction.decode_tps > 4 * 13.02


# --- targets in questions, counts in other languages, EXL2 sizes, Mixtral 8x22B ------------------------------

@pytest.mark.parametrize(("text", "target", "measured"), [
    ("Jetson Orin Nano 8GB, can it run llama 3.2 3b at 10 tok/s for a robot?", 10.0, None),
    ("how many H100s do we need for llama 3.1 405b fp8 for 100 users at 20 tok/s each", 20.0, None),
    ("my 3090 - will it hit 30 tok/s with qwen 32b?", 30.0, None),
    ("RTX 4090, llama 3.1 8b, I get 40 tok/s, can it do better?", None, 40.0),
    ("M2 Air, llama 8b at 12 tok/s, is that normal?", None, 12.0),
])
def test_a_rate_in_a_question_after_the_machine_is_a_target(store, text, target, measured):
    from advisor.intake import extract

    e = extract(text, store)
    assert (e.target_decode_tps, e.measured_decode_tps) == (target, measured)


@pytest.mark.parametrize(("text", "hw", "n"), [
    ("zwei RTX 4090, llama 3.3 70B Q4_K_M, 16 tok/s. Passt das?", "2x RTX 4090", 2),
    ("tengo dos 3090 y quiero correr llama 70b", "2x RTX 3090", 2),
    ("j'ai deux RTX 4090 pour qwen 32b", "2x RTX 4090", 2),
    ("Ich habe vier A100 80GB", "4x A100", 4),
    ("ich habe eine 4090 und llama 8b", "RTX 4090", None),
    ("dos personas usan una 4090 con llama 8b", "RTX 4090", None),
])
def test_counts_and_articles_in_german_spanish_french(store, text, hw, n):
    from advisor.intake import extract

    e = extract(text, store)
    assert (e.hardware, e.gpu_count) == (hw, n)


@pytest.mark.parametrize(("text", "quant", "engine"), [
    ("Mixtral 8x22B on 2x A6000 48GB, exllamav2 4.0bpw, getting 18 t/s", "EXL2 4 bpw", "exllamav2"),
    ("llama 70b exl2 4.65bpw on 2x 3090", "EXL2 4.65 bpw", "exllamav2"),
    ("qwen 32b at 5.0 bpw on tabbyAPI", "EXL2 5 bpw", "exllamav2"),
    ("exl3 3.5bpw qwen 72b", "EXL3 3.5 bpw", "exllamav2"),
    ("llama 8b Q4_K_M (4.85 bpw) on a 3060", "Q4_K_M", None),
])
def test_bits_per_weight_name_an_exl2_file_unless_a_gguf_is_named(store, text, quant, engine):
    from advisor.intake import extract

    e = extract(text, store)
    assert (e.quant, e.backend) == (quant, engine)


def test_mixtral_8x22b_is_a_moe_with_39b_active(store):
    from knowledge import catalog

    m = catalog.resolve_model(store, "Mixtral 8x22B").value
    # 140.6B − 6 unused experts × 3 × 6144 × 16384 × 56 layers = 39.2B active (HF config.json)
    assert (m.params_b, m.active_params_b, m.n_layers, m.n_kv_heads) == (140.6, 39.2, 56, 8)


@pytest.mark.parametrize(("text", "hw", "ram"), [
    ("old xeon e5-2680 v2 with 128gb ddr3 and a gtx 1080 ti, qwen 2.5 14b q4, 4 tok/s", "GTX 1080 Ti", 128.0),
    ("ryzen 7 5800x and rtx 3070", "RTX 3070", None),
])
def test_a_cpu_model_number_is_no_card(store, text, hw, ram):
    from advisor.intake import extract

    e = extract(text, store)
    assert (e.hardware, e.system_ram_gb) == (hw, ram)


@pytest.mark.parametrize(("text", "hw", "compare"), [
    ("M4 Max 128gb macbook pro, llama 70b", "M4 Max", None),
    ("M4 Max 128gb macbook pro, which model should I run?", "M4 Max", None),
    ("Mac mini or MacBook Pro M4 for llama 8b?", None, ["Mac mini", "MacBook Pro M4"]),
])
def test_a_chip_and_its_product_line_are_one_mac(store, text, hw, compare):
    from advisor.intake import extract

    e = extract(text, store)
    assert (e.hardware, e.compare_hardware) == (hw, compare)
    assert not any("also mentioned" in n for n in e.notes)


@pytest.mark.parametrize("text", ["Thinking of getting a Framework Desktop 64GB for our family to run gpt-oss-20b",
                                  "GMKtec EVO-X2 128GB with qwen3 235b", "ROG Flow Z13 with 32GB for llama 8b"])
def test_strix_halo_products_are_the_ryzen_ai_max(store, text):
    from advisor.intake import extract
    from knowledge import catalog

    e = extract(text, store)
    assert catalog.resolve_hardware(store, e.hardware).value.id == "amd-ryzen-ai-max-plus-395"


@pytest.mark.parametrize("text", ["iphone 15 pro can it run llama 3.2 3b", "can my phone run gemma 3 1b?",
                                  "Galaxy S24 Ultra, phi 3 mini"])
def test_a_phone_is_said_to_be_outside_the_catalog(store, text):
    from advisor.intake import extract

    e = extract(text, store)
    assert e.hardware is None and any("phones or tablets" in n for n in e.not_understood)


@pytest.mark.parametrize(("text", "users"), [("the kids (2 of them) and me, Mac mini M4 Pro", 3),
                                             ("me and my sons (3) on a 4090", 4),
                                             ("my wife and I, and our kids (two of them)", 4)])
def test_a_count_in_brackets_after_a_plural(store, text, users):
    from advisor.intake import extract

    assert extract(text, store).concurrency == users


@pytest.mark.parametrize("text", ["How fast will llama 3.1 8b run on my RTX 4070?",
                                  "Mac Studio M2 Max 32GB, llama 8b. Wie viele Token pro Sekunde bekomme ich?",
                                  "how many tokens per second will qwen 2.5 14b q4 do on a 3090",
                                  "RTX 4060 with mistral 7b, what speed should I expect?"])
def test_a_question_for_the_speed_gets_the_number_first(tmp_path, text):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), text)
    head = r.reply.split("\n")[0]
    tps = r.verdict.prediction.decode_tps_per_seq or r.verdict.prediction.decode_tps
    assert head.startswith("**About ") and "Yes" not in head
    assert f"{tps:.3g}"[:3] in head.replace(",", "")


def test_a_yes_no_question_keeps_its_yes(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "Can my RTX 4070 run llama 3.1 8b for chat?")
    assert r.reply.startswith("**Yes")


@pytest.mark.parametrize("text", ["RTX 6000 Ada, llama 3.3 70b Q4_K_M, 15 tok/s. normal?",
                                  "RX 7600 with llama 3.1 8b q4_k_m on llama.cpp rocm, 20 tok/s"])
def test_a_rate_just_under_the_range_is_not_called_plainly_normal(tmp_path, text):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), text)
    lo, _ = r.verdict.expected_range["decode_tps"]
    assert r.verdict.status == "normal" and r.verdict.measured["decode_tps"] < lo
    assert r.reply.startswith("**About normal for this hardware, a little under the usual range")


# --- a model larger than the card: the prompt crosses PCIe per micro-batch; a MoE keeps its experts in RAM ----

def test_offload_prefill_pays_the_copy_once_per_micro_batch():
    from advisor.perf.step import host_link_gbs, offload_prefill_tps

    # 40 GB in system RAM over 25 GB/s: 1.6 s a micro-batch; 512 tokens at 2,000 tok/s on the GPU take 0.256 s
    assert offload_prefill_tps(2000.0, 40e9, 25e9, 512) == pytest.approx(512 / (0.256 + 1.6))
    assert offload_prefill_tps(2000.0, 40e9, 25e9, 4096) == pytest.approx(4096 / (2.048 + 1.6))
    assert offload_prefill_tps(2000.0, 0.0, 25e9, 512) == 2000.0
    assert host_link_gbs(2022)[0] == pytest.approx(31.5, abs=0.1) and host_link_gbs(2017)[0] == pytest.approx(15.76, abs=0.1)


def test_expert_offload_share_reads_fewer_bytes_from_ram_than_a_layer_split(store):
    from advisor.perf.moe import with_moe
    from advisor.perf.step import expert_offload_share, moe_split_bytes
    from knowledge import catalog

    m = with_moe(catalog.resolve_model(store, "gpt-oss-120b").value)
    dense, routed, ke = moe_split_bytes(m, 4.25)
    s = 0.36
    e = (s * (dense + routed) - dense) / routed
    want = 1 - routed * ke * (1 - e) / (dense + routed * ke)
    assert expert_offload_share(m, 4.25, s) == pytest.approx(want) and want > s + 0.1
    dense_model = catalog.resolve_model(store, "llama 3.3 70b").value
    assert expert_offload_share(dense_model, 4.85, 0.5) == 0.5


def test_a_spilled_prompt_is_predicted_at_the_copy_rate(store):
    from advisor.perf import predict
    from knowledge import catalog

    hw = catalog.resolve_hardware(store, "RTX 4090").value
    m = catalog.resolve_model(store, "gpt-oss-120b").value
    q = catalog.resolve_quant(store, "MXFP4").value
    slow = predict(store, hardware=hw, model=m, quant=q, backend="llama.cpp", prompt_tokens=10000)
    fast = predict(store, hardware=hw, model=m, quant=q, backend="llama.cpp", prompt_tokens=10000, ubatch=4096)
    assert 150 < slow.prefill_tps < 450 and fast.prefill_tps > 3 * slow.prefill_tps
    assert fast.decode_tps == pytest.approx(slow.decode_tps)


def test_a_deliberate_moe_split_asking_about_prompts_gets_larger_micro_batches(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")),
                    "gpt-oss-120b on a 4090 + 96GB DDR5-5600 with --n-cpu-moe 30, Ryzen 9 7950X, pp 199 tg 22 with a "
                    "10k token prompt. how to make prompt processing faster?")
    assert r.facts.hardware == "RTX 4090"
    # with its experts on the CPU the split is expected at ≈ 30 tok/s: 22 is under it, said as the split's doing
    assert r.reply.startswith(("**It runs split as you set it up: the routed experts in system RAM",))
    first = r.verdict.fixes[0]
    assert first.remedy == "micro_batch" and "-ub 4096" in first.title and first.speedup > 3
    assert all(f.remedy != "moe_expert_offload" for f in r.verdict.fixes)  # the experts are on the CPU already


@pytest.mark.parametrize(("text", "how"), [
    ("qwen3:30b-a3b on my RTX 3060 12GB with 32GB DDR4-3600, ollama ps shows 38%/62% CPU/GPU, 17.8 tok/s. "
     "worth switching to llama.cpp --n-cpu-moe?", "switch to llama.cpp"),
    ("gpt-oss-120b on my 4090 with 64GB RAM in LM Studio, 9 tok/s", "--n-cpu-moe"),
])
def test_a_moe_larger_than_the_card_keeps_its_experts_in_ram_first(tmp_path, text, how):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), text)
    first = r.verdict.fixes[0]
    assert first.remedy == "moe_expert_offload" and how in first.title and first.speedup > 1.5


@pytest.mark.parametrize(("text", "users"), [("p5.48xlarge deepseek v3 sglang 500 concurrent", 500),
                                             ("8 concurrent, H100, llama 70b", 8),
                                             ("50 concurrent requests on an L40S", 50)])
def test_a_bare_concurrent_count_is_the_users(store, text, users):
    from advisor.intake import extract

    assert extract(text, store).concurrency == users


@pytest.mark.parametrize(("text", "hw"), [("8845HS mini pc 64GB DDR5-5600, what is the biggest model?", "8845HS"),
                                          ("7840HS with 32gb ddr5-5600", "7840HS"),
                                          ("my 6800H laptop with 16GB", "6800H")])
def test_a_bare_laptop_cpu_model_is_the_machine(store, text, hw):
    from advisor.intake import extract

    assert extract(text, store).hardware == hw


def test_many_users_slow_on_a_serving_engine_check_its_scheduler_first(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")),
                    "A10G, vllm 0.6.3, llama 3.1 8b, 32 users, each user gets 15 tok/s. why so slow?")
    ids = [f.id for f in r.verdict.fixes]
    assert r.verdict.fixes[0].title.startswith("Check the server's scheduling") and "batching" in ids
    assert not any("where the layers run" in f.title for f in r.verdict.fixes)


def test_a_radeon_rocm_does_not_list_is_told_the_override(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "My RX 6700 XT isn't used by ollama, ollama ps says 100% CPU, "
                    "llama3.1 8b gives 6 tok/s. Ryzen 5 5600X, 32GB DDR4")
    assert r.facts.hardware == "RX 6700 XT" and "HSA_OVERRIDE_GFX_VERSION=10.3.0" in r.verdict.fixes[0].title


@pytest.mark.parametrize(("text", "note"), [("RTX 4090, llama 8b, my prompts are 20 pages", "20 pages ≈ 10,000 words"),
                                            ("M2 Max, I paste 2-3 pages each time", "2-3 pages ≈ 1,250 words"),
                                            ("a few pages of prompt on a 3090", "a few pages ≈ 3 pages ≈ 1,500 words")])
def test_a_length_in_pages_is_said_once(store, text, note):
    from advisor.intake import extract

    assert any(n.startswith(note) for n in extract(text, store).notes)


@pytest.mark.parametrize(("text", "head"), [
    ("qwen 2.5 32b on a rtx 5090 with 32k context, how much vram do I need?", "**About 29.7 GB with the 32,768-token context"),
    ("how much memory does llama 3.1 8b need on my M2 Air 16GB?", "**About 5.6 GB for a conversation of 800 tokens"),
])
def test_a_memory_question_is_answered_with_the_memory(tmp_path, text, head):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), text)
    assert r.reply.startswith(head) and "it fits" in r.reply.split("\n")[0]


def test_the_allocated_context_sizes_the_memory_line_when_it_fits(tmp_path):
    from advisor import service
    from knowledge.store import Store

    # Qwen2.5-32B: 64 layers × 8 KV heads × 128 × 2 (K, V) × 2 B = 256 KiB a token; 32,768 tokens ≈ 8.6 GB of KV cache
    r = service.ask(Store(str(tmp_path / "s.duckdb")), "qwen 2.5 32b on a rtx 5090 with a 32k context for coding")
    assert "**Memory:** with the 32,768-token context it needs 29.7 of 33.8 GB usable: fits" in r.reply


def test_a_serving_engine_that_cannot_hold_the_model_stops_at_load(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "2x RTX 4090 with vllm, llama 3.3 70b fp16 for 10 users")
    assert "so the engine stops at load" in r.reply.split("\n")[0]
    assert "As set up it will not load (vLLM stops with an out-of-memory error)" in r.reply
    assert "Split between the card" not in r.reply


def test_experts_kept_on_the_cpu_are_predicted_as_such(tmp_path):
    from advisor import service
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    split = service.ask(st, "gpt-oss-120b on my 4090 with 96GB DDR5, llama.cpp, how fast?").verdict.prediction
    moe = service.ask(Store(str(tmp_path / "t.duckdb")), "gpt-oss-120b on my 4090 with 96GB DDR5, llama-server -ngl 99 "
                      "--n-cpu-moe 24, how fast?").verdict.prediction
    assert moe.decode_tps > 1.2 * split.decode_tps


def test_a_speed_question_on_a_split_leads_with_the_number(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "Ryzen 9 7950X + 4090 + 96GB DDR5, how fast is gpt-oss-120b?")
    assert re.match(r"\*\*About [\d.]+ tok/s.*split between the card and system RAM", r.reply)


def test_a_missed_target_is_never_nothing_to_change(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "is 30 tok/s achievable for llama 3.1 70b on two 3090s?")
    assert r.reply.startswith("**No: about") and "Nothing you need to change" not in r.reply


@pytest.mark.parametrize("text", [
    "ollama logs: 'amdgpu is not supported (supported types:[gfx1030 gfx1100]) gpu_type=gfx1032' - rx 6600, llama 3.1 8b "
    "crawling at 4 t/s",
    "Windows 11, Ollama, Radeon RX 6600 8GB — qwen3 8b only 5 t/s, task manager shows GPU idle"])
def test_rocm_refusing_a_radeon_is_read_from_the_log_or_an_idle_gpu(tmp_path, text):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), text)
    assert "HSA_OVERRIDE_GFX_VERSION" in r.verdict.fixes[0].title


def test_a_cpu_build_on_a_mac_is_told_to_build_with_metal(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "M2 Pro mac mini 32gb, built llama.cpp myself\n" + _CPU_BENCH)
    assert "Metal" in r.verdict.fixes[0].title and "-DGGML_METAL=ON" in r.verdict.fixes[0].title


@pytest.mark.parametrize("text", ["how fast is gemma 3 4b on my android phone (snapdragon 8 gen 3, 12gb)?",
                                  "ipad pro m4 16gb — how fast would qwen3 8b be?"])
def test_a_phone_or_tablet_chip_is_not_sized_as_a_computer(store, text):
    from advisor.intake import extract

    e = extract(text, store)
    assert e.hardware is None and any("phones or tablets" in n for n in e.not_understood)


def test_batching_on_a_mac_names_no_vllm(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "MacBook Air M2 16GB, Llama 3.1 8B for me and my kid")
    f = next(f for f in r.verdict.fixes if f.id == "batching")
    assert "llama-server -np 2" in f.title and "vLLM" not in f.title
