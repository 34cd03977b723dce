"""Round 49: device listings people paste to show their machine (nvidia-smi, rocm-smi, system_profiler) are read as the
machine, not rejected as tool output without measurements."""

import re

import pytest

from advisor import service
from advisor.intake import extract, is_listing_line, rewrite_listings
from advisor.intake._devices import listing_gpus, nominal_gb
from knowledge.store import Store

SMI_HEAD = """+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|=========================================+========================+======================|
"""


def _card(i, name, mib, used=1234):
    return (f"|   {i}  {name:<30}Off |   0000000{i}:01:00.0  On |                  N/A |\n"
            f"|  0%   45C    P8             11W /  165W |    {used}MiB /  {mib}MiB |      2%      Default |\n"
            "+-----------------------------------------+------------------------+----------------------+\n")


PROCESSES = """
+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |
|=========================================================================================|
|    0   N/A  N/A      2345      C   /usr/local/bin/llama-server                 22000MiB |
+-----------------------------------------------------------------------------------------+
"""


@pytest.fixture(scope="module")
def store():
    return Store(":memory:")


def _facts(text, store):
    return extract(text, store).facts()


@pytest.mark.parametrize("total_gib, gb", [(16380 / 1024, 16), (24576 / 1024, 24), (15360 / 1024, 16), (23034 / 1024, 24),
                                           (46068 / 1024, 48), (81559 / 1024, 80), (143771 / 1024, 141), (8188 / 1024, 8),
                                           (11264 / 1024, 11), (205822885888 / 2**30, 192), (300.0, 300)])
def test_a_listed_total_is_read_as_the_card_marketed_size(total_gib, gb):
    assert nominal_gb(total_gib) == gb


def test_one_card_table_names_the_card_and_its_memory(store):
    text = "this is my GPU, can it run qwen2.5 14b at q4?\n" + SMI_HEAD + _card(0, "NVIDIA GeForce RTX 4060 Ti", 16380)
    f = _facts(text, store)
    assert (f["hardware"], f["memory_gb"], f["model"]) == ("RTX 4060 Ti", 16.0, "qwen2.5 14b")
    assert "gpu_count" not in f
    assert not extract(text, store).looks_like_tool_output


def test_two_card_table_with_processes_is_two_cards(store):
    text = ("why is llama 3.3 70b q4_k_m so slow? about 6 tok/s\n" + SMI_HEAD + _card(0, "NVIDIA GeForce RTX 3090", 24576, 22010)
            + _card(1, "NVIDIA GeForce RTX 3090", 24576, 21544) + PROCESSES)
    f = _facts(text, store)
    assert (f["hardware"], f["gpu_count"], f["memory_gb"], f["measured_decode_tps"]) == ("2x RTX 3090", 2, 24.0, 6.0)


def test_mixed_cards_are_both_named(store):
    text = SMI_HEAD + _card(0, "NVIDIA GeForce RTX 3090", 24576) + _card(1, "NVIDIA GeForce RTX 3060", 12288)
    assert listing_gpus(text) == [("NVIDIA GeForce RTX 3090", 24), ("NVIDIA GeForce RTX 3060", 12)]
    f = _facts(text + "llama 3.1 70b q4", store)
    assert f["gpu_count"] == 2 and "3090" in f["hardware"] and "3060" in f["hardware"]


def test_pre_2023_table_without_the_vendor_prefix(store):
    text = ("| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\n"
            "|   0  GeForce GTX 1080    Off  | 00000000:01:00.0  On |                  N/A |\n"
            "| 27%   35C    P8    11W / 180W |    300MiB /  8119MiB |      1%      Default |\n"
            "mistral 7b q4 please")
    f = _facts(text, store)
    assert (f["hardware"], f["memory_gb"]) == ("GTX 1080", 8.0)


def test_a_name_cut_short_is_said(store):
    text = SMI_HEAD + _card(0, "NVIDIA GeForce RTX 4070 ...", 12282)
    new, note = rewrite_listings(text)
    assert new.splitlines()[0] == "NVIDIA GeForce RTX 4070 12GB" and "cut the card's name short" in note


