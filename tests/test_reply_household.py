"""Issue 18, a household reply: real models that fit, no bare jargon, the person's own tools, thin margins.

Every case goes through the chat path (:func:`advisor.service.ask`) or the diagnosis it calls, and
asserts the values a person reads.
"""

from __future__ import annotations

import re

import pytest

from advisor import service
from advisor.diagnose import fit
from advisor.diagnose.context import build_ctx
from advisor.diagnose.setup import SETUP, _placement_check, checks
from advisor.diagnose.tools import TOOLS, platform_of
from advisor.models import Fix, Scenario
from advisor.render.plain import gloss, quant_words
from advisor.render.reply import visible_words
from advisor.resolve import resolve_scenario
from advisor.understand import situation_from_resolved
from knowledge import catalog

_DETAILS = re.compile(r"<details>.*?</details>", re.S)


def _visible(md: str) -> str:
    return _DETAILS.sub("", md)


def _ask(store, *msgs: str):
    facts, r = None, None
    for m in msgs:
        r = service.ask(store, m, facts)
        facts = r.facts
    return r


def _verdict(store, **kw):
    return service.diagnose_scenario(store, Scenario(**kw))


def _labels(store) -> set[str]:
    return {fit.model_label(m) for m in catalog.all_models(store).values()}


# --- 1 and 6: a model too big gets real, named models that fit, said once --------------------------------
TOO_BIG = [
    ("MacBook Air M2 16GB", "gemma 3 27b", None),
    ("Mac mini M4 16GB", "qwen3 32b", "q4_k_m"),
    ("RTX 3060 12GB", "llama 3.1 70b", "q4_k_m"),
    ("MacBook Air M2 8GB", "qwen3 14b", "q8_0"),
    ("RTX 4090", "llama 3.3 70b", "q4_k_m"),
    ("RTX 4060 8GB", "mistral small 24b", "q4_k_m"),
    ("Mac Studio M2 Ultra 64GB", "qwen3 235b", "q4_k_m"),
]


@pytest.mark.parametrize("hw,model,quant", TOO_BIG)
def test_larger_than_the_machine_gets_a_named_model_that_fits(store, hw, model, quant):
    v = _verdict(store, hardware=hw, model=model, quant=quant)
    p = v.prediction
    assert p is not None and not p.memory.fits and p.memory.required_gb > p.memory.total_gb
    top = v.fixes[0]
    assert top.id in ("smaller_model", "fit_in_memory", "quantization"), [f.id for f in v.fixes]
    assert "GPU memory limit" not in top.title and top.id not in ("fix_configuration", "gpu_offload")
    assert top.fits_with_margin is True and top.margin_gb is not None and top.margin_gb >= fit.margin_needed(
        p.memory.usable_gb) - 0.01
    if top.id == "smaller_model":
        names = re.match(r"Use a smaller model that fits: (.+) at (\S+)$", top.title)
        assert names, top.title
        for name in names.group(1).split(" or "):
            assert name in _labels(store), name  # a real catalog model, never "~13.7B"
        need = re.match(r"(.+?) needs ([\d.]+) GB of ([\d.]+) GB usable", top.predicted_effect)
        assert need and need.group(1) == names.group(1).split(" or ")[0], top.predicted_effect
        assert float(need.group(2)) <= p.memory.usable_gb - fit.margin_needed(p.memory.usable_gb) + 0.05
        assert "~" not in top.title  # the size is said once, in the effect
    assert not re.search(r"~\d+(\.\d+)?B\b", top.title)


@pytest.mark.parametrize("hw,model,rate,engine", [
    ("MacBook Air M2 16GB", "gemma 3 27b", 1.2, "ollama"), ("Mac mini M4 16GB", "qwen3 32b", 0.8, "lm studio"),
    ("MacBook Air M2 8GB", "llama 3.1 70b", 0.1, "llama.cpp"), ("RTX 3060 12GB", "qwen3 30b a3b", 14.0, "ollama"),
    ("RTX 4060 8GB", "gemma 3 27b", 2.0, "llama.cpp -ngl 99"), ("Mac Studio M2 Ultra 64GB", "qwen3 235b", 3.0, "mlx")])
