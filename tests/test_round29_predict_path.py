"""Predictions through the names people write (round 29): unstated memory and Ollama's accelerator.

A machine sold in several memory sizes, named without one, is predicted on the smallest size that holds the
model (a run that was measured fitted), not on the smallest size with the model paged in from the SSD. Ollama
on a GPU that only Vulkan would drive (Intel iGPUs, AMD iGPUs off ROCm's list) runs on the CPU cores.
"""

from __future__ import annotations

import json

import pytest

from advisor import service
from advisor.models import Hardware, Scenario
from advisor.understand.engine import engine_accel, ollama_accel, ollama_gpu_fallback
from knowledge.store import Store


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def _predict(store: Store, **kw):
    return service.predict_scenario(store, Scenario(**kw))


def _memory_note(p) -> str:
    return next(a for a in p.assumptions if a.startswith("Memory not stated"))


@pytest.mark.parametrize("hardware", ["AMD Ryzen AI Max+ 395", "Strix Halo", "Ryzen AI Max+ 395 mini PC"])
def test_unstated_memory_takes_the_smallest_size_that_holds_the_model(store: Store, hardware: str) -> None:
    # llama 3.1 70B at Q4_K_M needs about 45 GB: the 32 GB Strix Halo cannot hold it, the 64 GB one can.
    p = _predict(store, hardware=hardware, model="llama 3.1 70b", quant="Q4_K_M")
    assert p.memory.total_gb == 64
    assert p.memory.fits
    assert "32 GB version cannot" in _memory_note(p)
    # 256 GB/s × efficiency over ~43 GB of weights: about 4–6 tok/s, not the 0.1 tok/s of SSD paging
    assert 3.5 < p.decode_tps < 6.5


def test_unstated_memory_a_small_model_keeps_the_smallest_size(store: Store) -> None:
    p = _predict(store, hardware="AMD Ryzen AI Max+ 395", model="llama 3.1 8b", quant="Q4_K_M")
    assert p.memory.total_gb == 32
    assert "the smallest" in _memory_note(p) and "cannot" not in _memory_note(p)


def test_unstated_memory_nothing_holds_it_takes_the_largest_and_says_so(store: Store) -> None:
    p = _predict(store, hardware="Mac mini M4", model="llama 3.1 405b", quant="Q4_K_M")
    assert p.memory.total_gb == 32  # the M4 Mac mini's largest option
    assert not p.memory.fits
    assert "even that cannot hold" in _memory_note(p)


@pytest.mark.parametrize("memory", [32, 64])
def test_stated_memory_is_kept(store: Store, memory: int) -> None:
    p = _predict(store, hardware="AMD Ryzen AI Max+ 395", memory_gb=memory, model="llama 3.1 70b", quant="Q4_K_M")
    assert p.memory.total_gb == memory
    assert p.memory.fits is (memory == 64)
    assert not any(a.startswith("Memory not stated") for a in p.assumptions)


def test_the_users_count_decides_the_size(store: Store) -> None:
    # 32 users × 8k tokens of llama 3.1 8B KV cache (~1 GB each at f16) do not fit next to the weights in 32 GB.
    one = _predict(store, hardware="AMD Ryzen AI Max+ 395", model="llama 3.1 8b", quant="Q4_K_M",
                   prompt_tokens=8000, gen_tokens=300)
    many = _predict(store, hardware="AMD Ryzen AI Max+ 395", model="llama 3.1 8b", quant="Q4_K_M",
                    prompt_tokens=8000, gen_tokens=300, concurrency=32)
    assert one.memory.total_gb == 32
    assert many.memory.total_gb > 32 and many.memory.fits


def _hw(kind: str, vendor: str, family: str = "") -> Hardware:
    return Hardware(id="x", name="X", kind=kind, vendor=vendor, family=family, bandwidth_gbs=100)