@pytest.mark.parametrize("text, hardware, count, mem", [
    ("$ nvidia-smi -L\n" + "".join(f"GPU {i}: NVIDIA A100-SXM4-80GB (UUID: GPU-1b2c3d4e-aaaa-bbbb-cccc-11112222333{i})\n"
                                   for i in range(4)) + "serve qwen2.5 72b to 50 users", "4x A100 SXM4", 4, 80.0),
    ("name, memory.total [MiB]\nTesla T4, 15360 MiB\ncan it run mistral 7b?", "T4", None, 16.0),
    ("NVIDIA L4, 23034 MiB\nNVIDIA L4, 23034 MiB\nllama 3.1 8b bf16 with vllm", "2x L4", 2, 24.0),
])
def test_nvidia_smi_list_and_csv(store, text, hardware, count, mem):
    f = _facts(text, store)
    assert (f["hardware"], f.get("gpu_count"), f["memory_gb"]) == (hardware, count, mem)


@pytest.mark.parametrize("series", ["Navi 31 [Radeon RX 7900 XTX]", "Radeon RX 7900 XTX"])
def test_rocm_smi_product_name(store, series):
    text = ("============================ ROCm System Management Interface ============================\n"
            f"GPU[0]\t\t: Card Series: \t\t{series}\nGPU[0]\t\t: Card Model: \t\t0x744c\n"
            "GPU[0]\t\t: VRAM Total Memory (B): 25753026560\n"
            "================================== End of ROCm SMI Log ===================================\n"
            "how fast would gemma 3 27b q4 be?")
    f = _facts(text, store)
    assert (f["hardware"], f["memory_gb"], f["model"]) == ("RX 7900 XTX", 24.0, "gemma 3 27b")


def test_system_profiler_names_the_mac_with_its_memory_and_gpu_cores(store):
    text = ("Hardware Overview:\n      Model Name: MacBook Pro\n      Chip: Apple M2 Max\n"
            "      Memory: 32 GB\n\nGraphics/Displays:\n      Chipset Model: Apple M2 Max\n      Total Number of Cores: 38\n"
            "will llama 3.1 70b run on this?")
    f = _facts(text, store)
    assert (f["hardware"], f["memory_gb"], f["gpu_cores"], f["model"]) == ("M2 Max 38-core", 32.0, 38, "llama 3.1 70b")


@pytest.mark.parametrize("line, listed", [
    ("|   0  NVIDIA GeForce RTX 3090        Off | 00000000:01:00.0 Off |                  N/A |", True),
    ("| 30%   52C    P2             145W / 350W |  22010MiB / 24576MiB |     35%      Default |", True),
    ("| NVIDIA-SMI 535.129.03             Driver Version: 535.129.03   CUDA Version: 12.2     |", True),
    ("| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |  68.21 ± 0.15 |", False),
    ("| model                          |       size |     params | backend    | ngl |          test |          t/s |", False),
    ("my RTX 3090 is slow", False),
])
def test_listing_lines_are_told_from_a_benchmark_table(line, listed):
    assert is_listing_line(line) is listed


def test_text_without_a_listing_is_unchanged():
    text = "RTX 3090, 24 GB\n| model | size |\nllama 3.1 8b"
    assert rewrite_listings(text) == (text, None)


def test_chat_answers_a_pasted_table_for_its_card(tmp_path):
    text = "This is my GPU, I want to run qwen2.5 14b at q4 for chat:\n" + SMI_HEAD + _card(0, "NVIDIA GeForce RTX 4060 Ti", 16380)
    r = service.ask(Store(str(tmp_path / "s.duckdb")), text)
    assert r.verdict is not None and r.verdict.prediction.hardware["id"] == "nvidia-rtx-4060-ti"
    assert "could not find any measurement" not in r.reply and "Read the machine from what nvidia-smi printed" in r.reply
    assert "Persistence" not in (r.facts.question or "")


def test_table_beside_a_llama_bench_run_is_read_and_not_listed_as_skipped(tmp_path):
    bench = ("| model                          |       size |     params | backend    | ngl |          test |                  t/s |\n"
             "| ------------------------------ | ---------: | ---------: | ---------- | --: | ------------: | -------------------: |\n"
             "| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |         pp512 |      3512.44 ± 12.10 |\n"
             "| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |         68.21 ± 0.15 |\n")
    r = service.ask(Store(str(tmp_path / "s.duckdb")), SMI_HEAD + _card(0, "NVIDIA GeForce RTX 4070", 12282) + bench + "is this normal?")
    assert r.reply.startswith("Read 2 measurement(s) from llama-bench output.")
    assert "not understood" not in r.reply
    assert r.verdict is not None and r.verdict.prediction.hardware["id"] == "nvidia-rtx-4070"
    assert r.verdict.measured["decode_tps"] == pytest.approx(68.21)


