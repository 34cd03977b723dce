"""Round 40: GPU counts said apart from the name; compare's ranking of one chip's two boards; binary GPU memory;
a MoE on CUDA pays CUDA's own fixed cost."""

from __future__ import annotations

import re

import pytest

from advisor import compare as cmp
from advisor import roofline
from advisor.intake import extract
from advisor.models import Scenario
from knowledge import catalog


@pytest.mark.parametrize(("text", "name", "count"), [
    ("I have 2 GPUs, both RTX 3090, running llama 3.3 70b", "RTX 3090", 2),
    ("two graphics cards, both 3090s, llama 3.3 70b", "RTX 3090", 2),
    ("4 GPUs (all A100 80GB) with vllm, llama 3.3 70b", "A100", 4),
    ("my rig has 3 cards: RTX 3090 each", "RTX 3090", 3),
    ("a server with 8 GPUs, H100 SXM, llama 3.1 405b", "H100 SXM", 8),
    ("RTX 4090, 2 cards total, qwen 32b", "RTX 4090", 2),
    ("four identical cards, RTX A6000, serving qwen 72b", "RTX A6000", 4),
    ("I have RTX 3090, two of them, running llama 3.3 70b", "RTX 3090", 2),
])
def test_a_count_said_apart_from_the_card_is_the_number_of_cards(store, text, name, count):
    e = extract(text, store)
    assert e.hardware == name and e.gpu_count == count


@pytest.mark.parametrize("text", [
    "my 4090 runs 2 models", "I have a 4090 and 2 kids", "one 4090, llama 3.1 8b", "my 4090 has 2 fans",
    "which of these 2 GPUs is faster for llama 3.1 8b, 4090 or 5090?", "I'm comparing 2 cards: RTX 4090 vs RTX 5090",
])
def test_other_counts_and_choices_are_not_a_card_count(store, text):
    assert extract(text, store).gpu_count is None


def test_two_3090s_said_apart_hold_a_70b_and_the_rate_is_normal(tmp_path):
    from advisor import service
    from knowledge.store import Store

    own = Store(str(tmp_path / "s.duckdb"))
    r = service.ask(own, "I have 2 GPUs, both RTX 3090, running llama 3.3 70b q4_k_m in ollama. 12 tok/s. normal?")
    assert r.verdict is not None and r.verdict.status == "normal", r.reply
    assert r.verdict.prediction.memory.fits  # 2 × 24 GiB = 51.5 GB, 50.5 usable, holds 45.2 GB
    assert "does not fit" not in r.reply


def test_gpu_memory_is_counted_in_gib(store):
    # A "24 GB" RTX 4090 holds 24 GiB = 25.769803776 GB; 0.5 GB of a card is the driver's: usable
    # 25.769803776 × (1 − 0.5/24) = 25.232933 GB.
    hw = catalog.resolve_hardware(store, "RTX 4090").value
    m = catalog.resolve_model(store, "llama 3.1 8b").value
    f = roofline.memory_fit(hw, m, 4.8944, context_tokens=1000)
    assert f.total_gb == pytest.approx(25.769803776)
    assert f.usable_gb == pytest.approx(25.769803776 * (1 - 0.5 / 24))
    assert "24 GiB = 25.8 GB" in f.note
    # Unified memory keeps its stated size: a 64 GB Mac's 3/4 is 48 GB.
    mac = catalog.resolve_hardware(store, "M2 Max 38-core").value
    assert roofline.memory_fit(mac, m, 4.8944, context_tokens=1000, memory_gb=64).usable_gb == pytest.approx(48.0)


def test_compare_ranks_the_sxm4_a100_with_its_chip_not_below_the_pcie_card(store):
    out = cmp.compare(store, model="llama 3.3 70b", quant="AWQ", backend="vllm", concurrency=20,
                      candidates=["A100 80GB SXM4", "A100 80GB PCIe"])
    by = {c["hardware"]["id"]: c for c in out["candidates"]}
    sxm, pcie = by["nvidia-a100-80gb-sxm"], by["nvidia-a100-80gb-pcie"]
    # Same chip, 2,039 vs 1,935 GB/s: the SXM4 board is at least as fast per user (one noisy sweep of its own no
    # longer sets its batched factor).
    assert sxm["decode_tps_per_user"] >= pcie["decode_tps_per_user"]
    assert out["candidates"][0]["hardware"]["id"] == "nvidia-a100-80gb-sxm"