@pytest.mark.parametrize("hw,api", [
    (_hw("apu", "Intel", "Intel Xe-LPG"), "cpu"),  # an Intel iGPU: Vulkan only, off by default
    (_hw("discrete_gpu", "Intel", "Intel Xe-HPG (Alchemist)"), "vulkan"),  # an Arc card: its own memory, said
    (_hw("apu", "AMD", "AMD RDNA 3.5 (Krackan)"), "cpu"),  # an AMD iGPU off ROCm's list
    (_hw("apu", "AMD", "AMD Strix Halo"), "rocm"),  # gfx1151 is on ROCm's list
    (_hw("discrete_gpu", "NVIDIA", "NVIDIA Ada"), "cuda"),
    (_hw("discrete_gpu", "AMD", "AMD RDNA3"), "rocm"),
    (_hw("apple_soc", "Apple", "Apple M4"), "metal"),
])
def test_ollama_runs_where_its_backends_reach(hw: Hardware, api: str) -> None:
    assert engine_accel("ollama", hw)[1] == api
    assert engine_accel("llama.cpp", hw)[1] != "cpu"  # llama.cpp itself drives every one of these GPUs


@pytest.mark.parametrize("backend,hw,state", [
    ("ollama", _hw("apu", "Intel", "Intel Xe-LPG"), "cpu"),
    ("Ollama 0.12", _hw("apu", "AMD", "AMD RDNA 3.5 (Krackan)"), "cpu"),
    ("ollama", _hw("discrete_gpu", "Intel", "Intel Xe-HPG (Alchemist)"), "opt_in"),
    ("ollama vulkan", _hw("apu", "Intel", "Intel Xe-LPG"), None),  # the person turned Vulkan on
    ("ollama num_gpu 0", _hw("apu", "Intel", "Intel Xe-LPG"), None),  # the person chose the CPU
    ("llama.cpp", _hw("apu", "Intel", "Intel Xe-LPG"), None),  # llama.cpp's Vulkan build drives it
    ("ollama", _hw("apu", "AMD", "AMD Strix Halo"), None),  # on ROCm's list
    ("ollama", _hw("discrete_gpu", "NVIDIA", "NVIDIA Ada"), None),
    ("ollama", _hw("cpu", "Intel"), None),
])
def test_one_test_of_ollama_leaving_the_gpu(backend: str, hw: Hardware, state: str | None) -> None:
    assert ollama_gpu_fallback(backend, hw) == state


def test_ollama_on_a_discrete_intel_card_is_predicted_on_the_card_and_says_what_it_needs(store: Store) -> None:
    p = _predict(store, hardware="Intel Arc A770", model="gemma 3 4b", backend="ollama")
    assert p.calibration[0].group.startswith("gpu") and p.prefill_tps  # the card's 560 GB/s VRAM, its compute
    assert any("OLLAMA_VULKAN=1" in a and "IPEX-LLM" in a for a in p.assumptions)
    on = _predict(store, hardware="Intel Arc A770", model="gemma 3 4b", backend="OLLAMA_VULKAN=1 ollama")
    assert not any("OLLAMA_VULKAN" in a for a in on.assumptions)


def test_ollama_vulkan_said_in_a_message_keeps_the_igpu(store: Store) -> None:
    on = service.ask(store, "Intel Iris Xe laptop, ollama with OLLAMA_VULKAN=1, gemma 3 4b")
    off = service.ask(store, "Intel Iris Xe laptop, ollama, gemma 3 4b")
    assert on.verdict.prediction.calibration[0].group.startswith("gpu")
    assert off.verdict.prediction.calibration[0].group.startswith("cpu")


def test_a_label_that_names_vulkan_keeps_the_gpu() -> None:
    hw = _hw("apu", "Intel", "Intel Xe-LPG")
    assert engine_accel("ollama with vulkan", hw)[1] == "vulkan"
    assert engine_accel("ollama -ngl 0", _hw("discrete_gpu", "NVIDIA"))[1] == "cpu"
    assert ollama_accel(hw, "cuda") == "cuda"


def test_ollama_on_an_intel_igpu_is_predicted_on_the_cpu_and_says_so(store: Store) -> None:
    p = _predict(store, hardware="Intel Iris Xe laptop", model="gemma 3 4b", backend="ollama")
    gpu = _predict(store, hardware="Intel Iris Xe laptop", model="gemma 3 4b", backend="ollama vulkan")
    assert p.calibration[0].group.startswith("cpu")
    assert gpu.calibration[0].group.startswith("gpu")
    assert p.decode_tps < 0.75 * gpu.decode_tps  # CPU cores reach less of the shared memory's bandwidth
    assert any("OLLAMA_VULKAN=1" in a for a in p.assumptions)
    assert not any("OLLAMA_VULKAN" in a for a in gpu.assumptions)