BENCH_HEAD = ("| model                          |       size |     params | backend    | ngl |          test |                  t/s |\n"
              "| ------------------------------ | ---------: | ---------: | ---------- | --: | ------------: | -------------------: |\n")
PP_ROW = "| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |         pp512 |      3512.44 ± 12.10 |\n"


@pytest.mark.parametrize("last, kept", [
    ("| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |         6", False),
    ("| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |         68.2", False),
    ("| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |         68.21 ± 0", True),
    ("| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |         68.21 |", True),
])
def test_a_row_cut_short_in_the_copy_is_not_read_as_its_first_digits(last, kept):
    from advisor.importers import parse_output

    out = parse_output(BENCH_HEAD + PP_ROW + last)
    decode = [m.decode_tps for m in out.measurements if m.decode_tps]
    assert decode == ([pytest.approx(68.2, abs=0.02)] if kept else [])
    assert len(out.measurements) == (2 if kept else 1)
    assert kept or any("cut short" in w for w in out.warnings)


FREE = ("               total        used        free      shared  buff/cache   available\n"
        "Mem:            62Gi       8.1Gi        45Gi       1.2Gi       9.3Gi        53Gi\n"
        "Swap:          2.0Gi          0B       2.0Gi\n")


@pytest.mark.parametrize("mem_line, gb", [("Mem:            62Gi       8.1Gi        45Gi", 64),
                                          ("Mem:          64215        8123       45000", None),  # free -m needs its flag's unit
                                          ("Mem:       65755312     8123000    45000000", 64),  # free: KiB
                                          ("Mem:             31         8          20", None),
                                          ("Mem:            15Gi       2.1Gi        9Gi", 16)])
def test_free_reports_the_installed_ram(mem_line, gb):
    from advisor.intake._devices import listing_ram_gb

    assert listing_ram_gb(mem_line + "\n") == gb


def test_a_free_paste_is_the_ram_and_its_swap_line_is_no_symptom(tmp_path, store):
    text = ("no gpu, ryzen 9 5950x, llama 3.1 8b q4_k_m in llama.cpp, I get 9 t/s generation and 60 t/s prompt. "
            "this is free -h:\n" + FREE)
    f = _facts(text, store)
    assert (f["hardware"], f["memory_gb"]) == ("ryzen 9 5950x", 64.0)
    r = service.ask(Store(str(tmp_path / "s.duckdb")), text)
    assert r.verdict is not None and r.verdict.bottleneck != "memory_fit"
    assert "Swapping" not in r.reply and "inf GB" not in r.reply and "spilling" not in r.reply


def test_koboldcpp_phases_inside_a_sentence_are_read_as_prefill_and_decode(tmp_path):
    r = service.ask(Store(str(tmp_path / "s.duckdb")),
                    "RTX 3090 24GB, mistral nemo 12b q4_k_m in koboldcpp, 8000 token prompt: Process:4.31s (0.54ms/T = "
                    "1856.15T/s), Generate:6.06s (30.3ms/T = 33.00T/s) is that ok?")
    assert r.reply.startswith("Read 1 measurement(s) from koboldcpp output.")
    assert r.verdict is not None and r.verdict.measured["decode_tps"] == pytest.approx(33.0)
    assert r.verdict.measured["prefill_tps"] == pytest.approx(1856.15)
    assert "taken as the generation" not in r.reply


@pytest.mark.parametrize("text, fast, slow", [
    ("starts at 45 tok/s but after an hour of chatting its down to 15. rtx 3060 12gb, ollama, llama 3.1 8b", 45, 15.0),
    ("it starts around 30 t/s, after a few messages only 12 t/s. m1 pro 16gb qwen3 8b", 30, 12.0),
    ("began at 60 tokens/s and after 2 hours of use it dropped to 20 tokens/s, 4090, llama 3.1 8b", 60, 20.0),
    ("was like 40 tok/s at first, after a while it slowed down to 25 tok/s on my 4090 with llama 3.1 8b", 40, 25.0),
])
def test_a_fall_with_words_between_the_rates_is_judged_at_its_slow_end(store, text, fast, slow):
    e = extract(text, store)
    assert e.measured_decode_tps == slow
    assert any(f"{fast} is how it started" in n for n in e.notes)