def test_larger_than_the_machine_with_a_measured_rate(store, hw, model, rate, engine):
    v = _verdict(store, hardware=hw, model=model, backend=engine, measured_decode_tps=rate)
    p = v.prediction
    assert p is not None and p.memory.required_gb > p.memory.total_gb
    if v.fixes[0].remedy == "moe_expert_offload":  # a MoE on a card keeps its model: its experts go to system RAM first
        assert p.hardware["kind"] == "discrete_gpu" and "a3b" in model
        assert any(f.id in ("smaller_model", "fit_in_memory", "quantization") and f.fits_with_margin for f in v.fixes)
    else:
        assert v.fixes[0].id in ("smaller_model", "fit_in_memory", "quantization") and v.fixes[0].fits_with_margin
    assert not any("GPU memory limit" in f.title for f in v.fixes)
    assert not any(f.id in ("gpu_offload", "fix_configuration") and "back to" in f.predicted_effect for f in v.fixes)


@pytest.mark.parametrize("hw,first", [("MacBook Air 8GB", "Llama 3.2 3B"), ("a Mac with 16GB", "Llama 3.1 8B"),
                                      ("a GPU with 12GB", "Qwen3 14B")])
def test_unpinned_machine_with_its_memory_still_gets_named_models(store, hw, first):
    v = _verdict(store, hardware=hw, model="llama 3.1 70b", quant="q4_k_m")
    assert v.prediction is None and v.fixes[0].id == "smaller_model" and v.fixes[0].fits_with_margin
    assert v.fixes[0].title.startswith(f"Use a smaller model that fits: {first} or ")
    assert "GB usable" in v.fixes[0].predicted_effect
    assert "gpu_offload" not in [f.id for f in v.fixes]  # no "every layer on the GPU, back to full speed"


def test_sixteen_gb_mac_gemma_27b_names_gemma_12b_first(store):
    r = _ask(store, "I have a MacBook Air M2 with 16 GB. Will Gemma 3 27B run?")
    vis = _visible(r.reply)
    line = next(x for x in vis.split("\n\n") if x.startswith("**Best fix:**"))
    # The same line first, then the largest of the current lines (the which-model shortlists): Qwen3.5 9B
    assert "Use a smaller model that fits: Gemma 3 12B or Qwen3.5 9B at Q4_K_M (about 4.9 bits per weight" in line
    size = re.search(r"4-bit format\) — Gemma 3 12B needs ([\d.]+) GB of 10\.7 GB usable", line)
    assert size and 8.0 <= float(size.group(1)) <= 9.2, line  # the size said once, not "~8.5 GB — … needs 8.5 GB"
    assert line.count(f"{size.group(1)} GB") == 1 and "~" not in line
    assert line.lower().count("fits") == 1  # said once (was "Pick a model that fits …: use a model that fits")
    assert "13.7B" not in r.reply


def test_household_title_is_said_once(store):
    v = _verdict(store, hardware="MacBook Air M2 8GB", model="llama 3.1 8b", quant="q8_0", measured_decode_tps=0.4,
                 question="the kids use it for homework and it is painfully slow")
    t = v.fixes[0].title
    assert t.startswith(("Download a more compressed version", "Use a smaller model"))
    assert t.lower().count("fit") <= 1 and "make it fit" not in t.lower()
    assert not re.search(r": [a-z]Q\d", t)  # a format name keeps its case ("IQ3_M", not "iQ3_M")


def test_fitting_models_are_current_and_leave_room(store):
    hw = catalog.get_hardware(store, "apple-m2-10gpu", memory_gb=16)
    like = catalog.all_models(store)["google/gemma-3-27b-it"]
    got = fit.fitting_models(store, hw, 4.8944, context_tokens=800, like=like, below_b=27)
    assert [c.label for c in got] == ["Gemma 3 12B", "Qwen3.5 9B"]  # the same line, then the current lines first
    assert all(c.usable_gb - c.required_gb >= 1.5 for c in got)
    labels = {fit.model_label(m) for m in fit._current(list(catalog.all_models(store).values()))}
    assert "Llama 2 13B" not in labels and "Qwen2.5 14B" not in labels and "Gemma 2 27B" not in labels
    assert {"Qwen3 14B", "Llama 3.1 8B", "Gemma 3 12B", "Phi-4 14B"} <= labels