def test_a_moe_on_cuda_pays_cudas_own_fixed_cost(store):
    from advisor.calibration import MOE_T0_KEY, moe_t0_key
    from advisor.perf import calibration_model, predict

    cal = calibration_model(store)
    assert cal.t0_s[moe_t0_key({"accel": "cuda"})] < cal.t0_s[MOE_T0_KEY]
    m = catalog.resolve_model(store, "qwen3 30b a3b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    p = predict(store, hardware=catalog.resolve_hardware(store, "RTX 4090").value, model=m, quant=q)
    # ~150 tok/s with CUDA's own small cost (110 with the 3 ms pooled over ROCm/Vulkan/Metal machines); published
    # llama.cpp runs of this model on a 4090 report up to ~196.
    assert 125 < p.decode_tps < 200
    assert any("on cuda" in a for a in p.assumptions)


@pytest.mark.parametrize("cmd", [["predict", "--hardware", "RTX 4090", "--model", "llama 3.1 8b"],
                                 ["compare", "--model", "llama 3.1 8b", "--candidates", "RTX 4090"]])
def test_an_unknown_engine_is_refused_with_the_known_ones(cmd):
    import json

    from typer.testing import CliRunner

    from advisor.cli import app

    r = CliRunner().invoke(app, [*cmd, "--backend", "toaster", "--json"])
    assert r.exit_code != 0
    err = json.loads(r.stdout)["error"]
    assert "unknown engine 'toaster'" in err and "vLLM" in err and "Traceback" not in r.output


@pytest.mark.parametrize("label", ["llamafile", "llama.cpp-cuda", "Ollama", "vllm", "CUDA", "LM Studio", "koboldcpp",
                                   "ik_llama.cpp", "mlx-lm", "Jan"])
def test_known_engines_and_apis_pass(label):
    from advisor.understand.engine import check_backend

    check_backend(label)  # raises InputError for an unknown label (the test above)


@pytest.mark.parametrize(("text", "said"), [
    ("RTX 4090, llama 3.1 8b, decode NaN tok/s", "NaN tok/s"), ("RTX 4090, llama 3.1 8b, I get ∞ tok/s", "∞ tok/s"),
    ("RTX 4090 llama 3.1 8b 0x10 tok/s", "0x10 tok/s"), ("RTX 4090 llama 3.1 8b inf t/s", "inf t/s"),
])
def test_a_rate_that_is_no_number_is_said_back_as_ignored(store, text, said):
    e = extract(text, store)
    assert e.measured_decode_tps is None
    assert any(said in n and "ignored" in n for n in e.not_understood)


@pytest.mark.parametrize("text", ["RTX 4090 llama 3.1 8b 45 tok/s", "RTX 4090 llama 3.1 8b, infinite patience, 45 tok/s"])
def test_real_rates_beside_such_words_are_read(store, text):
    e = extract(text, store)
    assert e.measured_decode_tps == 45.0 and not e.not_understood


# --- buying questions: a shortlist, counts of one card, more cards where one cannot hold the users ------------
def _ask(store, text):
    from advisor import service

    return service.ask(store, text)


@pytest.mark.parametrize("text", [
    "what GPUs should we buy to serve llama 3.3 70b to 40 users?",
    "Which hardware would you recommend for qwen 2.5 72b with 25 concurrent users?",
    "what do we need to serve llama 3.3 70b for 40 people?",
    "recommend some GPUs for llama 3.3 70b, 40 users",
])
def test_a_team_buying_question_is_answered_on_a_server_shortlist(store, text):
    r = _ask(store, text)
    assert "Which GPU is it?" not in r.reply
    assert "You asked what to buy" in r.reply and "H100" in r.reply
    assert "meet the targets" in r.reply.splitlines()[0]
    # one 80 GB card cannot hold a 70B at BF16; its tensor cores multiply FP8, the build vLLM serves there (round 50),
    # and at FP8 one H100 holds all 40 (or 25) users
    assert "at FP8 (E4M3)" in r.reply
    assert re.search(r"\| H100 SXM5 80GB[^|\n]*\| meets targets", r.reply)


@pytest.mark.parametrize("text", [
    "what hardware do I need to run qwen3 32b at home?",
    "which GPU should I buy for gemma 3 27b?",
    "what should I buy to run llama 3.1 8b?",
])
def test_a_household_buying_question_is_answered_on_household_machines(store, text):
    r = _ask(store, text)
    assert "You asked what to buy" in r.reply and "RTX 4090" in r.reply and "M4 Max" in r.reply
    assert "H100" not in r.reply


@pytest.mark.parametrize("text", [
    "is 12 tok/s normal for llama 3.1 8b?",  # no machine, a rate: a diagnosis, not a purchase
    "my RTX 4090 gets 40 tok/s on llama 3.1 8b, what should I change?",
])
def test_diagnosis_questions_are_not_buying_questions(store, text):
    assert "You asked what to buy" not in _ask(store, text).reply


def test_how_many_of_a_card_compares_one_to_eight_of_it(store):
    r = _ask(store, "how many RTX 3090s would I need for llama 3.3 70b q4_k_m?")
    assert "You asked how many" in r.reply
    lines = [x for x in r.reply.splitlines() if x.startswith("|") and "RTX 3090" in x and ("meets" in x or "does not fit" in x)]
    assert lines[0].strip("| ").split()[0] == "2×"  # two hold it, the fewest first among equals
    assert r.reply.startswith("**For one person, 2× RTX 3090 24 GB is the fewest that meets the targets**")
    assert any("RTX 3090 24 GB" in x and "does not fit" in x for x in lines)


def test_scale_out_adds_the_fewest_cards_that_hold_every_user(store):
    from advisor import compare as cmp
    from advisor.render.options import scale_out

    req = cmp.CompareRequest(model="llama 3.3 70b", quant="BF16", backend="vllm", concurrency=40, prompt_tokens=500, gen_tokens=300,
                             candidates=["nvidia-h100-sxm", "nvidia-l40s", "nvidia-h200"])
    extra, why = scale_out(store, req, cmp.compare_request(store, req))
    # 70B BF16 = 141 GB: two 80 GB H100s (171.8 GB) and four 48 GB L40S (206 GB) hold it with 40 users' caches;
    # one 141 GB H200 holds the weights but only 19 users, two hold all 40.
    assert sorted(extra) == ["nvidia-h100-sxmx2", "nvidia-h200x2", "nvidia-l40sx4"]
    assert len(why) == 3 and any("2× H100 SXM5 80GB added" in w for w in why)


def test_when_nothing_holds_16_bit_weights_fp8_is_the_hint(store):
    # Llama 3.1 405B at BF16 is 810 GB: not even 8 × 80 GB holds it; at FP8 (405 GB) eight H100s hold 20 users.
    # (round 50: each option is compared at the build served on it when BF16 does not fit: AWQ on 4, FP8 on 8)
    r = _ask(store, "how many H100s do we need for llama 3.1 405b with 20 users?")
    assert r.reply.splitlines()[0].startswith("**For 20 people at once, 4× H100 PCIe 80GB at AWQ 4-bit g128 is the "
                                              "fewest that meets the targets**")
    assert "| 8× H100 PCIe 80GB at FP8 (E4M3) | meets targets" in r.reply


def test_a_mac_held_back_only_by_its_default_gpu_limit_is_told_one_setting_makes_it_fit(store):
    # DeepSeek R1 671B at Q4_K_M needs ~423 GB; a 512 GB M3 Ultra lets the GPU wire 3/4 (384 GB) by default,
    # and ~508 GB once iogpu.wired_limit_mb is raised: the answer is "one setting", not "No".
    r = _ask(store, "Mac Studio M3 Ultra 512GB, deepseek r1 671b q4_k_m in llama.cpp. will it run?")
    first = r.reply.splitlines()[0]
    assert first.startswith("**Not as macOS is set by default, but one setting makes it fit") and "No:" not in first
    assert "Once the limit is raised" in r.reply and "crawls" not in r.reply and "sysctl iogpu.wired_limit_mb" in r.reply
    # A Mac the raise cannot save still hears "No".
    small = _ask(store, "MacBook Air M2 8GB, gemma 3 27b q4_k_m, will it run?")
    assert small.reply.startswith("**No: it does not fit")


@pytest.mark.parametrize(("text", "shown", "not_shown"), [
    ("best gpu for llama 3.1 8b", "RTX 4090", "H100"),
    ("I want to buy a GPU to run llama 3.1 8b", "RTX 4090", "H100"),
    ("what should our startup buy to serve llama 3.1 8b to 1000 users?", "H100", "M4 Max"),
    ("what should I buy to run llama 3.3 70b at home for my family of 5?", "RTX 4090", "H100"),
    ("what mac should I get for qwen3 32b?", "M4 Max", "RTX 5090"),
    ("qué GPU comprar para qwen3 32b en casa?", "RTX 4090", "H100"),
])
def test_more_buying_phrasings_get_the_right_shortlist(store, text, shown, not_shown):
    r = _ask(store, text)
    assert "You asked what to buy" in r.reply and shown in r.reply and not_shown not in r.reply


@pytest.mark.parametrize("text", ["how many RTX 3090 do i need to run llama 3.3 70b q4_k_m",
                                  "How many A100 80GB for qwen 2.5 72b with 10 users"])
def test_how_many_without_a_plural_is_still_a_count(store, text):
    assert "You asked how many" in _ask(store, text).reply


@pytest.mark.parametrize(("text", "title", "n"), [
    ("RTX 3090, llama 3.3 70b q4_k_m, will it run?", "Add another GeForce RTX 3090 (2 in all)", 2),
    ("my 4090 gets 20 tok/s on llama 3.3 70b q4_k_m, should I buy another?", "Add another GeForce RTX 4090 (2 in all)", 2),
])
def test_a_card_too_small_for_the_model_is_offered_more_of_it(store, text, title, n):
    # Llama 3.3 70B Q4_K_M needs 45.2 GB; two 24 GiB cards give 50.5 GB usable.
    v = _ask(store, text).verdict
    add = next(f for f in v.fixes if f.title.startswith("Add "))
    assert add.title.startswith(title) and add.id == "fit_in_memory" and add.fits_with_margin
    assert f"{n}× GeForce" in add.predicted_effect and "45.2 GB needed of 50.5 GB usable" in add.predicted_effect


def test_how_many_users_gets_the_users_that_fit_and_their_speed(store):
    r = _ask(store, "how many users can one RTX 4090 hold with llama 3.1 8b q4_k_m?")
    line = r.reply.split("\n\n")[0].replace("**", "")  # the answer to the question leads the reply
    assert line.startswith("Users at once:") and "llama.cpp (CUDA) with Q4_K_M weights" in line
    # 25.2 GB usable − 4.9 GB weights − 0.65 GB overhead = 19.7 GB for KV caches of 800 tokens (0.105 GB each)
    n = int(re.search(r"about ([\d,]+) conversations", line).group(1).replace(",", ""))
    assert 150 <= n <= 200 and "tok/s" in line
    assert "Users at once:" not in _ask(store, "RTX 4090, llama 3.1 8b q4_k_m, is 40 tok/s normal?").reply


def test_how_many_users_counts_and_times_the_same_set_up(store):
    # No engine or format stated: many users on datacenter GPUs are served by vLLM with the checkpoint's BF16
    # weights, so the count is made with BF16 too. 170.7 GB usable − 141.1 GB weights − overhead leaves room for
    # about 50 KV caches of 1,500 tokens (0.49 GB each: 80 layers × 8 KV heads × 128 × 2 × 2 B per token).
    r = _ask(store, "How many users can 2x H100 hold with Llama 3.3 70B? prompts of 1000 tokens, answers of 500")
    line = r.reply.split("\n\n")[0].replace("**", "")
    n = int(re.search(r"about ([\d,]+) conversations", line).group(1).replace(",", ""))
    assert 45 <= n <= 56, line
    assert "served by vLLM with BF16 weights" in line
    each = float(re.search(r"each gets ≈ ([\d.]+) tok/s", line).group(1))
    assert 10 <= each <= 40
    assert "For one conversation alone, on llama.cpp (CUDA):" in r.reply


@pytest.mark.parametrize(("backend", "label"), [("vllm", "vLLM"), ("llama.cpp-cuda", "llama.cpp (CUDA)"),
                                                ("mlx", "MLX"), ("sglang", "SGLang"), ("llama.cpp-rocm", "llama.cpp (ROCm)"),
                                                ("", "the engine"), ("exllamav2", "ExLlamaV2"), ("lm-studio", "LM Studio"),
                                                ("koboldcpp", "KoboldCpp"), ("frob", "frob")])
def test_engine_labels(backend, label):
    from advisor.render.markdown import engine_label

    assert engine_label(backend) == label


@pytest.mark.parametrize("text", [
    "4 cards: RTX 3090, llama 3.3 70b q4_k_m at 9 tok/s. normal?",
    "four RTX 3090s running llama 3.3 70b q4_k_m, I only get 9 tok/s, is that ok?",
])
def test_a_rate_inside_the_range_but_far_under_the_expected_one_is_the_low_end(store, text):
    # 4× RTX 3090, layer split: ≈ 15.7 tok/s expected, usual 7.2–17.2; 9 is 43 % under: not plain "normal".
    r = _ask(store, text)
    head = r.reply.split("\n\n")[0]
    assert head.startswith("**Within the usual range for this hardware, but at its low end (decode 9 tok/s")
    assert "That is normal" not in r.reply and "Nothing you need to change" not in r.reply
    assert "**Worth a look:**" in r.reply and "43% below" in r.reply


def test_a_rate_near_the_expected_one_stays_normal(store):
    r = _ask(store, "RTX 4090, llama 3.1 8b q4_k_m, I get 120 tok/s, normal?")
    assert r.reply.startswith("**That is normal for this hardware (decode 120 tok/s)")


@pytest.mark.parametrize(("expected", "measured", "low"), [(16.0, 9.0, True), (16.0, 12.0, False), (16.0, 11.9, True),
                                                           (None, 9.0, False), (16.0, None, False)])
def test_low_end_is_a_quarter_under_the_expected_rate(expected, measured, low):
    from advisor.render.markdown import low_end

    assert low_end(expected, measured) is low


@pytest.mark.parametrize(("hw", "backend", "label", "said"), [
    ("RTX 4090", "mlx", "mlx", "MLX is built for Apple silicon"),
    ("M3 Max", "vllm", "vllm (MLX kernels)", "vLLM has no Metal backend of its own"),
    ("M2 Ultra", "sglang", "sglang (MLX kernels)", "SGLang has no Metal backend of its own"),
    ("M3 Max", "tensorrt-llm", "tensorrt-llm (MLX kernels)", "TensorRT-LLM runs only on NVIDIA GPUs"),
    ("RX 7900 XTX", "tensorrt-llm", "tensorrt-llm", "TensorRT-LLM runs only on NVIDIA GPUs"),
    ("M2 Max", "llama.cpp-cuda", "llama.cpp-metal", "CUDA runs only on NVIDIA GPUs: on the Apple M2 Max"),
    ("RTX 4090", "llama.cpp-rocm", "llama.cpp-cuda", "ROCm/HIP runs only on AMD GPUs: on the GeForce RTX 4090 the figures are for CUDA"),
])
def test_an_engine_that_does_not_run_as_written_on_the_hardware_is_said(store, hw, backend, label, said):
    from advisor.service import predict_scenario

    p = predict_scenario(store, Scenario(hardware=hw, model="llama 3.1 8b", backend=backend))
    assert p.backend == label and any(a.startswith(said) for a in p.assumptions), p.assumptions


@pytest.mark.parametrize(("hw", "backend"), [("RTX 4090", "vllm"), ("M3 Max", "mlx"), ("RTX 4090", "llama.cpp-vulkan"),
                                             ("M2 Max", "ollama"), ("RX 7900 XTX", "llama.cpp-rocm")])
def test_an_engine_that_runs_on_the_hardware_gets_no_such_note(store, hw, backend):
    from advisor.service import predict_scenario

    p = predict_scenario(store, Scenario(hardware=hw, model="llama 3.1 8b", backend=backend))
    assert not any(w in a for a in p.assumptions for w in ("runs only on", "no Metal backend", "built for Apple"))


@pytest.mark.parametrize(("text", "target"), [
    ("can a single H100 SXM serve Llama 3.1 70B FP8, 8k context each, at 20 tok/s per user?", 20.0),
    ("can an H100 serve 30 users at 20 tok/s each?", 20.0),
    ("will an L4 give 15 tok/s per user for 10 users?", 15.0),
    ("Could my M2 Max run llama 70b at 10 tok/s?", 10.0),
    ("is it possible to get 50 tok/s on a 4090 with qwen 32b?", 50.0),
    ("will a 5090 get 100 tok/s with qwen 2.5 14b q4?", 100.0),
    ("will a 5090 get 100 tok/s with qwen 2.5 14b q4", 100.0),
    ("M2 Max. Can it run llama 3.1 70b at 8 tok/s?\nI need it for work", 8.0),
])
def test_a_rate_asked_for_in_a_can_it_question_is_a_target(store, text, target):
    e = extract(text, store)
    assert e.target_decode_tps == target and e.measured_decode_tps is None


@pytest.mark.parametrize(("text", "measured"), [
    ("RTX 4090, llama 3.1 8b q4_k_m, I get 120 tok/s, normal?", 120.0),
    ("why do I only get 9 tok/s on my 3090?", 9.0),
    ("my 4090 does 40 tok/s with llama 70b. can I make it faster?", 40.0),
    ("Can you tell me why I get 12 tok/s on M1 with mistral 7b?", 12.0),
    ("does 40 tok/s sound right for a 4090 with llama 8b?", 40.0),
    ("I can get 100 tok/s with qwen 2.5 14b q4 on my 5090", 100.0),
    ("we can do 30 tok/s on the 3090 with llama 8b. is that good", 30.0),
])
def test_a_rate_someone_gets_stays_a_measurement(store, text, measured):
    e = extract(text, store)
    assert e.measured_decode_tps == measured and e.target_decode_tps is None


def test_users_at_once_count_the_stated_context_and_the_target(store):
    # 85.9 GB usable − 70.6 GB FP8 weights − overhead leaves ≈ 13 GB: 4 KV caches of 8,192 tokens (2.7 GB each).
    r = _ask(store, "How many concurrent users can a single H100 SXM serve with Llama 3.1 70B FP8, 8k context each? "
                    "each user needs 20 tok/s")
    head = r.reply.split("\n\n")[0].replace("**", "")
    assert head.startswith("Users at once: about 4 conversations of 8,192 tokens fit")
    assert "That is at least 20 tok/s each (your target) even with all of them." in head
    assert r.facts.measured_decode_tps is None


def test_users_at_once_when_the_server_format_does_not_fit(store):
    # DeepSeek R1 at FP8 (vLLM's format for many users) needs more than 8× 80 GB; vLLM's AWQ 4-bit build fits (round 50)
    r = _ask(store, "how many users can 8x H100 hold with deepseek r1 at 4k context?")
    head = r.reply.split("\n\n")[0]
    assert "served by vLLM with AWQ 4-bit g128 weights" in head
    n = int(re.search(r"about ([\d,]+) conversations", head).group(1).replace(",", ""))
    assert 500 <= n <= 2000 and "llama.cpp" not in head


_SERVING_PASTE = """vLLM 0.10.1 on 1x L40S, Llama-3.1-8B-Instruct bf16, 64 concurrent users, benchmark_serving says:
============ Serving Benchmark Result ============
Successful requests:                     500
Benchmark duration (s):                  212.4
Total input tokens:                      1024000
Total generated tokens:                  128000
Request throughput (req/s):              2.35
Output token throughput (tok/s):         602.6
Mean TTFT (ms):                          4120.5
Median TTFT (ms):                        3880.2
P99 TTFT (ms):                           9811.0
Mean TPOT (ms):                          98.4
Median TPOT (ms):                        95.1
==================================================
TTFT is awful, what's wrong? input 2048 output 256"""


def test_a_serving_benchmark_is_judged_as_a_loaded_server(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), _SERVING_PASTE)
    f = r.facts
    # totals ÷ 500 requests = one request's lengths; the output throughput is summed over the 64 users named
    assert (f.prompt_tokens, f.gen_tokens, f.concurrency, f.measured_is_aggregate) == (2048, 256, 64, True)
    assert f.measured_ttft_s == 4.1205 and r.verdict.status == "below_expected"
    assert "kept without that machine" not in r.reply and "Your prompt reading" not in r.reply
    assert "602.6 tok/s in all, each of 64 streams writes at 10.2 tok/s (a token every 98 ms)" in r.reply
    assert "after 4.1 s measured" in r.reply and "the rest is waiting" in r.reply
    assert r.verdict.fixes[0].id == "chunked_prefill"