def test_a_length_said_in_tokens_sizes_a_long_chat_not_the_half_window_guess(store):
    f = _facts("starts at 45 tok/s but after an hour of chatting (about 30k tokens in the context, num_ctx 32768) its down "
               "to 15. rtx 3060 12gb, ollama, llama 3.1 8b", store)
    assert (f["measured_decode_tps"], f["prompt_tokens"], f["context_window"], f.get("depth")) == (15.0, 30000, 32768, None)
    f = _facts("from 30 tok/s down to 12 after a long chat, 4090 llama 3.1 8b, context 8192", store)
    assert (f["measured_decode_tps"], f["depth"]) == (12.0, 4096)


def test_two_runs_at_two_lengths_are_no_fall(store):
    f = _facts("the prompt is 2000 tokens and it runs at 40 tok/s, rtx 4090 llama 3.1 8b", store)
    assert f["measured_decode_tps"] == 40.0


def test_a_card_measured_only_in_multi_card_boxes_is_not_ranked_below_its_slower_sibling(store):
    """The A100 SXM4's own rows are all 4- and 8-card runs: they set the one card's level 22 % under the PCIe card's
    (2,039 vs 1,935 GB/s, same chip), and compare ranked it last of three."""
    from advisor import compare as cmp

    res = cmp.compare(store, model="llama 3.3 70b", candidates=["nvidia-a100-80gb-sxm", "nvidia-a100-80gb-pcie",
                                                                "nvidia-rtx-6000-ada"])
    by = {c["hardware"]["id"]: c for c in res["candidates"]}
    sxm, pcie, ada = (by[h]["decode_tps_per_user"] for h in ("nvidia-a100-80gb-sxm", "nvidia-a100-80gb-pcie",
                                                            "nvidia-rtx-6000-ada"))
    assert sxm > pcie > ada
    assert [c["hardware"]["id"] for c in res["candidates"]][0] == "nvidia-a100-80gb-sxm"


def test_the_multi_card_level_still_serves_the_multi_card_box():
    from advisor.calibration._model import _Group, _one_card_keys

    groups = {("gpu", "hw-a", "llama.cpp"): _Group(n=16, log_eff=-0.8, sources={"s"}, one_card=0),
              ("gpu", "hw-b", "llama.cpp"): _Group(n=4, log_eff=-0.5, sources={"s"}, one_card=2)}
    keys = [("gpu",), ("gpu", "hw-a", "llama.cpp")]
    assert _one_card_keys(groups, {"hw_id": "hw-a", "multi": False}, keys) == [("gpu",)]
    assert _one_card_keys(groups, {"hw_id": "hw-a", "multi": True}, keys) == keys
    assert _one_card_keys(groups, {"hw_id": "hw-b", "multi": False}, [("gpu", "hw-b", "llama.cpp")]) == \
        [("gpu", "hw-b", "llama.cpp")]


@pytest.mark.parametrize("text, field, value", [
    ("how many H100s do we need to serve Llama 3.3 70B to 1.500 users?", "concurrency", 1500),
    ("RTX 4090 llama 3.1 8b with 32.000 tokens of context", "prompt_tokens", 32000),
    ("RTX 4090 qwen2.5 32b Q4_K_M llama.cpp prompt 12.000 tokens, prefill 2.500,5 tok/s", "measured_prefill_tps", 2500.5),
    ("RTX 4090 qwen2.5 32b Q4_K_M llama.cpp prompt 12.000 tokens, prefill 2.500,5 tok/s", "prompt_tokens", 12000),
    ("prompt 12'000 tokens, rtx 3090, llama 3.1 8b", "prompt_tokens", 12000),
    ("prompt 12 000 tokens, rtx 3090, llama 3.1 8b", "prompt_tokens", 12000),
    ("1.234.567 tokens a day on a 4090 with llama 3.1 8b? prompt 2.000 tokens", "prompt_tokens", 2000),
    ("M2 with 1.5 GB", "memory_gb", 1.5),  # a decimal stays a decimal where it can be one
    ("I get 12,5 tok/s on a 3090 with llama 3.3 70b", "measured_decode_tps", 12.5),
])
def test_thousands_written_the_european_and_swiss_ways(store, text, field, value):
    assert _facts(text, store)[field] == value