@pytest.mark.parametrize("mid,label", [("Qwen/Qwen3-14B", "Qwen3 14B"), ("google/gemma-3-12b-it", "Gemma 3 12B"),
                                       ("Qwen/Qwen3-30B-A3B", "Qwen3 30B-A3B"), ("openai/gpt-oss-20b", "gpt-oss 20B-A3.6B"),
                                       ("meta-llama/Llama-3.1-8B", "Llama 3.1 8B"),
                                       ("mistralai/Mistral-Small-24B-Instruct-2501", "Mistral Small 3 24B"),
                                       ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "Llama 4 109B-A17B")])
def test_model_labels(store, mid, label):
    assert fit.model_label(catalog.all_models(store)[mid]) == label


# --- 4: a thin margin is never the top fix, and says so --------------------------------------------------
def test_headroom_rule():
    assert fit.margin_needed(16.0) == 1.5 and fit.margin_needed(5.3) == pytest.approx(0.795)
    assert fit.roomy(14.4, 16.0) and not fit.roomy(15.9, 16.0)
    assert fit.thin_words(15.9, 16.0).startswith("only 0.1 GB to spare — too thin")
    assert fit.thin_words(10.0, 16.0) == ""


def test_24gb_mac_raises_the_limit_before_a_thin_format(store):
    r = _ask(store, "My family has a Mac mini M4 with 16GB. Can it run Gemma 3 27B for homework help?",
             "what about the 24GB one?")
    v = r.verdict
    assert v is not None and v.fixes[0].id == "fix_configuration"
    # 24 GB: macOS keeps 15 % (3.6 GB), the GPU may take 20.4 GB = 20889 MB
    assert "iogpu.wired_limit_mb=20889" in v.fixes[0].title and v.fixes[0].margin_gb == pytest.approx(2.2, abs=0.05)
    assert "2.2 GB to spare" in _visible(r.reply)
    for f in v.fixes[1:]:
        if f.fits_with_margin is False and f.margin_gb is not None and f.margin_gb >= 0:
            assert "too thin" in f.predicted_effect


def test_a_thin_gpu_limit_raise_is_not_the_top_fix(store):
    # Q6_K: raised to 13 GB (macOS keeps 3 of 16), 0.5 GB would be left: too thin to lead
    v = _verdict(store, hardware="MacBook Air M2 16GB", model="phi-4", quant="q6_k")
    raise_ = next(f for f in v.fixes if "GPU memory limit" in f.title)
    assert raise_.fits_with_margin is False and raise_.margin_gb == pytest.approx(0.51, abs=0.05)
    assert "but only 0.5 GB to spare — too thin" in raise_.predicted_effect
    assert v.fixes[0].id == "fit_in_memory" and "Q4_K_S" in v.fixes[0].title and v.fixes[0].fits_with_margin
    ids = [f.id for f in v.fixes]
    assert ids.index("fit_in_memory") < ids.index("smaller_model") < ids.index("more_bandwidth")  # format, model, buy


@pytest.mark.parametrize("hw,model", [("Mac mini M4 24GB", "qwen3 30b a3b"), ("RTX 3060 12GB", "mistral small 24b"),
                                      ("Mac mini M4 24GB", "qwen3 32b"), ("RTX 4060 8GB", "qwen3 14b")])
def test_a_thin_format_is_not_the_top_fix_and_says_too_thin(store, hw, model):
    v = _verdict(store, hardware=hw, model=model, quant="q8_0")
    thin = [f for f in v.fixes if f.id == "fit_in_memory" and f.fits_with_margin is False]
    assert thin and "too thin" in thin[0].predicted_effect
    assert v.fixes[0].fits_with_margin is True  # something that really works comes first
    assert v.fixes.index(thin[0]) > 0