def test_a_serving_benchmark_without_words_counts_its_streams_by_littles_law(tmp_path):
    import json
    from pathlib import Path

    from advisor import service
    from knowledge.store import Store

    text = json.loads((Path(__file__).parent / "importers" / "fixtures" / "imp-38.json").read_text())["text"]
    f = service.ask(Store(str(tmp_path / "s.duckdb")), text).facts
    # 130,743 / 772 = 169 and 174,589 / 772 = 226 tokens a request; 529.33 tok/s × 0.10819 s a token ≈ 57 at once
    assert (f.prompt_tokens, f.gen_tokens, f.concurrency, f.measured_streams) == (169, 226, 57, 57)


@pytest.mark.parametrize(("text", "prompt", "gen"), [
    ("input 2048 output 256", 2048, 256), ("in 2048 out 256", 2048, 256), ("input=2048 output=256", 2048, 256),
    ("output 512 input 4096", 4096, 512), ("3000 prompt 400 answer", 3000, 400), ("2048 in / 256 out", 2048, 256),
    ("1.5k input and 300 output", 1500, 300), ("prompt 2048 answer 256", 2048, 256),
    ("we have 50 prompts and 20 answers", None, None),
])
def test_two_lengths_said_in_one_style_pair_up(store, text, prompt, gen):
    e = extract(text, store)
    assert (e.prompt_tokens, e.gen_tokens) == (prompt, gen)