def test_a_thousands_dot_is_said_back(store):
    assert any("'1.500' as 1,500" in n for n in extract("serve llama 3.1 8b to 1.500 users on an H100", store).notes)


@pytest.mark.parametrize("text, n", [
    ("Wir sind 15 Leute, 4090, llama 3.1 8b", 15), ("somos 20 usuarios, qwen2.5 32b en dos 3090", 20),
    ("nous sommes 12 personnes, mac studio m2 ultra 192gb, llama 3.3 70b", 12),
    ("нас 30 человек, llama 3.1 8b на A100", 30), ("siamo 8 persone, llama 3.1 8b su una 4090", 8),
    ("we zijn met 25 mensen, H100, llama 3.3 70b", 25),
])
def test_head_counts_in_other_languages(store, text, n):
    assert _facts(text, store)["concurrency"] == n


@pytest.mark.parametrize("wait", ["it takes 90 seconds before anything useful shows up",
                                  "90 s before any output", "about 90 seconds before I see text"])
def test_a_reasoning_models_wait_said_in_other_words_is_its_reasoning(tmp_path, wait):
    r = service.ask(Store(str(tmp_path / "s.duckdb")), f"qwq-32b on 4090 q4_k_m in ollama, {wait}")
    assert r.reply.startswith("**Most of that wait is the model reasoning before it answers.**")
    assert "thinks before it answers" in r.reply and "--think=false" in r.reply


@pytest.mark.parametrize("text, hardware", [
    ("actually I don't have a 4090, it's a laptop with no GPU, Ryzen 7 7840U 32GB", "Ryzen 7 7840U"),
    ("i dont own a 3090 anymore, now a 4090", "RTX 4090"),
    ("I do not have a 4090, it's an M2 Max 32GB", "M2 Max"),
    ("I never had an H100, we run an L40S", "L40S"),
])
def test_a_machine_the_person_does_not_have_is_not_the_machine(store, text, hardware):
    assert _facts(text, store)["hardware"] == hardware


def test_a_correction_to_a_cpu_laptop_replaces_the_card(tmp_path):
    s = Store(str(tmp_path / "s.duckdb"))
    r = service.ask(s, "RTX 4090 llama 3.1 8b Q4_K_M llama.cpp decode 30 tok/s")
    r = service.ask(s, "actually I don't have a 4090, it's a laptop with no GPU, Ryzen 7 7840U 32GB", r.facts)
    assert r.facts.hardware == "Ryzen 7 7840U" and r.facts.memory_gb == 32.0 and r.facts.system_ram_gb is None
    assert r.reply.startswith("**Changed:** hardware RTX 4090 → Ryzen 7 7840U")


@pytest.mark.parametrize("text, model", [
    ("would speculative decoding with qwen2.5 0.5b as draft speed up qwen2.5 32b on my m2 max 64gb", "qwen2.5 32b"),
    ("using llama 3.2 1b as a draft model for llama 3.1 70b on 2x 3090", "llama 3.1 70b"),
    ("llama 3.1 70b with a draft model (llama 3.2 1b) on 2x 3090", "llama 3.1 70b"),
    ("draft model: llama 3.2 1b, main model llama 3.1 70b, 2x 3090", "llama 3.1 70b"),
])
def test_the_model_a_draft_speeds_up_is_the_model(store, text, model):
    assert _facts(text, store)["model"] == model


@pytest.mark.parametrize("text, gbs", [
    ("Ryzen 7 7840U laptop with 32gb lpddr5x, llama 3.1 8b", 120.0),
    ("Ryzen 7 7840U laptop with 32GB LPDDR5, llama 3.1 8b", 102.4),
    ("Ryzen 7 7840U laptop with 32gb lpddr5x-6400, llama 3.1 8b", 102.4),
])
def test_laptop_memory_named_without_its_rate_runs_at_the_generations_usual_rate(store, text, gbs):
    e = extract(text, store)
    assert e.bandwidth_gbs == gbs
    assert ("usual rate in laptops" in " ".join(e.notes)) == ("-6400" not in text)