def test_thin_fit_today_is_not_comfortable(store):
    r = _ask(store, "Mac mini M4 16GB, Qwen3 14B")
    vis = _visible(r.reply)
    assert "fits, but only 1.2 GB to spare — too thin" in vis
    assert "Nothing you need to change" not in vis and "**Best fix:**" in vis


# --- 2: no jargon without a plain explanation in what is seen --------------------------------------------
JARGON = ["KV cache", "prefill", "decode", "TTFT", "ITL", "roofline", "ridge point", "MdAPE", "bits per weight",
          "compute-bound", "bandwidth-bound"]
FIRSTS = [
    "MacBook Air M2 16GB, llama 3.1 8b, it writes 12 tok/s",
    "RTX 4090 with Llama 3.1 8B Q4_K_M, prompts of 8000 tokens, the first word takes forever",
    "I have a MacBook Air M2 with 16 GB. Will Gemma 3 27B run?",
    "RTX 3060 12GB, qwen2.5 14b q8_0, 4 tok/s",
    "RX 7900 XTX, llama 3.1 8b, ollama is slow 5 tok/s",
    "MacBook Air M2 8GB, llama 3.1 8b q8_0, painfully slow, for homework",
    "Mac mini M4 24GB with gemma 3 27b for my family",
    "RTX 4090, llama 3.1 8b, llama.cpp -ngl 20, 30 tok/s",
]


def _explained_first(text: str, term: str) -> bool:
    m = re.search(rf"(?<![\w`-]){re.escape(term)}(?:s|d|ed)?(?![\w`-])", text, re.I)
    if m is None:
        return True
    before = text[: m.start()]
    inside = before.count("(") > before.count(")")
    return inside or text[m.end():].startswith((" (", "** (", " — a "))


@pytest.mark.parametrize("msg", FIRSTS)
def test_first_reply_explains_every_field_term_it_shows(store, msg):
    r = _ask(store, msg)
    vis = re.sub(r"`[^`]*`", "", _visible(r.reply))
    for term in JARGON:
        assert _explained_first(vis, term), (term, vis)
    for q in re.findall(r"(?<![\w(])((?:I?Q\d_[A-Z0-9_]+))(?![\w])", vis)[:1]:
        assert re.search(rf"{q} \((?:about [\d.]+ bits per weight — )?an? \d+-bit format\)", vis), (q, vis)
    assert "4.8944" not in vis


def test_format_gloss_words():
    assert quant_words("Q4_K_M", 4.8944) == "Q4_K_M (about 4.9 bits per weight — a 4-bit format)"
    assert quant_words("Q8_0", 8.5) == "Q8_0 (about 8.5 bits per weight — an 8-bit format)"
    assert quant_words("IQ3_M") == "IQ3_M (a 3-bit format)"
    seen: set[str] = set()
    out = gloss("**Decode** runs at 5 tok/s (≈ 4 words a second); later decode and `-ctk q8_0` KV cache", seen)
    assert out.startswith("**Decode (writing the answer)** runs at 5 tok/s (≈ 4 words")  # tok/s already explained
    assert out.count("(writing the answer)") == 1 and "`-ctk q8_0`" in out
    assert "KV cache (the model's memory of the conversation so far)" in out
    assert gloss("prompt processing (prefill) 40 tok/s", set()).startswith("prompt processing (prefill) 40 tok/s (")
    assert gloss("≈ 2.0× decode (4.87 → 9.65 tok/s)", {"tok/s"}) == "≈ 2.0× decode (writing the answer: 4.87 → 9.65 tok/s)"
    table = "| | decode tok/s | KV cache |\n|---|---:|---:|\n| Q4_K_M | 5 | 1 GB |"
    assert gloss(table, set()) == table  # columns stay intact