@pytest.mark.parametrize("text", [
    "Ryzen 7 7840HS laptop with 32GB, what's the biggest model i can run at a usable speed?",
    "RTX 4090: which model should I run?",
    "I have an M2 Max 32GB. What LLM do you recommend?",
    "what can I run on my RTX 3060 12GB?",
    "best model for an RTX 4070?",
    "what size model fits on a 3090?",
    "my dad has a macbook pro m1 8gb. will that work?",
    "Welches Modell läuft auf meinem M3 Pro 18GB?",
    "¿Qué modelo puedo usar con una RTX 4060?",
])
def test_which_model_questions_get_a_table_of_models(store, text):
    r = _ask(store, text)
    assert r.facts.compare_models and len(r.facts.compare_models) >= 5, r.reply[:300]
    assert "You asked which model" in r.reply and "| model" not in r.reply.split("\n")[0]
    assert re.search(r"the largest that (?:fits|runs at)", r.reply)


@pytest.mark.parametrize("text", ["RTX 4090 with llama 3.1 8b, which model is faster, this or qwen 2.5 7b?",
                                  "which model should I run?", "RTX 4090, llama 3.1 8b q4_k_m at 120 tok/s, normal?"])
def test_which_model_needs_a_machine_and_no_model(store, text):
    assert "You asked which model" not in _ask(store, text).reply