@pytest.mark.parametrize("said", ["GPU offload 40/62 layers", "offloaded 40/63 layers to GPU", "GPU offload set to 40 of 62 layers",
                                  "-ngl 40"])
def test_layers_set_on_the_gpu_are_read(store, said):
    assert _facts(f"RTX 4080 16GB, gemma 3 27b q4_k_m, {said}, 4.21 tok/sec", store)["n_gpu_layers"] == 40


def test_a_model_that_does_not_fit_is_judged_at_the_split_the_person_set(tmp_path):
    s = Store(str(tmp_path / "s.duckdb"))
    own = service.ask(s, "RTX 4080 16GB, gemma 3 27b q4_k_m in LM Studio, GPU offload 40/62 layers, 4.21 tok/sec")
    auto = service.ask(s, "RTX 4080 16GB, gemma 3 27b q4_k_m in LM Studio, 4.21 tok/sec")
    lo_own, hi_own = own.verdict.expected_range["decode_tps"]
    lo_auto, _ = auto.verdict.expected_range["decode_tps"]
    assert hi_own < lo_auto  # 40 of 62 layers on the card is slower than the engine's own best split
    assert any("40 of the model's 62 layers on the GPU" in a for a in own.verdict.prediction.assumptions)


@pytest.mark.parametrize("text, target, measured", [
    ("RTX 4090, qwen2.5 32b q4, 用 vLLM 的话每秒 35 tokens 能达到吗？", 35.0, None),
    ("RTX 4090, qwen2.5 32b q4, 我只有每秒 15 tokens，正常吗？", None, 15.0),
    ("4090 qwen2.5 32b, нужно хотя бы 20 токенов в секунду", 20.0, None),
    ("4090 qwen2.5 32b, я получаю 20 токенов в секунду", None, 20.0),
    ("4090 qwen2.5 32b, 毎秒30トークン出せますか？", 30.0, None),
])
def test_a_wanted_rate_in_chinese_japanese_or_russian_is_a_target(store, text, target, measured):
    f = _facts(text, store)
    assert (f.get("target_decode_tps"), f.get("measured_decode_tps")) == (target, measured)


def test_a_service_rate_without_a_head_count_is_sized_by_replicas(tmp_path):
    """Before: "3 requests a second" became one user sending 180 a minute, served by llama.cpp one request at a time,
    and 1 to 16 A100s were all overloaded at the same 23 tok/s."""
    r = service.ask(Store(str(tmp_path / "s.duckdb")), "3 requests per second, avg prompt 2000 tokens, answers 150 tokens. "
                    "llama 3.1 70b awq. how many A100 80GB do we need?")
    assert "3.0 requests a second (about 45 answers streaming at once)" in r.reply
    assert "at 3.0 requests a second in all" in r.reply and "per minute per user" not in r.reply
    m = re.search(r"so about (\d+) of them as separate replicas", r.reply)
    assert m and 7 <= int(m.group(1)) <= 12  # ~6,000 prompt tok/s against ~1,000 per A100, kept ~70 % busy
    assert "served by vLLM" in r.reply or "vLLM" in r.reply


@pytest.mark.parametrize("rpm, gen, tps, users", [(180, 150, None, 45), (6, 300, 20, 2), (0.5, 100, None, 1)])
def test_open_arrivals_by_littles_law(rpm, gen, tps, users):
    from advisor.compare.engine import open_arrivals

    n, per = open_arrivals(rpm, gen, tps)
    assert n == users and per * n == pytest.approx(rpm)


def test_gpu_serving_formats_assume_a_serving_engine():
    from advisor.models import Hardware
    from advisor.perf.machine import assumed_engine

    card = Hardware(id="nvidia-rtx-4090", name="RTX 4090", kind="discrete_gpu", family="NVIDIA Ada", vendor="NVIDIA",
                    bandwidth_gbs=1008, memory_gb=24)
    assert assumed_engine(card, 1, quant="AWQ 4-bit g128")[0] == "vllm"
    assert assumed_engine(card, 1, quant="Q4_K_M")[0] is None
    dc = card.model_copy(update={"kind": "datacenter_gpu"})
    assert assumed_engine(dc, 1, requests_per_minute=180)[0] == "vllm"
    assert assumed_engine(dc, 1, requests_per_minute=2)[0] is None