# --- 3: tools for the person's platform -------------------------------------------------------------------
PLATFORMS = [("MacBook Air M2 16GB", "mac", "Activity Monitor", "nvidia-smi"),
             ("RTX 4090", "nvidia", "nvidia-smi", "Activity Monitor"),
             ("RX 7900 XTX", "amd", "rocm-smi", "nvidia-smi"),
             ("Raspberry Pi 5 8GB", "cpu", "free -h", "nvidia-smi")]


def _ctx(store, **kw):
    return build_ctx(store, situation_from_resolved(resolve_scenario(store, Scenario(**kw))))


@pytest.mark.parametrize("hw,plat,tool,never", PLATFORMS)
def test_every_check_names_this_platforms_tool(store, hw, plat, tool, never):
    c = _ctx(store, hardware=hw, model="llama 3.1 8b", quant="q4_k_m")
    assert platform_of(c) == plat
    words = " ".join(checks(c, chk) for _t, _w, chk in SETUP.values() if "{" in chk) + " " + _placement_check(c)
    assert tool in words
    if plat != "nvidia":
        assert never not in words.replace("`nvidia-smi topo -m`", "")


@pytest.mark.parametrize("hw,tool,never", [("MacBook Air M2 16GB", "Activity Monitor", "nvidia-smi"),
                                           ("RX 7900 XTX", "rocm-smi", "nvidia-smi"),
                                           ("RTX 4070", "nvidia-smi", "Activity Monitor")])
def test_offload_fix_in_the_chat_names_the_platform_tool(store, hw, tool, never):
    v = _verdict(store, hardware=hw, model="llama 3.1 8b", quant="q4_k_m", backend="llama.cpp -ngl 10",
                 measured_decode_tps=3.0)
    text = " ".join(f.why + " " + f.title for f in v.fixes) + " " + v.explanation
    assert tool in text and never not in text


@pytest.mark.parametrize("hw,plat", [("Intel Arc A770", "intel"), ("laptop with Radeon 780M", "amd"),
                                     ("Jetson AGX Orin 64GB", "nvidia"), ("ddr5-5600 dual channel", "cpu"),
                                     ("some old PC", "unknown"), ("Intel Core i7-12700H laptop", "cpu"),
                                     ("iMac 2019 Intel i9", "mac"), ("Mac Studio M2 Ultra 192GB", "mac")])
def test_platform_of_the_machine(store, hw, plat):
    c = _ctx(store, hardware=hw, model="llama 3.1 8b", quant="q4_k_m")
    assert platform_of(c) == plat
    if plat in ("mac", "amd", "cpu", "intel"):
        assert "nvidia-smi" not in " ".join(TOOLS[k][plat] for k in TOOLS)


def test_unknown_platform_lists_the_alternatives():
    assert "nvidia-smi" in TOOLS["gpu_memory"]["unknown"] and "Activity Monitor" in TOOLS["gpu_memory"]["unknown"]
    assert all(set(v) == {"mac", "nvidia", "amd", "intel", "cpu", "unknown"} for v in TOOLS.values())


def test_swapping_check_fits_the_mac(store):
    v = _verdict(store, hardware="MacBook Air M2 16GB", model="llama 3.1 8b", quant="q4_k_m",
                 question="it is swapping like crazy")
    assert "memory_pressure" in v.explanation or "Memory Pressure" in v.explanation
    assert "free -h" not in v.explanation


# --- 5: skipped lines are quoted -------------------------------------------------------------------------
BENCH = """| model                          |       size |     params | backend    | ngl |          test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ------------: | -------------------: |
| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |         pp512 |     9000.00 ± 20.00 |
| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |        127.00 ± 0.50 |
"""


def test_a_skipped_line_is_quoted_in_the_chat():
    from knowledge.store import Store

    own = Store(":memory:")  # a paste is stored: not in the session's shared store
    r = _ask(own, "RTX 4090 with llama 3.1 8b", BENCH + "my cat walked on the keyboard <b>hello</b> *x*\n")
    head = r.reply.split("\n\n")[0]
    assert "1 line was not understood and ignored: “my cat walked on the keyboard ‹b›hello‹/b› \\*x\\*”." in head
    assert "line(s)" not in r.reply and "llama-bench-md" not in head