def test_the_model_shortlists_resolve(store):
    from advisor.intake._model_pick import CODING_MODELS, GENERAL_MODELS

    for name in GENERAL_MODELS + CODING_MODELS:
        assert catalog.resolve_model(store, name).confidence >= 0.9, name


def test_which_model_leads_with_the_largest_at_a_usable_speed(store):
    # Qwen3.6 35B-A3B (3B active) streams ≈ 19 tok/s on the 7840HS and is the largest that fits: it leads. On an
    # M4 16GB with a 20 tok/s target, Qwen2.5 Coder 7B (≈ 21) leads and the 14B that fits but streams ≈ 10 is said.
    head = _ask(store, "Ryzen 7 7840HS laptop with 32GB, what's the biggest model i can run at a usable speed?").reply
    assert head.startswith("**On the AMD Ryzen 7 7840HS, the largest that fits is Qwen3.6 35B A3B**")
    head = _ask(store, "mac mini m4 16gb, which model should I use for coding? I want at least 20 tok/s").reply
    head = head.split("\n\n")[0]
    assert "the largest that runs at 20 tok/s or more (your target) is Qwen2.5 Coder 7B" in head
    assert "Qwen2.5 Coder 14B fits too, but streams at" in head


@pytest.mark.parametrize(("text", "hardware", "count"), [
    ("1.5 RTX 4090 llama 3.1 8b", "RTX 4090", None),  # a version number's ".5" is no count
    ("v1.5 RTX 4090 llama 3.1 8b", "RTX 4090", None),
    ("I have 2.5 GPUs, RTX 3090", "RTX 3090", None),
    ("RTX 4090 (x3), llama 3.3 70b", "3x RTX 4090", 3),
    ("RTX 3090 x2", "2x RTX 3090", 2),
    ("3x RTX 3090 with qwen 2.5 32b", "3x RTX 3090", 3),
])
def test_gpu_counts_are_whole_numbers_said_as_counts(store, text, hardware, count):
    e = extract(text, store)
    assert (e.hardware, e.gpu_count) == (hardware, count)