TABLE = ("| model                          |       size |     params | backend    | ngl |          test |                  t/s |\n"
         "| ------------------------------ | ---------: | ---------: | ---------- | --: | ------------: | -------------------: |\n"
         "| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |         pp512 |   {pp} ± 12.10 |\n"
         "| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |   {tg} ± 0.15 |\n")


@pytest.mark.parametrize("between", ["and on my other box (RTX 3060):", "RTX 3060:", "same run on my laptop:",
                                     "RTX 3060 12GB"])
def test_a_second_run_said_to_be_on_another_machine_is_set_aside(between):
    from advisor.importers import parse_output

    text = "RTX 4090:\n" + TABLE.format(pp="11204.44", tg="127.21") + f"\n{between}\n\n" + TABLE.format(pp="1800.12", tg="55.20")
    out = parse_output(text)
    assert [m.decode_tps for m in out.measurements if m.decode_tps] == [127.21]
    assert any("more than one machine" in w for w in out.warnings)


def test_words_between_two_runs_on_one_machine_keep_both():
    from advisor.importers import parse_output

    text = TABLE.format(pp="11204.44", tg="127.21") + "\nthen with flash attention on:\n\n" + TABLE.format(pp="12000.00", tg="130.10")
    out = parse_output(text)
    assert [m.decode_tps for m in out.measurements if m.decode_tps] == [127.21, 130.1]


OLLAMA_BLOCK = ("total duration:       {total}\nload duration:        20ms\nprompt eval count:    512 token(s)\n"
                "prompt eval duration: {pdur}\nprompt eval rate:     {prate} tokens/s\neval count:           300 token(s)\n"
                "eval duration:        {edur}\neval rate:            {erate} tokens/s\n")


@pytest.mark.parametrize("vals, prefill, decode", [
    (dict(total="12.3s", pdur="250s", prate="2.05", edur="10s", erate="30.00"), None, 30.0),  # longer than the total
    (dict(total="40s", pdur="1s", prate="512.00", edur="30s", erate="100.00"), 512.0, None),  # 300 in 30 s is 10, not 100
    (dict(total="12.3s", pdur="500ms", prate="1024.00", edur="10s", erate="30.00"), 1024.0, 30.0),  # adds up
])
def test_an_ollama_block_that_does_not_add_up_keeps_only_what_does(vals, prefill, decode):
    from advisor.importers import parse_output

    out = parse_output(OLLAMA_BLOCK.format(**vals))
    kept = [(m.prefill_tps, m.decode_tps) for m in out.measurements]
    assert kept == ([(prefill, decode)] if (prefill or decode) else [])
    assert (prefill is None or decode is None) == any("does not add up" in w for w in out.warnings)


def test_a_llama_server_line_whose_rate_disagrees_with_its_time_is_not_kept():
    from advisor.importers import parse_output

    out = parse_output("prompt eval time =  512340.00 ms /  1024 tokens (  500.33 ms per token,  1998.67 tokens per second)\n"
                       "       eval time =   14085.85 ms /   178 runs   (   79.13 ms per token,    12.64 tokens per second)\n")
    assert [(m.prefill_tps, m.decode_tps) for m in out.measurements] == [(None, 12.64)]
    assert any("not kept" in w for w in out.warnings)


@pytest.mark.parametrize("head", ["RTX 4090 ollama llama3.1:8b", "rtx 4090, qwen2.5:14b", "my 4090 with gemma3:27b"])
def test_a_first_line_naming_an_ollama_tag_is_the_persons_words(tmp_path, head):
    block = ("total duration:       3.2s\nload duration:        20ms\nprompt eval count:    26 token(s)\n"
             "prompt eval duration: 20ms\nprompt eval rate:     1300.00 tokens/s\neval count:           300 token(s)\n"
             "eval duration:        2.4s\neval rate:            125.00 tokens/s\n")
    r = service.ask(Store(str(tmp_path / "s.duckdb")), head + "\n" + block)
    assert "not understood" not in r.reply and r.verdict is not None
    assert r.verdict.prediction.hardware["id"] == "nvidia-rtx-4090"