def test_many_skipped_lines_are_shortened_and_counted(store):
    junk = "\n".join(f"noise line {i} " + "z" * 90 for i in range(5))
    out = service.import_output(store, BENCH + junk, save=False)
    assert "5 lines were not understood and ignored: “noise line 0 zzz" in out.message
    assert out.message.endswith("…” (and 2 more).")
    first = re.search(r"“([^”]*)”", out.message)
    assert first is not None and len(first.group(1)) == 60


# --- 7: household sense when the top fix is a purchase ---------------------------------------------------
def test_purchase_first_also_says_what_works_without_buying(store):
    from advisor.models import Verdict
    from advisor.render.reply import answer_markdown

    base = _verdict(store, hardware="MacBook Air M2 16GB", model="llama 3.1 8b", quant="q4_k_m",
                    prompt_tokens=150, question="how long until the first word?")
    assert base.fixes[0].id == "more_compute" and "smaller_model" in [f.id for f in base.fixes]
    # said as a complaint, the same set-up is explained (what the machine does) with the same fixes and the same
    # "without buying" line
    felt = _verdict(store, hardware="MacBook Air M2 16GB", model="llama 3.1 8b", quant="q4_k_m",
                    prompt_tokens=150, question="the first word takes ages")
    assert felt.felt_slow and felt.fixes[0].id == "more_compute"
    assert re.search(r"\*\*Without buying anything:\*\* Use a smaller model: \S", _visible(answer_markdown(felt)))
    slow = base.prediction.model_copy(update={"decode_tps": 3.0, "decode_tps_per_seq": 3.0})
    v = Verdict(**{**base.model_dump(), "prediction": slow.model_dump()})
    vis = _visible(answer_markdown(v))
    assert "**Best fix:** A computer with a faster graphics chip" in vis
    assert re.search(r"\*\*Without buying anything:\*\* Use a smaller model: \S", vis)
    comfy = _visible(answer_markdown(base))
    # comfortable: nothing to change, and no "faster still" that buys hardware or swaps the model they chose
    assert "**Nothing you need to change.**" in comfy
    assert "Faster still: Use a smaller model" not in comfy and "Faster still: A computer" not in comfy


def test_nothing_cheaper_means_no_without_buying_line(store):
    from advisor.models import Verdict
    from advisor.render.reply import answer_markdown

    v = _verdict(store, hardware="MacBook Air M2 16GB", model="llama 3.1 8b", quant="q4_k_m")
    buy = Fix(id="more_bandwidth", title="A faster Mac", predicted_effect="2× decode", why="bandwidth", speedup=2.0)
    v2 = Verdict(**{**v.model_dump(), "fixes": [buy.model_dump()], "status": "below_expected"})
    assert "Without buying" not in answer_markdown(v2)


# --- 8: lengths ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("msg", FIRSTS)
def test_first_reply_is_short(store, msg):
    r = _ask(store, msg)
    n = visible_words(r.reply)
    assert 40 <= n <= 250, n


@pytest.mark.parametrize("first,then,changed", [
    ("My family has a Mac mini M4 with 16GB. Can it run Gemma 3 27B?", "what about the 24GB one?",
     "**Changed:** memory 16 GB → 24 GB."),
    ("MacBook Air M2 16GB with llama 3.1 8b", "actually it has 24GB", "**Changed:** memory 16 GB → 24 GB."),
    ("RTX 4090 with Llama 3.1 8B Q4_K_M", "what about qwen3 14b?", "**Changed:** model"),
])
def test_followup_is_much_shorter_and_says_what_changed(store, first, then, changed):
    a = _ask(store, first)
    b = _ask(store, first, then)
    assert b.reply.startswith(changed), b.reply[:120]
    assert visible_words(b.reply) <= 0.7 * visible_words(a.reply), (visible_words(b.reply), visible_words(a.reply))
    assert re.search(r"(still|now) (does not )?fits?|still fits", b.reply)