@pytest.mark.parametrize("text", ["0 GPUs, 32GB DDR5 RAM, llama 3.1 8b", "zero GPUs, 64 GB of DDR5, llama 3.1 8b"])
def test_zero_gpus_is_a_cpu_machine(store, text):
    e = extract(text, store)
    assert e.hardware_kind == "cpu" and e.gpu_count is None


@pytest.mark.parametrize(("text", "rate"), [
    ("Ich habe eine RTX 4090 und Llama 3.1 8B, nur 20 Token pro Sekunde. Warum?", 20.0),
    ("tengo una RTX 4090 con llama 3.1 8b, 20 tokens por segundo", 20.0),
    ("j'ai 15 tokens par seconde sur mon M1 avec mistral 7b", 15.0),
    ("我有一张4090，运行llama 3.1 8b只有20 tok/s", 20.0),
    ("RTX 3090, qwen 2.5 7b, 30 tok/sek", 30.0),
])
def test_rates_in_other_languages_are_rates(store, text, rate):
    e = extract(text, store)
    assert e.measured_decode_tps == rate and e.prompt_tokens is None


def test_gigaoctets_are_gigabytes(store):
    e = extract("Mac M2 Max 64 Go, llama 3.1 70b", store)
    assert e.memory_gb == 64 and extract("let's go with a 4090", store).memory_gb is None


def test_prefill_above_the_compute_ceiling_is_a_cache_not_normal(store):
    from advisor import service

    v = service.diagnose_scenario(store, Scenario(hardware="RTX 4090", model="llama 3.1 8b", measured_prefill_tps=50000))
    from advisor.render.verdict_line import plain_verdict

    head = plain_verdict(v)
    assert head.startswith("**Prefill 50,000 tok/s is more than this machine can compute")
    assert "prompt cache" in head and "normal for this hardware" not in head


def test_a_paste_that_names_its_own_gpu_is_judged_there(tmp_path):
    from advisor import service
    from knowledge.store import Store

    text = """ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes
| model                          |       size |     params | backend    | ngl |          test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ------------: | -------------------: |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         pp512 |     12000.50 ± 50.10 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |        150.20 ± 0.50 |
"""
    out = service.import_output(Store(str(tmp_path / "s.duckdb")), text, hardware="M2 Max", save=False)
    assert "says it ran on the GeForce RTX 4090" in out.message and "not the M2 Max named" in out.message
    assert out.verdict is not None and out.verdict.prediction.hardware["id"] == "nvidia-rtx-4090"