def test_ollama_on_an_nvidia_card_is_unchanged(store: Store) -> None:
    p = _predict(store, hardware="RTX 4090", model="llama 3.1 8b", quant="Q4_K_M", backend="ollama")
    assert p.calibration[0].group.startswith("gpu")
    assert not any("OLLAMA_VULKAN" in a for a in p.assumptions)


# ----------------------------------------------------------------------------- predict --input on a table of results
_RESULTS_HEADER = ("source_set,hardware,hw_id,backend,model,params_b,quant,prompt_tokens,gen_tokens,depth,batch,"
                   "prefill_tps,decode_tps,source_url,notes\n")


def _table(tmp_path, body: str):
    from typer.testing import CliRunner

    from advisor.cli import app

    f = tmp_path / "results.csv"
    f.write_text(_RESULTS_HEADER + body)
    r = CliRunner().invoke(app, ["predict", "--input", str(f), "--json"])
    return r, [json.loads(x) for x in r.stdout.strip().splitlines()]


def test_a_results_table_is_predicted_and_compared_row_by_row(tmp_path) -> None:
    r, rows = _table(tmp_path,
                     'me,RTX 4090,nvidia-rtx-4090,llama.cpp-cuda,llama 3.1 8b,8.03,Q4_K_M,512,128,0,1,12000,130,'
                     'https://example.org/run,"pp512/tg128, 2025 build"\n'
                     "me,My Strange Box 9000,nvidia-rtx-3090,llama.cpp-cuda,llama 3.1 8b,8.03,Q4_K_M,512,128,0,1,,100,,\n"
                     "me,RTX 4090,,llama.cpp-cuda,llama 3.1 8b,8.03,Q4_K_M,,128,0,1,9000,,,prompt not stated\n")
    assert r.exit_code == 0, r.output
    first, second, third = rows
    assert first["measured_decode_tps"] == 130 and first["measured_prefill_tps"] == 12000
    assert first["decode_error_pct"] == pytest.approx((first["decode_tps"] / 130 - 1) * 100, abs=0.06)
    assert first["prefill_error_pct"] == pytest.approx((first["prefill_tps"] / 12000 - 1) * 100, abs=0.06)
    # a name the catalog does not know: the row's catalog id decides the machine
    assert second["hardware"]["id"] == "nvidia-rtx-3090" and "prefill_error_pct" not in second
    # a prefill rate without its prompt length is kept but not compared (the rate depends on the length)
    assert third["measured_prefill_tps"] == 9000 and third["prefill_error_pct"] is None
    assert "decode: median |error|" in r.stderr and "over 2 measured rows" in r.stderr


