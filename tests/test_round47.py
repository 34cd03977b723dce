"""Round 47: the GPU API as a question ("Vulkan or ROCm?", "would CUDA be faster than Vulkan?")."""

import pytest

from advisor import service
from advisor.understand.engine_question import api_asked, engine_asked
from knowledge.queries import api_pairs
from knowledge.store import Store


@pytest.mark.parametrize("text, api", [
    ("RX 7900 XTX, Qwen2.5 32B in llama.cpp. Should I use Vulkan or ROCm?", "rocm"),
    ("vulkan vs rocm for prompt processing on my 7900 XTX?", "rocm"),
    ("I'm on the Vulkan build; would ROCm be faster?", "rocm"),
    ("Is CUDA faster than Vulkan on a 4080?", "cuda"),
    ("would the ROCm build be faster than Vulkan on my 7900 XTX?", "rocm"),
    ("Arc A770: SYCL or Vulkan?", "vulkan"),
    ("7900 XTX, ollama, llama 3.1 8B, should I turn on vulkan?", "vulkan"),
    ("should I use the ROCm build?", "rocm"),
    ("is it worth building with CUDA?", "cuda"),
    ("thinking about trying HIP on my 9070 XT", "rocm"),
    ("I run ollama with rocm; switch to vulkan?", "vulkan"),
])
def test_an_api_asked_about_is_read_as_a_question(text, api):
    assert api_asked(text) == api
    assert engine_asked(text) is None


@pytest.mark.parametrize("text", [
    "llama.cpp with ROCm on my 7900 XTX, 20 tok/s",
    "I built llama.cpp with Vulkan and get 20 tok/s",
    "I never use vulkan",
    "CUDA_VISIBLE_DEVICES=0 llama-server -m qwen.gguf",
    "should I switch to MLX?",
])
def test_an_api_in_use_or_refused_is_not_a_question(text):
    assert api_asked(text) is None


def test_paired_runs_give_the_measured_api_ratio(store):
    # the Strix Halo toolboxes ran the same models with ROCm and Vulkan: prompt reading differs, decode hardly
    m = api_pairs(store, "rocm", "vulkan")
    assert m["machines"] == ["amd-ryzen-ai-max-plus-395"] and m["pairs"] > 100
    assert 0.9 < m["decode"] < 1.1 and 1.3 < m["prefill"] < 1.9
    v = api_pairs(store, "vulkan", "cuda")  # RTX 4080, ik_llama.cpp discussion: CUDA reads prompts ~3× faster
    assert v["machines"] == ["nvidia-rtx-4080"] and v["prefill"] < 0.5 and v["decode"] < 0.9
    assert api_pairs(store, "sycl", "vulkan")["pairs"] == 0


def _ask(tmp_path, msg):
    r = service.ask(Store(str(tmp_path / "s.duckdb")), msg)
    assert r.verdict is not None, r.reply[:300]
    return r


def test_vulkan_or_rocm_is_answered_with_both_predictions(tmp_path):
    r = _ask(tmp_path, "I have an RX 7900 XTX and run Qwen2.5 32B Q4_K_M in llama.cpp. Should I use Vulkan or ROCm?")
    assert r.facts.backend == "llama.cpp (Vulkan)"  # the first named is the one weighed against
    a = r.verdict.engine_answer
    assert a.startswith("ROCm instead of Vulkan:") and "predicted for both" in a
    assert "ROCm reads prompts faster" in a and "worth it, most of all for long prompts" in a
    assert "Measured both ways" in a and "Ryzen AI Max+ 395" in a  # another machine's pairs: quoted, not deciding
    assert "**ROCm instead of Vulkan:**" in r.reply


def test_this_machines_own_paired_runs_decide(tmp_path):
    r = _ask(tmp_path, "RTX 4080 with llama.cpp CUDA, llama 3.1 8B Q4_0. Is Vulkan faster?")
    a = r.verdict.engine_answer
    assert a.startswith("Vulkan instead of CUDA:") and "by this machine's runs measured both ways" in a
    assert "stay on CUDA" in a and "writes faster (1.23×)" in a


