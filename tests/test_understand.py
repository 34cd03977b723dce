"""Understanding: every message, paste and flag becomes one resolved Situation (issue 12).

The tables in ``tests/understand_table.py`` hold messages as new users write them and the facts each one
states; every fact must come out right, through ``intake.update`` (the chat) and ``understand`` (the
Situation everything downstream reads).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from advisor import intake, service
from advisor.errors import InputError
from advisor.models import SCENARIO_KEYS, Scenario, parse_scenario
from advisor.understand import Situation, understand
from knowledge.store import Store

sys.path.insert(0, str(Path(__file__).parent))
from understand_table import COMPARE, HARDWARE, LENGTHS, MEASURED, MIXED, PHRASINGS, TWO_TURNS  # noqa: E402


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def _got(store: Store, facts: Scenario) -> dict[str, Any]:
    sit = understand(store, facts)
    d = facts.model_dump()
    d["hw"] = re.sub(r"x\d+$", "", sit.hardware.id) if sit.hardware is not None else None
    d["model_id"] = sit.model.id if sit.model is not None else None
    d["quant_name"] = sit.quant.name if sit.quant is not None else None
    d["mixed"] = [h.id for h in sit.machine.mixed] if sit.machine is not None else []
    d["_missing"] = intake.missing(facts, store)
    return d


def _wrong(want: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    bad: dict[str, Any] = {}
    for k, v in want.items():
        if k == "missing":
            if v not in got["_missing"]:
                bad[k] = got["_missing"]
            continue
        g = got.get(k, "<no such field>")
        if isinstance(v, float) and isinstance(g, (int, float)):
            if abs(g - v) > 0.01 * max(1.0, abs(v)):
                bad[k] = g
        elif isinstance(v, tuple) and g is not None:
            if tuple(g) != v:
                bad[k] = g
        elif g != v:
            bad[k] = g
    return bad


def test_the_tables_are_big_enough() -> None:
    assert len(PHRASINGS) + len(TWO_TURNS) >= 150
    assert min(len(LENGTHS), len(MEASURED), len(HARDWARE), len(COMPARE), len(MIXED)) >= 9


@pytest.mark.parametrize(("text", "want"), PHRASINGS, ids=[p[0][:50] for p in PHRASINGS])
def test_first_message(store: Store, text: str, want: dict[str, Any]) -> None:
    r = intake.update(None, text, store)
    got = _got(store, r.facts)
    assert not _wrong(want, got), (_wrong(want, got), r.notes, r.not_understood)


@pytest.mark.parametrize(("first", "second", "want"), TWO_TURNS, ids=[t[1][:40] for t in TWO_TURNS])
def test_two_turns(store: Store, first: str, second: str, want: dict[str, Any]) -> None:
    r1 = intake.update(None, first, store)
    r2 = intake.update(r1.facts, second, store)
    got = _got(store, r2.facts)
    assert not _wrong(want, got), (_wrong(want, got), r2.notes)
    # A correction changes only what it names: every other stated fact stays.
    named = {c[0] for c in r2.changes}
    for f, v in r1.facts.model_dump().items():
        if v is not None and f not in named:
            assert getattr(r2.facts, f) == v, f


def test_changes_say_old_and_new(store: Store) -> None:
    r1 = intake.update(None, "M2 Max 64GB, gemma 3 12b", store)
    r2 = intake.update(r1.facts, "and a 27B model?", store)
    assert ("model", "gemma 3 12b", "gemma 3 27B") in r2.changes or any(
        f == "model" and old == "gemma 3 12b" and "27" in new for f, old, new in r2.changes)
    assert all(f != "memory_gb" for f, _, _ in r2.changes)
    r3 = intake.update(r2.facts, "actually it has 96GB", store)
    assert r3.changes == [("memory_gb", 64.0, 96.0)]


def test_reply_says_what_changed(store: Store) -> None:
    a = service.ask(store, "RTX 4060 Ti 8GB, qwen3 8b, prompts of 2k tokens")
    b = service.ask(store, "what about the 16GB one?", a.facts)
    assert b.reply.startswith("**Changed:** memory 8 GB → 16 GB.")
    assert b.changes == [("memory_gb", 8.0, 16.0)]
    assert b.verdict is not None and b.verdict.prediction is not None
    assert b.verdict.prediction.memory.total_gb == pytest.approx(16 * 2**30 / 1e9)  # 16 GiB of VRAM, in decimal GB


# ----------------------------------------------------------------------------- the Situation
def test_situation_machine_layout(store: Store) -> None:
    f = intake.update(None, "2x RTX 3090 over PCIe 4.0 x8, vllm tensor parallel 2, 64 GB system RAM, llama 3.1 70b "
                            "AWQ, 6 users", store).facts
    sit = understand(store, f)
    m = sit.machine
    assert m is not None and m.count == 2 and m.hardware is not None and m.hardware.n_devices == 2
    assert (m.interconnect, m.pcie_lanes, m.layout, m.tensor_parallel) == ("pcie4", 8, "tensor_parallel", 2)
    assert m.system_ram_gb == 64.0 and sit.workload.users == 6 and sit.engine == "vllm"


def test_situation_mixed_box(store: Store) -> None:
    sit = understand(store, intake.update(None, "3090 + 3060 in one box, llama 3.1 8b", store).facts)
    assert sit.machine is not None and sit.machine.count == 2
    assert [h.id for h in sit.machine.mixed] == ["nvidia-rtx-3090", "nvidia-rtx-3060"]
    hw = sit.hardware
    assert hw is not None and hw.id == "nvidia-rtx-3090+nvidia-rtx-3060" and hw.n_devices == 2
    # 24 + 12 GB; layers split 2:1 by memory, so a token reads 2/3 at 936 GB/s and 1/3 at 360 GB/s.
    assert hw.memory_gb * hw.n_devices == 36.0
    assert abs(hw.bandwidth_gbs - 1 / (2 / 3 / 936 + 1 / 3 / 360)) < 0.1
    assert any("Mixed GPUs" in a and "36 GB in all" in a for a in sit.assumption_texts())


def test_situation_count_from_facts_alone(store: Store) -> None:
    sit = understand(store, Scenario(hardware="H100 SXM", gpu_count=8, model="llama 3.3 70b"))
    assert sit.hardware is not None and sit.hardware.n_devices == 8 and sit.machine is not None
    assert sit.machine.count == 8 and sit.machine.layout == "layer_split"


def test_unresolved_machine_keeps_its_kind(store: Store) -> None:
    f = intake.update(None, "can my Mac run llama 3.1 8b?", store).facts
    sit = understand(store, f)
    assert sit.hardware is None and sit.machine is not None and sit.machine.kind == "apple_soc"
    first = sit.unresolved[0]
    assert first.field == "hardware" and first.blocking and "Mac" in first.reason
    assert intake.missing(f, store) == ["hardware"]


def test_memory_stated_vs_shipped(store: Store) -> None:
    sit = understand(store, Scenario(hardware="MacBook Air M2", memory_gb=20, model="llama 3.1 8b"))
    assert sit.machine is not None and sit.machine.memory_stated_gb == 20 and sit.machine.memory_shipped is False
    sit2 = understand(store, Scenario(hardware="MacBook Air M2", memory_gb=16, model="llama 3.1 8b"))
    assert sit2.machine is not None and sit2.machine.memory_shipped is True


def test_ttft_with_prompt_gives_prefill_rate(store: Store) -> None:
    f = intake.update(None, "M1 Max 32GB, llama 3 8b, 40 seconds before the first word with a 6k prompt", store).facts
    assert f.measured_ttft_s == 40.0 and f.measured_prefill_tps is None  # facts keep what was said
    sit = understand(store, f)
    assert sit.measured.ttft_s == 40.0 and sit.measured.prefill_tps == pytest.approx(150.0)
    assert any("Time to first token" in a.text for a in sit.assumptions)


def test_context_window_is_not_the_prompt(store: Store) -> None:
    f = intake.update(None, "RTX 4090, qwen3 14b, num_ctx 32768", store).facts
    sit = understand(store, f)
    assert sit.workload.context_window == 32768 and "prompt_tokens" not in sit.workload.stated
    assert sit.workload.prompt_tokens == 500


def test_shared_prefix_adds_up(store: Store) -> None:
    sit = understand(store, intake.update(None, "a 2k system prompt plus 500 tokens per request", store).facts)
    assert (sit.workload.shared_prefix_tokens, sit.workload.prompt_tokens) == (2000, 2500)
    only = understand(store, Scenario(shared_prefix_tokens=3000))
    assert only.workload.prompt_tokens == 3500 and only.workload.shared_prefix_tokens == 3000


def test_range_is_kept(store: Store) -> None:
    sit = understand(store, intake.update(None, "documents of 5–10k tokens", store).facts)
    assert sit.workload.prompt_range == (5000, 10000) and sit.workload.prompt_tokens == 7500


def test_aggregate_rate(store: Store) -> None:
    sit = understand(store, intake.update(None, "vllm gives 1200 tok/s aggregate over 32 streams", store).facts)
    assert sit.measured.decode_is_aggregate and sit.measured.streams == 32 and sit.measured.decode_tps == 1200.0


def test_candidates_are_resolved(store: Store) -> None:
    f = intake.update(None, "llama 3.3 70b at 4-bit for 20 engineers: M3 Ultra, two 4090s or an H100 SXM?", store).facts
    assert f.compare_hardware == ["M3 Ultra", "2x RTX 4090", "H100 SXM"]
    sit = understand(store, f)
    assert sit.hardware is not None and sit.hardware.id.startswith("apple-m3-ultra")
    assert [m.hardware.id for m in sit.compare_hardware if m.hardware] == ["nvidia-rtx-4090x2", "nvidia-h100-sxm"]
    f2 = intake.update(None, "Llama 3.1 8B or Gemma 3 12B on my RTX 3060 12GB?", store).facts
    sit2 = understand(store, f2)
    assert sit2.model is not None and sit2.model.id == "meta-llama/Llama-3.1-8B"
    assert [m.id for m in sit2.compare_models] == ["meta-llama/Llama-3.1-8B", "google/gemma-3-12b-it"]


def test_parenthetical_machine_is_not_the_machine(store: Store) -> None:
    f = intake.update(None, "Tesla P40 24GB with exllamav2 (an RTX 3090 in the same box for comparison), "
                            "codellama 34b", store).facts
    assert f.compare_hardware is None and "3090" not in (f.hardware or "")


def test_tensor_parallel_is_not_users(store: Store) -> None:
    f = intake.update(None, "vllm serve qwen3 32b -tp 2 on two 4090s", store).facts
    assert f.tensor_parallel == 2 and f.concurrency is None and f.gpu_count == 2


def test_symptoms_are_read_once(store: Store) -> None:
    sit = understand(store, Scenario(hardware="RTX 4090", model="llama 3.1 8b", backend="llama-server -ngl 20 in Docker"))
    assert sit.symptoms.n_gpu_layers == 20 and sit.symptoms.container and sit.engine == "llama.cpp"


# ----------------------------------------------------------------------------- edges and contracts
def test_facts_round_trip(store: Store) -> None:
    a = service.ask(store, "8x H100 SXM over NVLink, tensor parallel 8, llama 3.3 70b fp8, 1k in / 1k out, 5–10k "
                           "token docs, num_ctx 32768, 200 users at 2 requests per minute each, TTFT 3 s, 900 t/s "
                           "aggregate; M3 Ultra or MI300X?")
    dumped = json.loads(a.model_dump_json())["facts"]
    for key in ("gpu_count", "interconnect", "system_ram_gb", "context_window", "shared_prefix_tokens", "depth",
                "requests_per_minute", "measured_ttft_s", "compare_hardware", "compare_models"):
        assert key in dumped
    back = parse_scenario(dumped, what="facts")
    assert back == a.facts
    b = service.ask(store, "and 300 users?", back)
    assert b.facts.concurrency == 300 and b.facts.gpu_count == 8 and b.facts.context_window == 32768


def test_strict_edges_name_the_unknown_key() -> None:
    with pytest.raises(InputError, match=r"'hardwre' \(did you mean 'hardware'\?\)"):
        parse_scenario({"hardwre": "M2"})
    with pytest.raises(InputError, match="'color'"):
        parse_scenario({"hardware": "M2", "color": "red"})
    with pytest.raises(InputError, match="JSON object"):
        parse_scenario([1, 2])
    assert parse_scenario({k: None for k in SCENARIO_KEYS if k != "hardware_measured"}) == Scenario()


def test_cli_rejects_unknown_key(tmp_path: Path) -> None:
    import subprocess

    p = tmp_path / "s.json"
    p.write_text(json.dumps({"hardware": "RTX 4090", "model": "llama 3.1 8b", "promt_tokens": 500}))
    r = subprocess.run([sys.executable, "-m", "advisor", "diagnose", "--input", str(p), "--json", "--store",
                        str(tmp_path / "x.duckdb")], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "promt_tokens" in r.stdout + r.stderr and "Traceback" not in r.stderr


def test_same_numbers_chat_predict_compare(store: Store) -> None:
    a = service.ask(store, "RTX 4090 with llama 3.1 8b at Q4_K_M, 2000-token prompts, 300-token answers")
    assert a.verdict is not None and a.verdict.prediction is not None
    chat = a.verdict.prediction
    api = service.predict_scenario(store, parse_scenario(json.loads(a.model_dump_json())["facts"]))
    from advisor import compare as cmp

    res = cmp.compare_request(store, cmp.CompareRequest(model="llama 3.1 8b", quant="Q4_K_M", prompt_tokens=2000,
                                                        gen_tokens=300, candidates=["nvidia-rtx-4090"]))
    row = next(c for c in res["candidates"] if c["hardware"]["id"] == "nvidia-rtx-4090")
    assert chat.decode_tps == pytest.approx(api.decode_tps, rel=1e-9)
    assert chat.prefill_tps == pytest.approx(api.prefill_tps, rel=1e-9)
    assert row["decode_tps_per_user"] == pytest.approx(chat.decode_tps, rel=1e-6)
    assert row["prefill_tps"] == pytest.approx(chat.prefill_tps, rel=1e-6)


def test_chat_turn_is_fast(store: Store) -> None:
    msgs = [t for t, _ in PHRASINGS[:60]]
    for m in msgs[:5]:
        service.ask(store, m)  # warm caches
    times = []
    for m in msgs:
        t0 = time.perf_counter()
        service.ask(store, m)
        times.append(time.perf_counter() - t0)
    assert statistics.quantiles(times, n=20)[-1] < 0.15, max(times)


def test_situation_is_frozen(store: Store) -> None:
    sit = understand(store, Scenario(hardware="RTX 4090", model="llama 3.1 8b"))
    assert isinstance(sit, Situation)
    with pytest.raises(Exception):  # noqa: B017 - pydantic raises ValidationError for frozen models
        sit.engine = "ollama"  # type: ignore[misc]


LLAMA_BENCH_4090 = """| model                          |       size |     params | backend    | ngl |          test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ------------: | -------------------: |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         pp512 |     11245.33 ± 45.12 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |        150.12 ± 0.31 |"""


def test_pasted_llama_bench_is_stored_as_llama_cpp() -> None:
    st = Store(":memory:")
    out = service.import_output(st, LLAMA_BENCH_4090, hardware="RTX 4090")
    assert out.format == "llama-bench-md" and out.saved_id
    rows = st.query("SELECT engine, accel FROM results WHERE origin = 'import'")
    assert rows and all((r["engine"], r["accel"]) == ("llama.cpp", "cuda") for r in rows)


@pytest.mark.parametrize(("fmt", "engine"), [("llama-bench-md", "llama.cpp"), ("batched-bench", "llama.cpp"),
                                             ("ollama-verbose", "ollama"), ("mlx-generate", "mlx"),
                                             ("lmstudio", "lm-studio"), ("vllm-bench", "vllm"), ("unknown", None)])
def test_engine_of_format(fmt: str, engine: str | None) -> None:
    from advisor.understand.engine import engine_of_format

    assert engine_of_format(fmt) == engine


def test_pasted_numbers_become_facts() -> None:
    st = Store(":memory:")
    text = ("My M2 Max 32GB with llama3.1:8b on ollama feels slow, is this normal?\n"
            "prompt eval count:    26 token(s)\nprompt eval duration: 120ms\nprompt eval rate:     216.67 tokens/s\n"
            "eval count:           300 token(s)\neval duration:        7.9s\neval rate:            37.97 tokens/s")
    r = service.ask(st, text)
    assert (r.facts.measured_prefill_tps, r.facts.measured_decode_tps) == (216.67, 37.97)
    assert (r.facts.memory_gb, r.facts.backend, r.facts.gen_tokens) == (32.0, "ollama", 300)
    assert r.verdict is not None and r.verdict.measured["decode_tps"] == 37.97
    again = service.ask(st, "and with 5 users?", parse_scenario(json.loads(r.model_dump_json())["facts"]))
    assert again.facts.concurrency == 5 and again.facts.measured_decode_tps == 37.97


def test_list_and_range_facts_survive_the_facts_table(store: Store) -> None:
    """The UI facts table shows every fact as text; the new list/range facts must read back from it."""
    s = Scenario(compare_hardware="['M3 Ultra' '2x RTX 4090']", compare_models="llama 3.1 8b; gemma 3 12b",
                 prompt_range="(5000 10000)")
    assert s.compare_hardware == ["M3 Ultra", "2x RTX 4090"] and s.compare_models == ["llama 3.1 8b", "gemma 3 12b"]
    assert s.prompt_range == (5000, 10000)
    with pytest.raises(ValueError):
        Scenario(prompt_range=(10, 5))


def test_json_hardware_text_is_read_like_chat(store: Store) -> None:
    """A machine described in a JSON field or flag is read by the same reader as the chat."""
    sit = understand(store, Scenario(hardware="2x RTX 3090 24GB, PCIe Gen3 x8", backend="vllm -tp 2",
                                     model="llama 3.1 70b"))
    m = sit.machine
    assert m is not None and m.hardware is not None and m.hardware.id == "nvidia-rtx-3090x2" and m.count == 2
    assert (m.interconnect, m.pcie_lanes, m.layout, m.tensor_parallel) == ("pcie3", 8, "tensor_parallel", 2)
    wordy = understand(store, Scenario(hardware="our workstation: two RTX 3090s (24 GB each) on PCIe Gen3 x8 risers",
                                       model="llama 3.1 70b"))
    assert wordy.hardware is not None and wordy.hardware.id == "nvidia-rtx-3090x2"
    assert wordy.machine is not None and wordy.machine.interconnect == "pcie3" and wordy.machine.pcie_lanes == 8


def test_three_machines_and_no_model_are_compared_on_the_default_model_in_one_reply(tmp_path):
    from advisor.service import ask
    from knowledge.store import Store

    r = ask(Store(":memory:"), "We are 20 engineers using a coding agent with about 8k-token prompts. Should we buy "
                               "an M3 Ultra with 96GB, two RTX 4090s or one H100?")
    # a coding team with no model named: compared on a coding model, said
    assert r.facts.model == "Qwen3 Coder Next" and "Model not stated" in r.reply
    for name in ("M3 Ultra 96 GB", "4090", "H100"):
        assert name in r.reply