def test_llama_bench_csv_pasted_in_the_chat_is_read_not_left_out_as_a_hash(tmp_path):
    import json
    from pathlib import Path

    csv = json.loads((Path(__file__).parent / "importers" / "fixtures" / "own-llama-bench-csv.json").read_text())["text"]
    r = service.ask(Store(str(tmp_path / "s.duckdb")), "is this normal?\n" + csv)
    assert r.reply.startswith("Read 4 measurement(s) from llama-bench output.")
    assert "Left out" not in r.reply and r.verdict is not None and r.verdict.measured.get("decode_tps")


@pytest.mark.parametrize("log", [
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
    "driver is installed and running.",
    "Failed to initialize NVML: Driver/library version mismatch",
    "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected",
])
def test_a_failing_gpu_driver_is_the_first_fix(tmp_path, log):
    r = service.ask(Store(str(tmp_path / "s.duckdb")), log + "\nRTX 3060 12GB llama 3.1 8b q4_k_m ollama 6 tok/s")
    assert "**Best fix:** Install the GPU build/runtime" in r.reply


@pytest.mark.parametrize("text, hardware, problem", [
    ("GPU[0]: [0x7448 : 0xc8] Radeon RX 7900 XTX, llama 3.1 8b", "RX 7900 XTX", False),
    ("0x RTX 4090, llama 3.1 8b", None, True),
    ("4xA100 80GB, llama 3.3 70b", "4x A100", False),
])
def test_a_hex_id_in_a_listing_is_no_gpu_count(store, text, hardware, problem):
    e = extract(text, store)
    assert e.hardware == hardware
    assert any("not a number of GPUs" in x for x in e.not_understood) is problem


def test_users_that_do_not_all_fit_get_the_fixes_that_make_room_first(tmp_path):
    """Before: the first fix for 50 RAG users of whom 19 fit on an L40S was "use Gemma 3 4B"."""
    r = service.ask(Store(str(tmp_path / "s.duckdb")), "RAG service, ~12k token prompts, 300 token answers, 50 concurrent "
                    "users, llama 3.1 8b. is one L40S enough?")
    first = r.verdict.fixes[0]
    assert first.id == "kv_cache_quantization" and "--kv-cache-dtype fp8" in first.title
    assert "38 of the 50 users at once instead of 19" in first.predicted_effect
    assert any(f.id == "quantization" and "users at once instead of 19" in f.predicted_effect for f in r.verdict.fixes)


def test_an_idle_card_beside_a_full_one_is_said():
    busy = SMI_HEAD + _card(0, "NVIDIA GeForce RTX 3090", 24576, 22000) + _card(1, "NVIDIA GeForce RTX 3090", 24576, 5)
    both = SMI_HEAD + _card(0, "NVIDIA GeForce RTX 3090", 24576, 22000) + _card(1, "NVIDIA GeForce RTX 3090", 24576, 21000)
    assert "GPU 1 (5 of 24,576 MiB) almost empty while GPU 0 (22,000 MiB) holds the model" in rewrite_listings(busy)[1]
    assert "almost empty" not in rewrite_listings(both)[1]


@pytest.mark.parametrize("text, tps", [("RTX 4090 llama 3.1 8b decode 1/3 tok/s", 0.333),
                                       ("cpu only, ryzen 9 7950x, llama 3.3 70b, about 1/2 t/s", 0.5)])
def test_a_rate_written_as_a_fraction(store, text, tps):
    assert _facts(text, store)["measured_decode_tps"] == tps


def test_facts_breaking_a_rule_across_fields_keep_the_rest(tmp_path):
    from ui.api import api_ask

    reply, _, facts = api_ask(Store(str(tmp_path / "s.duckdb")), "is that fast?",
                              '{"hardware":"RTX 4090","model":"llama 3.1 8b","active_params_b":70,"params_b":8}')
    assert "the rest is kept" in reply and "I could not read the facts" not in reply
    assert '"hardware":"RTX 4090"' in facts and '"model":"llama 3.1 8b"' in facts


def test_a_bad_cell_in_the_facts_table_keeps_the_verdict_of_the_facts_as_they_were(store):
    from ui import handlers

    facts = {"hardware": "RTX 4090", "model": "llama 3.1 8b", "quant": "Q4_K_M"}
    new, verdict, note = handlers.facts_edited(store, [["memory (GB)", "-5"]], facts)
    assert new == facts and verdict is not None and verdict.prediction.hardware["id"] == "nvidia-rtx-4090"
    assert "memory_gb" in note and "The other facts are as they were." in note