@pytest.mark.parametrize("msg, why", [
    ("RTX 3090 with ollama, qwen2.5 32b, should I try ROCm?", "ROCm (HIP) runs only on AMD GPUs"),
    ("M2 Max 32GB, llama.cpp, Qwen 14B Q4_K_M. would Vulkan be faster?", "on a Mac llama.cpp runs on Metal"),
    ("RX 7900 XTX, llama.cpp, llama 3.1 8B Q4_K_M: is CUDA faster?", "CUDA runs only on NVIDIA GPUs"),
])
def test_an_api_the_machine_cannot_run_says_why(tmp_path, msg, why):
    a = _ask(tmp_path, msg).verdict.engine_answer
    assert "not here" in a and why in a


def test_a_server_engine_picks_its_own_api(tmp_path):
    a = _ask(tmp_path, "RTX 4090, vLLM, Llama 3.1 8B FP16: would Vulkan help?").verdict.engine_answer
    assert a.startswith("Vulkan instead: vLLM picks its GPU API itself (CUDA here)")


# --- a KV-cache type said sizes the cache: "-ctk q8_0", "OLLAMA_KV_CACHE_TYPE=q4_0", "KV cache quantization (q8_0)"

def test_kv_element_bytes_per_cache_type():
    from advisor.roofline import kv_element_bytes
    assert kv_element_bytes(None) == 2.0 and kv_element_bytes("f16") == 2.0
    assert kv_element_bytes("q8_0") == 34 / 32 and kv_element_bytes("Q4_0") == 18 / 32
    assert kv_element_bytes("fp8_e4m3") == 1.0 and kv_element_bytes("quantized") == 34 / 32


def test_a_q8_cache_makes_128k_fit_a_16gb_card(tmp_path):
    # Llama 3.1 8B: 128 KiB of f16 KV per token → 131,072 tokens ≈ 17.2 GB at f16, ≈ 9.1 GB at q8_0 (34/32 B)
    r = _ask(tmp_path, "Llama 3.1 8B, 4060 Ti 16GB, llama.cpp Q4_K_M weights. I want 128k context. "
                       "Does -ctk q8_0 -ctv q8_0 make it fit?")
    assert r.verdict.allocated_gb == pytest.approx(14.7, abs=0.3)  # 4.9 weights + 9.1 cache + 0.6 overhead
    assert r.reply.startswith("**Yes")
    assert any("KV cache in q8_0" in a for a in r.verdict.assumptions)
    f16 = _ask(tmp_path, "Llama 3.1 8B, 4060 Ti 16GB, llama.cpp Q4_K_M weights. I want 128k context. Does it fit?")
    assert f16.verdict.allocated_gb == pytest.approx(22.7, abs=0.3) and f16.reply.startswith("**Not with the 131,072")


@pytest.mark.parametrize("msg, quant", [
    ("does KV cache quantization (q8_0 / q4_0) help me run Llama 3.1 8B with 128k context on a 4060 Ti 16GB?", None),
    ("Mistral 7B, 4060 8GB: should I use q8_0 or q4_0 for the KV cache at 32k context?", None),
    ("Qwen3 14B Q4_K_M on a 3060 12GB, kv cache q8_0, 32k context", "Q4_K_M"),
    ("Qwen2.5 7B Q8_0 on my 3060, 20 tok/s", "Q8_0"),
])
def test_a_cache_type_is_not_read_as_the_weights_format(tmp_path, msg, quant):
    assert service.ask(Store(str(tmp_path / "s.duckdb")), msg).facts.quant == quant


# --- speculative decoding asked about, not in use