def test_batching_never_promises_a_stream_more_than_it_gets_now(store):
    from advisor import service

    v = service.ask(store, "vLLM on my MacBook Pro M3 Max 36GB with qwen 2.5 7b, 15 tok/s").verdict
    b = next(f for f in v.fixes if f.id == "batching")
    each = float(re.search(r"\(([\d.]+) tok/s each\)", b.predicted_effect).group(1))
    assert "vs ≈ 15 now" in b.predicted_effect and each < 15


@pytest.mark.parametrize("text", ["what GPU should we buy for 50 users", "wich gpu shoud i by for llama 3.1 8b",
                                  "we need to serve llama 3.1 8b to 1000 users, what hardware?",
                                  "I want to buy a GPU, budget 2000 dollars"])
def test_buying_questions_are_compared_even_without_a_model_or_with_typos(store, text):
    r = _ask(store, text)
    assert "You asked what to buy" in r.reply and "Which GPU is it?" not in r.reply
    assert len(r.facts.compare_hardware or []) >= 3


def test_the_memory_line_shows_the_allocated_context(store):
    r = _ask(store, "2x RTX 3090 llama 3.3 70b Q4_K_M with 128k context window")
    assert "the 131,072-token context you allocate needs 87.9 GB with the weights, of 50.5 GB usable: does not fit" in r.reply
    assert "45.2 of 50.5 GB usable: fits" not in r.reply


def test_tensor_parallel_needs_a_size_that_divides_the_heads(store):
    # Llama 3.3 70B has 64 attention heads: vLLM refuses --tensor-parallel-size 3, takes 2.
    assert "tensor-parallel-size 3" not in _ask(store, "3x 4090 llama 3.3 70b q4").reply
    assert "tensor-parallel-size 2" in _ask(store, "2x 4090 llama 3.3 70b q4").reply


def test_no_second_gpu_for_a_laptop(store):
    v = _ask(store, "RTX 4060 laptop 8GB, qwen 2.5 14b q4_k_m, 3 tok/s").verdict
    assert not any(f.title.startswith("Add ") for f in v.fixes)


def test_a_server_engine_is_offered_formats_it_loads(store):
    v = _ask(store, "We serve DeepSeek R1 to 200 users on 8x H100 with vLLM. How fast?").verdict
    # FP8 does not fit 8× 80 GB: the format assumed is the AWQ build vLLM loads (round 50), never a GGUF one
    assert v.prediction.quant == "AWQ 4-bit g128"
    assert any("do not fit the" in a and "AWQ 4-bit g128 build" in a for a in v.assumptions)
    assert not any("Q6_K" in f.title or "Q4_K_M" in f.title for f in v.fixes)


def test_an_old_vllm_far_below_is_offered_the_upgrade_first(store):
    v = _ask(store, "vllm 0.6.3 on A100 40GB, mistral 7b, 50 users, each gets 9 tok/s").verdict
    assert v.fixes[0].title == "Upgrade vLLM to 0.8 or later (its V1 engine)"
    assert _ask(store, "vllm 0.10.1 on A100 40GB, mistral 7b, 50 users, each gets 9 tok/s").verdict.fixes[0].title \
        .startswith("Check the server's scheduling")


@pytest.mark.parametrize(("text", "frac", "ngl"), [
    ("20/62 layers on GPU, RTX 3060, qwen 2.5 32b q4_k_m, 3 tok/s", 0.323, 20),
    ("llama.cpp says offloaded 33/65 layers to GPU", 0.508, 33),
    ("I put 20 of 62 layers on the gpu", 0.323, 20),
])
def test_layers_out_of_the_models_are_the_gpu_share(text, frac, ngl):
    from advisor.understand.symptoms import read_symptoms

    s = read_symptoms(text)
    assert (s.gpu_fraction, s.n_gpu_layers) == (frac, ngl)


@pytest.mark.parametrize(("text", "field", "value"), [
    ("RTX 3060 with llama 3.1 8b on a 8k promt", "prompt_tokens", 8000),
    ("M2 Max, 8k contex, llama 3.1 8b", "context_window", 8192),
    ("RTX 4090, llama 3.1 8b, reponse of 400 tokens", "gen_tokens", 400),
])
def test_common_misspellings_are_read(store, text, field, value):
    assert getattr(extract(text, store), field) == value


@pytest.mark.parametrize(("text", "params"), [("a 1T model on 8x H200", 1000.0), ("1T parameter model on 8x H200", 1000.0),
                                              ("a 1 trillion parameter model on 8x H200", 1000.0),
                                              ("2T SSD, RTX 4090, llama 3.1 8b", None)])
def test_trillions_of_parameters(store, text, params):
    assert extract(text, store).params_b == params


@pytest.mark.parametrize(("text", "window"), [("llama 4 scout with a 10M token context on M3 Ultra", 10_000_000),
                                              ("llama 3.1 8b with a 128k token context on a 4090", 131072)])
def test_a_token_context_is_a_window_not_a_prompt(store, text, window):
    e = extract(text, store)
    assert (e.context_window, e.prompt_tokens) == (window, None)


def test_a_prediction_never_exceeds_its_roofline(store):
    from advisor.service import predict_scenario

    p = predict_scenario(store, Scenario(bandwidth_gbs=0.1, tflops=0.001, memory_gb=0.1, params_b=0.001))
    lo, hi = p.decode_tps_range
    assert p.decode_tps <= p.decode_ceiling_tps and lo <= hi <= p.decode_ceiling_tps