def test_the_seed_results_table_predicts_every_row(tmp_path) -> None:
    from typer.testing import CliRunner

    from advisor.cli import app
    from knowledge.seed import SEED_DIR

    r = CliRunner().invoke(app, ["predict", "--input", str(SEED_DIR / "results_more.csv"), "--json"])
    rows = [json.loads(x) for x in r.stdout.strip().splitlines()]
    assert len(rows) == 687
    assert not [x for x in rows if "error" in x]  # it was 'unknown columns' for every row
    decode = sorted(abs(x["decode_error_pct"]) for x in rows if x.get("decode_error_pct") is not None)
    assert len(decode) > 600 and decode[len(decode) // 2] < 15  # in-sample: these rows are in the fit


@pytest.mark.parametrize("bad", ["fast", "-3", "0", "1e-7", "inf"])
def test_a_measured_rate_that_is_not_a_rate_is_a_row_error(tmp_path, bad: str) -> None:
    r, rows = _table(tmp_path, f"me,RTX 4090,,llama.cpp,llama 3.1 8b,,Q4_K_M,512,128,0,1,,{bad},,\n"
                               "me,RTX 4090,,llama.cpp,llama 3.1 8b,,Q4_K_M,512,128,0,1,,130,,\n")
    assert "decode_tps" in rows[0]["error"] and "tok/s" in rows[0]["error"]
    assert rows[1]["measured_decode_tps"] == 130  # the other rows are still predicted


def test_a_results_table_row_says_when_its_hw_id_was_used(tmp_path) -> None:
    r, rows = _table(tmp_path, "me,Some Weird Box,nvidia-rtx-4090,llama.cpp,llama 3.1 8b,,Q4_K_M,512,128,0,1,,100,,\n"
                               "me,Some Weird Box,garbage-id,llama.cpp,llama 3.1 8b,,Q4_K_M,512,128,0,1,,100,,\n")
    assert rows[0]["hardware"]["id"] == "nvidia-rtx-4090"
    assert rows[0]["assumptions"][0].startswith("The hardware 'Some Weird Box' is not in the catalog")
    assert "neither the hardware 'Some Weird Box' nor the hw_id 'garbage-id'" in rows[1]["error"]


@pytest.mark.parametrize("blank", ["NA", "n/a", "-", "null", ""])
def test_placeholders_for_a_rate_not_measured_are_blanks(tmp_path, blank: str) -> None:
    r, rows = _table(tmp_path, f"me,RTX 4090,,llama.cpp,llama 3.1 8b,,Q4_K_M,512,128,0,1,{blank},130,,\n")
    assert "error" not in rows[0] and "measured_prefill_tps" not in rows[0] and rows[0]["measured_decode_tps"] == 130


def test_a_decode_only_row_is_not_compared_for_prefill(tmp_path) -> None:
    r, rows = _table(tmp_path, "me,RTX 4090,,llama.cpp,llama 3.1 8b,,Q4_K_M,0,128,0,1,500,130,,\n")
    assert rows[0]["prefill_error_pct"] is None and rows[0]["decode_error_pct"] is not None


def test_a_column_given_twice_is_refused(tmp_path) -> None:
    from typer.testing import CliRunner

    from advisor.cli import app

    f = tmp_path / "dup.csv"
    f.write_text("hardware,model,Decode TPS,decode_tps\nRTX 4090,llama 3.1 8b,1,2\n")
    r = CliRunner().invoke(app, ["predict", "--input", str(f), "--json"])
    assert r.exit_code == 2 and "'decode_tps' more than once" in r.stdout


def test_single_prediction_flags_beside_input_are_refused(tmp_path) -> None:
    from typer.testing import CliRunner

    from advisor.cli import app

    f = tmp_path / "rows.csv"
    f.write_text("hardware,model\nRTX 4090,llama 3.1 8b\n")
    r = CliRunner().invoke(app, ["predict", "--input", str(f), "-h", "RTX 3060", "--json"])
    assert r.exit_code == 2 and "--hardware would be ignored" in r.stdout


def test_an_unknown_column_is_still_named(tmp_path) -> None:
    r, rows = _table(tmp_path, "")
    f = tmp_path / "x.csv"
    f.write_text("hardware,model,colour\nRTX 4090,llama 3.1 8b,red\n")
    from typer.testing import CliRunner

    from advisor.cli import app

    out = json.loads(CliRunner().invoke(app, ["predict", "--input", str(f), "--json"]).stdout.strip())
    assert "'colour'" in out["error"] and "decode_tps" in out["error"]  # the known ones listed, measured included


# ----------------------------------------------------------------------------- flash attention as the label says
@pytest.mark.parametrize("label,state", [
    ("ik_llama.cpp-vulkan (no FA)", False), ("llama.cpp -fa 0", False), ("llama-server --flash-attn off", False),
    ("llama.cpp-cpu (FA off)", False), ("llama.cpp without flash attention", False),
    ("llama.cpp flash attention off", False), ("flash attention disabled", False), ("no flash attn", False),
    ("fa=0", False), ("-fa0", False), ("OLLAMA_FLASH_ATTENTION=0 ollama serve", False), ("ollama no FA", False),
    ("I disabled flash attention", False), ("flash attention is off", False), ("__fa0", False),
    ("llama-server with flash attention off", False), ("with -fa 0", False),
    ("llama.cpp -fa 0 -fa 1", True),  # llama.cpp takes the last flag
    ("llama.cpp -fa 1 (no FA)", False),  # the last said wins
    ("llama.cpp-cuda -fa 1", True), ("llama-bench -fa", True), ("ik_llama.cpp-cpu (FA)", True), ("(FA, q8_0 KV)", True),
    ("OLLAMA_FLASH_ATTENTION=1", True), ("with flash attention", True), ("-fa -rtr -fmoe", True),
    ("llama.cpp-cuda", None), ("ollama", None), ("--flash-attn auto", None), ("model FA-7B", None), ("SAFARI", None),
])
def test_flash_attention_read_off_a_label(label: str, state: bool | None) -> None:
    from advisor.perf.fit import label_flash_attn

    assert label_flash_attn(label) is state


def test_flash_attention_off_costs_long_prompts_and_says_so(store: Store) -> None:
    kw = dict(hardware="RTX 4090", model="llama 3.1 8b", quant="Q4_K_M", prompt_tokens=16000, gen_tokens=128)
    on = _predict(store, backend="llama.cpp-cuda", **kw)
    off = _predict(store, backend="llama.cpp-cuda (no FA)", **kw)
    short_on = _predict(store, backend="llama.cpp-cuda", **{**kw, "prompt_tokens": 256})
    short_off = _predict(store, backend="llama.cpp-cuda (no FA)", **{**kw, "prompt_tokens": 256})
    assert off.prefill_tps < 0.8 * on.prefill_tps  # unfused attention over a 16k prompt
    assert short_off.prefill_tps > 0.9 * short_on.prefill_tps  # a short prompt barely attends
    assert off.decode_tps == pytest.approx(on.decode_tps)
    assert any(a.startswith("Flash attention off") for a in off.assumptions)
    assert not any(a.startswith("Flash attention off") for a in on.assumptions)
    # vLLM runs its own FlashAttention kernels: a llama.cpp flag changes nothing there
    v_on = _predict(store, backend="vllm", **kw)
    v_off = _predict(store, backend="vllm (no FA)", **kw)
    assert v_off.prefill_tps == pytest.approx(v_on.prefill_tps)


def test_flash_attention_off_said_in_words_reaches_the_prediction(store: Store) -> None:
    from advisor.perf.prediction import predict_situation
    from advisor.understand import understand

    base = dict(hardware="RTX 4090", model="llama 3.1 8b", quant="Q4_K_M", backend="llama.cpp", prompt_tokens=16000)
    off = understand(store, Scenario(**base, raw_output="llama-server -m model.gguf --flash-attn off -c 32768"))
    on = understand(store, Scenario(**base))
    assert off.symptoms.flash_attention is False
    assert predict_situation(store, off).prefill_tps < 0.8 * predict_situation(store, on).prefill_tps


# ----------------------------------------------------------------------------- integrated GPUs named in a chat message
@pytest.mark.parametrize("msg,hw_id", [
    ("I use ollama on my laptop with Intel Iris Xe graphics and 16GB RAM. gemma 3 4b gets about 8 tok/s, is that normal?",
     "intel-iris-xe-i7-1270p-igpu"),
    ("my laptop has intel iris xe, running gemma3:4b in ollama at 8 tokens per second", "intel-iris-xe-i7-1270p-igpu"),
    ("Radeon 780M laptop with ollama, llama 3.1 8b gets 9 tok/s", "amd-radeon-780m-igpu"),
    ("my mini pc has a 780M iGPU, can it run mistral 7b?", "amd-radeon-780m-igpu"),
    ("radeon 890m, qwen3 8b q4, 20 tok/s normal?", "amd-radeon-890m-igpu"),
    ("Lunar Lake laptop with Arc 140V, llama.cpp vulkan, qwen3 8b q4_k_m, how fast?", "intel-arc-140v-igpu"),
    ("AMD Radeon 680M, llama 3.2 3b", "amd-radeon-680m-igpu"),
])
def test_an_integrated_gpu_named_in_a_message_is_the_machine(store: Store, msg: str, hw_id: str) -> None:
    r = service.ask(store, msg)
    if r.question is not None and r.question.field == "memory_gb":
        r = service.ask(store, "16 GB", r.facts)  # the Arc 140V ships in two sizes: asked, like a Mac
    assert r.verdict is not None and r.verdict.prediction is not None, r.reply
    assert r.verdict.prediction.hardware["id"] == hw_id


def test_a_size_in_millions_is_still_a_model_size_when_it_says_so(store: Store) -> None:
    r = service.ask(store, "a 500M parameter model on an RTX 4090")
    assert r.verdict is not None and r.verdict.prediction.model["params_b"] == pytest.approx(0.5)
    r = service.ask(store, "the 5m wait for the first token on my RTX 4090 with llama 3.1 8b")
    assert r.verdict is not None and r.verdict.prediction.model["params_b"] == pytest.approx(8.03, abs=0.1)


# ----------------------------------------------------------------------------- the machine named on a line beside a paste
_TABLE = ("| model | size | params | backend | ngl | test | t/s |\n| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
          "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | pp512 | 1180.00 ± 5 |\n"
          "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 55.00 ± 0.2 |\n")


@pytest.mark.parametrize("line,hw_id", [("RTX 3060 12GB", "nvidia-rtx-3060"), ("on my 4090", "nvidia-rtx-4090"),
                                        ("RX 7900 XTX", "amd-rx-7900-xtx")])
def test_a_short_line_naming_the_machine_beside_a_paste_is_read(store: Store, line: str, hw_id: str) -> None:
    from ui.handlers import import_paste_with_facts

    table = _TABLE.replace("CUDA", "ROCm") if hw_id.startswith("amd") else _TABLE  # a CUDA run is not a Radeon's (round 31)
    msg, verdict, _facts = import_paste_with_facts(store, table + line, None, None, None)
    assert verdict is not None and verdict.prediction is not None, msg
    assert verdict.prediction.hardware["id"] == hw_id
    assert "not understood" not in msg


def test_tool_lines_beside_a_paste_are_not_read_as_words() -> None:
    from advisor.intake import own_words

    assert own_words(_TABLE + "build: 8d5c3b2 (4410)") == ""
    assert own_words(_TABLE + "RTX 3060 12GB") == "RTX 3060 12GB"


def test_flash_attention_off_in_a_message_is_judged_and_fixed_first(store: Store) -> None:
    r = service.ask(store, "RTX 4090, llama.cpp -fa 0, llama 3.1 8b q4_k_m, 32000 token prompts, prefill is 1300 "
                           "tok/s, is that normal?")
    v = r.verdict
    assert v.status == "normal"  # 1,300 tok/s is what a 4090 does without flash attention at 32k (about 1,320)
    assert 1000 < v.prediction.prefill_tps < 1700
    assert v.fixes[0].id == "flash_attention" and "× prefill" in v.fixes[0].predicted_effect
    assert v.fixes[0].speedup > 2
    r = service.ask(store, "RTX 4090 llama-server with flash attention off, llama 3.1 8b q4_k_m, my 30k-token prompts "
                           "take forever")
    assert r.verdict.fixes[0].id == "flash_attention"


def test_the_memory_note_names_the_kv_cache_when_that_is_what_does_not_fit(store: Store) -> None:
    # llama 3.1 8B Q4_K_M is ~5 GB; 100k tokens of its KV cache (128 KB per token at f16) is ~13 GB more
    p = _predict(store, hardware="Mac mini M4", model="llama 3.1 8b", quant="Q4_K_M", prompt_tokens=100000)
    note = _memory_note(p)
    assert p.memory.total_gb == 32 and "with its KV cache (100,300 tokens)" in note and "16 and 24 GB" in note
    big = _predict(store, hardware="Strix Halo", model="llama 3.1 70b", quant="Q4_K_M")
    assert "holds this model;" in _memory_note(big)  # the weights themselves are what the 32 GB cannot hold


def test_ollama_on_an_igpu_is_told_to_turn_on_its_vulkan_backend(store: Store) -> None:
    r = service.ask(store, "Radeon 780M mini pc, ollama, llama 3.1 8b, is it fast?")
    best = r.verdict.fixes[0]
    assert best.id == "gpu_offload" and "OLLAMA_VULKAN=1" in best.title and best.speedup > 1.2
    r = service.ask(store, "RTX 4090, ollama, llama 3.1 8b, 60 tok/s is it normal?")
    assert not any("OLLAMA_VULKAN" in f.title for f in r.verdict.fixes)