@pytest.mark.parametrize("text, asked, in_use", [
    ("what about with speculative decoding using qwen2.5 0.5b as draft?", True, None),
    ("RTX 3090 qwen2.5 32b, would a draft model (qwen2.5 0.5b) with -md help, and by how much?", True, None),
    ("is it worth trying speculative decoding?", True, None),
    ("I run it with -md qwen2.5-0.5b and get 45 tok/s", False, "draft"),
    ("using speculative decoding with a 1B draft, getting 60 tok/s, is that normal?", False, "draft"),
    ("llama-server -m big.gguf -md small.gguf --draft-max 16, 50 tok/s", False, "draft"),
])
def test_speculative_decoding_asked_or_in_use(text, asked, in_use):
    from advisor.understand.symptoms import read_symptoms
    s = read_symptoms(text)
    assert (s.speculative_asked, s.speculative) == (asked, in_use)


def test_a_draft_named_in_a_follow_up_keeps_the_model(tmp_path):
    st = Store(str(tmp_path / "s.duckdb"))
    r1 = service.ask(st, "RTX 3090, Qwen2.5 32B Q4_K_M in llama.cpp, getting 30 tok/s")
    r2 = service.ask(st, "what about with speculative decoding using qwen2.5 0.5b as draft?", r1.facts)
    assert r2.verdict.prediction.model["id"] == "Qwen/Qwen2.5-32B" and r2.verdict.measured["decode_tps"] == 30
    # dense 32B, γ = 4, 70 % accepted, draft at a tenth of the cost (Leviathan et al. 2023), the check's 5 tokens of
    # arithmetic on a 3090 adding about a sixth of a step: ≈ 1.7×
    assert r2.verdict.engine_answer.startswith("Speculative decoding: ≈ 1.7× decode")
    assert "30 → 52" in r2.verdict.engine_answer


def test_a_moe_gains_little_from_a_draft(tmp_path):
    a = _ask(tmp_path, "RTX 4090, Qwen3-30B-A3B Q4_K_M in llama.cpp, would speculative decoding with Qwen3-0.6B help?"
             ).verdict.engine_answer
    assert a.startswith("Speculative decoding: ≈ 1.2× decode")  # checking 5 tokens reads more experts


def test_ollama_has_no_draft_option(tmp_path):
    a = _ask(tmp_path, "RTX 3090 24GB, ollama, qwen2.5 32b q4_k_m, would speculative decoding help?").verdict.engine_answer
    assert a.startswith("Speculative decoding: Ollama has no draft-model option")


# --- a message that corrects itself; a build number is not a card

@pytest.mark.parametrize("msg, hardware, backend", [
    ("rtx 3090, llama 3.1 70b q4_k_m with exllamav2 4.0bpw... jk, I mean can 2x 3090 run 70b at 4bit and how fast "
     "in llama.cpp?", "2x RTX 3090", "llama.cpp"),
    ("M2 Max 32GB with ollama, qwen 14b. scratch that, it's an M3 Max 64GB", "M3 Max", "ollama"),
    ("RTX 4070 with LM Studio running mistral 7b, sorry I meant RTX 4080", "RTX 4080", "LM Studio"),
])
def test_a_message_that_corrects_itself_keeps_the_correction(tmp_path, msg, hardware, backend):
    f = service.ask(Store(str(tmp_path / "s.duckdb")), msg).facts
    assert f.hardware == hardware and f.backend == backend


def test_filler_i_mean_is_not_a_correction():
    from advisor.intake._correct import self_corrected
    assert self_corrected("I mean, it works, but it is slow on my 3060 with llama 8b") is None
    assert self_corrected("sorry, I meant the 14B") is None  # a follow-up's correction: the whole message