@pytest.mark.parametrize(("text", "target"), [
    ("is 20 tok/s possible on an M4 Pro 48GB with gemma 3 27b?", 20.0),
    ("Schafft eine RTX 4070 Ti Super 20 Token pro Sekunde mit Qwen3 32B?", 20.0),
    ("¿Puede una RTX 3060 dar 30 tokens por segundo con llama 3.1 8b?", 30.0),
    ("Est-ce qu'un Mac mini M4 24 Go peut atteindre 20 tokens par seconde avec mistral 7b ?", 20.0),
    ("How many simultaneous users will an H200 support with gpt-oss-120b, 16k context, 25 tok/s each?", 25.0),
])
def test_more_questions_for_a_rate_are_targets(store, text, target):
    e = extract(text, store)
    assert e.target_decode_tps == target and e.measured_decode_tps is None


@pytest.mark.parametrize("text", ["can my 3090 do 40 tok/s with qwen3 32b?",
                                  "I need at least 50 tok/s from llama 3.3 70b on 2x rtx 3090, can it?",
                                  "can an L4 serve 20 users at 25 tok/s each with llama 3.1 8b?"])
def test_a_missed_target_is_a_no(store, text):
    head = _ask(store, text).reply.split("\n\n")[0]
    assert head.startswith("**No: about") and "tok/s you want" in head and "comfortably" not in head


def test_a_met_target_stays_a_yes(store):
    assert _ask(store, "can my 4090 do 40 tok/s with llama 3.1 8b?").reply.startswith("**Yes, comfortably")


@pytest.mark.parametrize("text", ["how many ppl can my 2x rtx 3090 serve with qwen 2.5 14b?",
                                  "How many concurrent users for Llama 3.3 70B on 4x A100 80GB?",
                                  "Wie viele Nutzer kann eine RTX 5090 mit Llama 3.1 8B bedienen?"])
def test_more_how_many_users_phrasings(store, text):
    assert _ask(store, text).reply.startswith("**Users at once:")


def test_no_batch_stream_outruns_a_stream_alone(store):
    from advisor.service import predict_scenario

    one, *more = [predict_scenario(store, Scenario(hardware="H100 SXM", model="llama 3.1 8b", quant="BF16",
                                                   backend="vllm", concurrency=b)) for b in (1, 8, 32, 128)]
    assert all(m.decode_tps_per_seq <= one.decode_tps_per_seq * 1.0001 for m in more)


def test_two_cpu_sockets_are_not_offered_tensor_parallel(store):
    assert "tensor-parallel" not in _ask(store, "server with 0 GPUs, dual EPYC 9654, deepseek r1 q4_k_m").reply


def test_a_paste_from_another_card_of_the_same_vendor_is_judged_on_it(tmp_path):
    from advisor import service
    from knowledge.store import Store

    text = """ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes
| model                          |       size |     params | backend    | ngl |          test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ------------: | -------------------: |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         pp512 |      2105.50 ± 5.10 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |         61.40 ± 0.50 |
"""
    st = Store(str(tmp_path / "s.duckdb"))
    out = service.import_output(st, text, hardware="RTX 4090", save=False)
    assert "says it ran on the GeForce RTX 3060" in out.message and "CUDA_VISIBLE_DEVICES" in out.message
    assert out.verdict.status == "normal"
    same = service.import_output(st, text, hardware="RTX 3060", save=False)
    assert "says it ran on" not in same.message


def test_mlx_off_apple_silicon_is_told_to_switch_engine(store):
    v = _ask(store, "I run MLX on my RTX 4090 with llama 3.1 8b and get 60 tok/s").verdict
    assert v.fixes[0].title.startswith("Run it with llama.cpp or vLLM instead of MLX")
    assert not any("Mac's memory" in f.title for f in v.fixes)


def test_vllm_on_a_mac_is_offered_mlx_formats_not_fp8(store):
    v = _ask(store, "vllm on my M3 Max 64GB with qwen 2.5 14b, 10 tok/s").verdict
    titles = " ".join(f.title for f in v.fixes)
    assert "MLX 4-bit" in titles and "FP8" not in titles and "AWQ" not in titles


@pytest.mark.parametrize("text", ["best gpu under 1000 dollars for llama 3.1 8b",
                                  "wat shud i buy for my team of 10 devs, llama 3.3 70b"])
def test_more_buying_phrasings(store, text):
    assert "You asked what to buy" in _ask(store, text).reply


def test_one_persons_comparison_without_a_model_uses_a_home_sized_model(store):
    r = _ask(store, "I want to buy a GPU, budget 2000 dollars")
    assert r.facts.model == "Qwen3.6 27B" and "a common choice for one person" in r.reply
    t = _ask(store, "what GPU should we buy for 50 users")
    assert t.facts.model == "Llama 3.3 70B" and "a common choice for a team" in t.reply


def test_words_with_an_equals_sign_above_a_paste_are_still_read(store):
    from advisor.intake._paste import prose_lines

    t = ("vllm bench serve on 2x L40S (TP=2), Qwen2.5 32B Instruct AWQ. is this normal?\n"
         "============ Serving Benchmark Result ============\nSuccessful requests:                     200\n"
         "Mean TPOT (ms):                          40.0\n==================================================")
    assert prose_lines(t) == "vllm bench serve on 2x L40S (TP=2), Qwen2.5 32B Instruct AWQ. is this normal?"