def test_a_llama_bench_build_number_is_not_a_card(tmp_path):
    paste = ("My 7900 XTX, is this normal?\n"
             "| model | size | params | backend | ngl | test | t/s |\n| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
             "| qwen2 32B Q4_K_M | 18.48 GiB | 32.76 B | ROCm | 99 | pp512 | 1050.12 ± 5.1 |\n"
             "| qwen2 32B Q4_K_M | 18.48 GiB | 32.76 B | ROCm | 99 | tg128 | 25.3 ± 0.2 |\n\nbuild: 5c0eb5ef (5600)")
    r = service.ask(Store(str(tmp_path / "s.duckdb")), paste)
    assert r.facts.hardware == "RX 7900 XTX" and not any("5600" in n for n in r.notes)


# --- two users at once in one server: a read beside a write is not a "damaged store", and nothing is lost

def test_simultaneous_writes_and_reads_in_one_process_all_succeed(tmp_path):
    import threading
    path = str(tmp_path / "s.duckdb")
    a, b = Store(path), Store(path)  # two Store objects on one file, as two request handlers may hold
    errors: list[str] = []

    def writer(st, name):
        for i in range(8):
            try:
                st.write(lambda con, k=f"{name}-{i}": con.execute("INSERT INTO meta VALUES (?, ?)", [k, "x"]),
                         population=False)
            except Exception as e:  # noqa: BLE001 - collected: the test fails on any
                errors.append(f"write: {e}")

    def reader(st):
        for _ in range(12):
            try:
                st.refresh()
                st.check_external_writes(force=True)
            except Exception as e:  # noqa: BLE001
                errors.append(f"read: {e}")

    threads = [threading.Thread(target=writer, args=(a, "a")), threading.Thread(target=writer, args=(b, "b")),
               threading.Thread(target=reader, args=(a,)), threading.Thread(target=reader, args=(b,))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    n = Store(path).query("SELECT count(*) AS n FROM meta WHERE key LIKE 'a-%' OR key LIKE 'b-%'")[0]["n"]
    assert n == 16


@pytest.mark.parametrize("head, hardware", [("RTX 4090:\n", "RTX 4090"), ("4090\n", "RTX 4090"),
                                            ("3090 Ti:\n", "RTX 3090 Ti"), ("results on my 4090:\n", "RTX 4090")])
def test_a_paste_headed_by_the_machine_keeps_it(tmp_path, head, hardware):
    table = ("| model | size | params | backend | ngl | test | t/s |\n| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
             "| llama 8B Q4_K_M | 4.58 GiB | 8.03 B | CUDA | 99 | pp512 | 2750.12 ± 5.1 |\n"
             "| llama 8B Q4_K_M | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 58.3 ± 0.2 |")
    r = service.ask(Store(str(tmp_path / "s.duckdb")), head + table)
    assert r.facts.hardware == hardware and r.verdict is not None


def test_a_cut_message_says_so_before_the_question(tmp_path):
    m = "this is a long story about my setup. " * 700 + " My setup is an RTX 4090 running llama 3.1 8b"
    r = service.ask(Store(str(tmp_path / "s.duckdb")), m)
    assert r.reply.startswith("That message is long: I read only its first 20,000 characters")
    assert r.reply.rstrip().endswith("**What will you run it on? A Mac, a GPU, or a server?**")


def test_the_api_refuses_an_unknown_engine_as_the_cli_does(store):
    import json

    from ui.api import api_diagnose, api_predict
    for call in (api_predict, api_diagnose):
        out = json.loads(call(store, '{"hardware": "RTX 4090", "model": "llama 3.1 8b", "backend": "foo"}'))
        assert out["error"].startswith("unknown engine 'foo'")
    ok = json.loads(api_predict(store, '{"hardware": "RTX 4090", "model": "llama 3.1 8b", "backend": "ollama"}'))
    assert "error" not in ok and ok["decode_tps"] > 50


@pytest.mark.parametrize("msg, count", [("100 H100 GPUs serving llama 3.3 70b to 100 users", "100"),
                                        ("10,000 RTX 4090s with llama 3.1 8b", "10,000")])
def test_a_cluster_sized_gpu_count_is_said_not_dropped(tmp_path, msg, count):
    r = service.ask(Store(str(tmp_path / "s.duckdb")), msg)
    assert f"{count} GPUs in one machine is more than the advisor models (1–16)" in r.reply
    assert r.verdict is None


def test_sixteen_gpus_are_two_servers():
    from knowledge.catalog._gpus import count_problem
    assert count_problem("I paid $1500 RTX 4090") is None and count_problem("2x RTX 4090") is None
    assert count_problem("deepseek v3 0324 IQ2_K_R4 on EPYC 9654 + one 4090") is None  # a date, not a count
    from knowledge import catalog
    st = Store(":memory:")
    r = catalog.resolve_hardware(st, "16x H100")
    assert any("16 of this card are 2 servers of up to 8" in a for a in r.assumptions)


# --- a serving benchmark's output throughput reads every request's prompt in the same time

_SERVE = """2x A100 80GB, vLLM, Llama 3.3 70B BF16, TP=2:
============ Serving Benchmark Result ============
Successful requests:                     320
Maximum request concurrency:             32
Benchmark duration (s):                  212.80
Total input tokens:                      327680
Total generated tokens:                  81920
Request throughput (req/s):              1.50
Output token throughput (tok/s):         {out}
Total Token throughput (tok/s):          1925.0
---------------Time to First Token----------------
Mean TTFT (ms):                          2100.5
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          74.0
=================================================="""


def test_served_share_formula():
    from advisor.roofline import served_share
    # 629 tok/s of decode alone, 1,024-token prompts per 256-token answer at 1,637 tok/s prefill:
    # 1 / (1/629 + 4/1637) = 248 tok/s of output → share 0.394
    assert served_share(629, 1637, 1024, 256) == pytest.approx(248.0 / 629, rel=0.01)
    assert served_share(629, None, 1024, 256) == 1.0


@pytest.mark.parametrize("out, status", [("385.0", "normal"), ("150.0", "below_expected")])
def test_a_serving_benchmark_is_judged_with_its_prompts(tmp_path, out, status):
    r = _ask(tmp_path, _SERVE.format(out=out))
    assert r.verdict.status == status
    assert "prompts included" in r.verdict.signals[0]
    if status == "below_expected":
        assert "about 248 expected" in r.reply  # not the 629 of decode alone


def test_a_tight_fit_is_never_comfortable(tmp_path):
    r = _ask(tmp_path, "MacBook Air M1 8GB, can I run Mistral 7B?")
    assert r.reply.startswith("**Yes, but only just (memory is tight)")  # 5.0 of 5.3 GB usable
    assert "only 0.3 GB to spare" in r.reply


def test_a_turing_card_serves_a_bf16_checkpoint_as_fp16(tmp_path):
    r = _ask(tmp_path, "T4 16GB, vLLM, Llama 3.2 3B for 10 users")
    assert r.verdict.prediction.quant == "F16"
    assert any("NVIDIA Turing GPUs have no BF16" in a for a in r.verdict.assumptions)
    # an 8B's 16 GB of 16-bit weights do not fit the T4's 15 GiB: the AWQ build people serve there (round 50)
    t4 = _ask(tmp_path, "T4 16GB, vLLM, Llama 3.1 8B for 10 users")
    assert t4.verdict.prediction.quant == "AWQ 4-bit g128"
    assert any("do not fit the" in a and "AWQ 4-bit g128 build" in a for a in t4.verdict.assumptions)
    a = _ask(tmp_path, "A100 80GB, vLLM, Llama 3.1 8B for 10 users")
    assert a.verdict.prediction.quant == "BF16"


def test_compare_says_the_engine_named():
    from advisor.compare.engine import _assumptions
    from advisor.compare.request import CompareRequest
    assert _assumptions(CompareRequest(model="llama 3.1 8b", backend="vllm"))[0].startswith("Engine: vLLM, as you named")
    assert _assumptions(CompareRequest(model="llama 3.1 8b"))[0].startswith("Engine: llama.cpp unless you name one")


@pytest.mark.parametrize("follow, ttft", [("like 20 seconds after a break, then its fast", 20.0), ("about 45s", 45.0),
                                          ("what about 5 minutes of answer length?", None)])
def test_a_follow_up_duration_after_a_slow_start_complaint_is_the_wait(tmp_path, follow, ttft):
    st = Store(str(tmp_path / "s.duckdb"))
    r1 = service.ask(st, "ollama with llama 3.1 8b on my rtx 3070, it takes forever to start answering sometimes")
    r2 = service.ask(st, follow, r1.facts)
    assert r2.facts.measured_ttft_s == ttft
    if ttft == 20.0:
        assert "Slow only after a pause" in r2.reply and "Nothing you need to change" not in r2.reply


def test_a_cached_prefill_is_not_called_normal(tmp_path):
    from advisor import service as svc
    from advisor.models import Scenario
    v = svc.diagnose_scenario(Store(str(tmp_path / "s.duckdb")), Scenario(
        hardware="RTX 3060", model="deepseek r1 14b", measured_prefill_tps=1_000_000))
    assert v.headline.endswith("the prefill measured came from a prompt cache, so it is not judged against this hardware.")
    assert "normal for this hardware" not in v.headline


def test_recover_refuses_a_store_a_server_is_using_even_with_force(tmp_path):
    import subprocess
    import sys

    from advisor.errors import KnowledgeStoreError
    from knowledge import storefile
    path = str(tmp_path / "s.duckdb")
    Store(path).close()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (tmp_path / "s.duckdb.serving").write_text(str(child.pid))  # what `advisor serve` writes (mark_serving)
        with pytest.raises(KnowledgeStoreError, match=r"in use by the advisor server \(pid \d+\)"):
            storefile.recover(path, force=True, try_open=lambda p: None)
    finally:
        child.kill()
        child.wait()
    assert storefile.served_by(path) is None  # the server is gone: its mark no longer holds the store
    assert storefile.recover(path, force=True, try_open=lambda p: None).startswith(path + ".broken-")


def test_the_server_marks_its_store_and_clears_the_mark(tmp_path):
    from knowledge import storefile
    path = str(tmp_path / "s.duckdb")
    clear = storefile.mark_serving(path)
    assert (tmp_path / "s.duckdb.serving").read_text().split()[0] == str(__import__("os").getpid())  # pid, start time
    assert storefile.served_by(path) is None  # this very process: not "another" server
    clear()
    assert not (tmp_path / "s.duckdb.serving").exists()


@pytest.mark.parametrize("msg, options", [
    ("Is it worth getting the M4 Pro 64GB over the M4 Pro 24GB? I want to run 32B models", ["M4 Pro 64GB", "M4 Pro 24GB"]),
    ("M4 Pro 24GB or M4 Pro 64GB for 32B models?", ["M4 Pro 24GB", "M4 Pro 64GB"]),
    ("Mac mini M4 Pro 24GB vs 48GB for qwen 32b?", ["Mac mini M4 Pro 24GB", "Mac mini M4 Pro 48GB"]),
])
def test_two_memory_sizes_of_one_chip_are_compared(tmp_path, msg, options):
    r = service.ask(Store(str(tmp_path / "s.duckdb")), msg)
    assert r.facts.compare_hardware == options
    assert "48 GB is the one that does the job" in r.reply or "64 GB is the one that does the job" in r.reply
    assert "**does not fit**" in r.reply  # the 24 GB one: about 16 GB usable, a 32B at Q4 needs about 21


def test_how_many_datacenter_cards_goes_on_to_two_servers(tmp_path):
    r = service.ask(Store(str(tmp_path / "s.duckdb")),
                    "how many H100 SXM do we need to serve DeepSeek V3 to 100 concurrent users with vLLM?")
    assert r.facts.compare_hardware[-1].endswith("x16")
    assert "16× H100 SXM5 80GB is the one that does the job" in r.reply  # 671B at FP8 does not fit 8 × 80 GB
    home = service.ask(Store(str(tmp_path / "h.duckdb")), "how many RTX 3090s do I need for llama 3.3 70b?")
    assert not home.facts.compare_hardware[-1].endswith("x16")


@pytest.mark.parametrize("msg, who, on", [
    ("Laptop with Ryzen AI 9 HX 370 and 32GB, running llama 3.1 8b in LM Studio at 12 tok/s. Is it using the NPU?",
     "XDNA NPU", "CPU cores"),  # LM Studio on this laptop: judged on the CPU cores (its iGPU is the fix)
    ("Core Ultra 7 155H 32GB, ollama, qwen 7b. can the NPU help?", "OpenVINO", "CPU cores"),
    ("M3 MacBook Pro 18GB, can the neural engine speed up llama 8b?", "Core ML", "GPU"),
])
def test_the_npu_question_is_answered(tmp_path, msg, who, on):
    a = _ask(tmp_path, msg).verdict.engine_answer
    assert a.startswith("The NPU: not used") and who in a and a.endswith(f"The figures here are for the {on}.")


def test_a_model_paged_from_the_ssd_waits_for_it_in_prefill_too(tmp_path):
    from advisor.perf.machine import SWAP_READ_GBS
    r = _ask(tmp_path, "DGX Spark, Qwen3-Coder-480B Q4_K_M in llama.cpp, will it run?")
    p = r.verdict.prediction
    paged_gb = next(float(a.split(" GB of weights paged")[0].split()[-1]) for a in p.assumptions
                    if "GB of weights paged in from the SSD: each micro-batch" in a)
    # one 512-token micro-batch reads the paged weights once: the first word waits at least that read
    assert p.ttft_s >= paged_gb / SWAP_READ_GBS * 0.95


def test_a_prefill_decode_trade_off_between_two_machines_is_said(tmp_path):
    r = service.ask(Store(str(tmp_path / "s.duckdb")), "DGX Spark vs Mac Studio M4 Max 128GB for llama 3.3 70b?")
    lead = r.reply.splitlines()[0]
    assert "A trade-off, not a winner: the M4 Max 128 GB writes answers faster" in lead
    assert "DGX Spark (GB10 Grace Blackwell) 128 GB reads prompts faster" in lead
    from advisor.render.tradeoff import trade_off
    same = [{"name": "a", "fits": True, "tps_each": 30, "first_word_s": 0.5},
            {"name": "b", "fits": True, "tps_each": 20, "first_word_s": 0.9}]
    assert trade_off(same) == ""  # one is better at both: no trade-off


def test_a_paste_for_another_machine_drops_the_conversations_memory(tmp_path):
    st = Store(str(tmp_path / "s.duckdb"))
    r = service.ask(st, "I have a MacBook Air M1 with 8GB. Can I run Mistral 7B for chat?")
    table = ("| model | size | params | backend | ngl | test | t/s |\n| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
             "| llama 8B Q4_K_M | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 58.3 ± 0.2 |")
    out = service.import_output(st, table, hardware="RTX 4090", save=False, scenario=r.facts)
    assert out.facts.hardware == "RTX 4090" and out.facts.memory_gb is None  # the Mac's 8 GB is not the card's
    same = service.import_output(st, table.replace("CUDA", "Metal"), hardware="MacBook Air M1", save=False,
                                 scenario=r.facts)
    assert same.facts.memory_gb == 8


@pytest.mark.parametrize("msg", ["-ctk q8_0", "llama-server -m x.gguf -ctv q4_0 on a 3090 with qwen 7b"])
def test_a_cache_flag_alone_is_not_the_weights_format(tmp_path, msg):
    assert service.ask(Store(str(tmp_path / "s.duckdb")), msg).facts.quant is None
