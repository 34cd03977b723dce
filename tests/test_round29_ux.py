"""Round 29 (testers' UX defects): names shown for catalog ids, upgrades that keep the memory, the slow phase named,
planned purchases, hedged memory answers, Intel Macs, Phi-3-mini and "yes, that one", tiny rates, sizes told apart,
multi-socket labels, and a Mac named beside a PC without a GPU."""

from __future__ import annotations

import re

import pytest

from advisor import intake, service
from advisor.models import Scenario
from advisor.render.markdown import fmt_gb_apart, fmt_rate
from knowledge.store import Store


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def _ask(store: Store, *turns: str) -> service.AskResult:
    facts = None
    r = None
    for t in turns:
        r = service.ask(store, t, facts)
        facts = r.facts
    assert r is not None
    return r


# ------------------------------------------------------------------ 1. a generic CPU entry is shown by its name
@pytest.mark.parametrize("msg, name", [
    ("I have a desktop with DDR4-3200 dual channel, no GPU, running llama 3.1 8b q4", "Desktop dual-channel DDR4-3200"),
    ("no gpu, DDR5-6000 dual channel RAM, mistral 7b", "Desktop dual-channel DDR5-6000"),
    ("cpu-ddr5-5600-2ch with llama 3.2 3b", "Desktop dual-channel DDR5-5600"),
    ("a server with 8-channel DDR4-3200, llama 3.1 8b", "Server 8-channel DDR4-3200"),
])
def test_a_cpu_entry_is_shown_by_its_name_in_the_facts(store, msg, name):
    from ui.handlers import facts_rows

    r = service.ask(store, msg)
    assert r.facts.hardware == name
    rows = dict((k, v) for k, v in facts_rows(r.facts.model_dump()))
    assert rows["hardware"] == name
    assert not re.search(r"cpu-ddr\d", r.reply)


@pytest.mark.parametrize("carried", ["cpu-ddr4-3200-2ch", "Desktop dual-channel DDR4-3200", "DDR4-3200 dual channel"])
@pytest.mark.parametrize("said, new", [
    ("actually it's DDR5-6000", "Desktop dual-channel DDR5-6000"),
    ("no wait, DDR5-5600 dual channel", "Desktop dual-channel DDR5-5600"),
])
def test_the_changed_line_names_the_machines(store, carried, said, new):
    facts = Scenario(hardware=carried, model="llama 3.1 8b", quant="Q4_K_M", n_gpu_layers=0)
    r = service.ask(store, said, facts)
    assert r.facts.hardware == new
    assert "cpu-ddr" not in r.reply
    assert f"→ {new}" in r.reply
    # a turn that does not touch the machine reports no machine change for an id carried in
    r2 = service.ask(store, "what about 16 users", facts)
    assert r2.facts.hardware != "cpu-ddr4-3200-2ch" and "cpu-ddr" not in r2.reply
    assert not re.search(r"hardware [^;.]*→", r2.reply)


# ------------------------------------------------------------------ 2. a faster machine keeps at least the memory
def _upgrade(r: service.AskResult) -> str:
    assert r.verdict is not None
    # The machine step: more bandwidth, or more compute where prefill is the slower phase (a 70B on an old Xeon).
    return next(f.title for f in r.verdict.fixes if f.id in ("more_bandwidth", "more_compute"))


@pytest.mark.parametrize("msg, least, card", [
    # a CPU desktop's step is a graphics card whose VRAM holds the model (it keeps its RAM): ``card`` GB at least
    ("desktop DDR4-3200 dual channel 16GB RAM no GPU, llama 3.1 8b q4", 16, 8),
    ("DDR4-3200 dual channel with 32GB, no gpu, gemma 3 12b q4", 32, 12),
    ("no GPU, DDR4-3200 dual channel, 64 GB of RAM, llama 3.2 3b", 64, 4),
    ("DDR4-3200 dual channel, no gpu, llama 3.1 8b q8", 16, 12),  # 9.4 GB needed: 16 GB, not 8
    # no single card holds a 70B: a machine that replaces it keeps at least the 256 GB it has
    ("dual-socket Xeon E5-2690 v4 server, 256GB RAM, llama 3.1 70b q4", 256, None),
])
def test_a_suggested_machine_has_at_least_the_memory_the_person_has_or_needs(store, msg, least, card):
    title = _upgrade(service.ask(store, msg))
    if card is not None:
        assert "graphics card" in title, title
        got = re.search(r"(\d+)\s?GB \(", title)
        assert got is not None and int(got.group(1)) >= card, title
        return
    got = re.search(r"with (?:at least )?(\d+) GB", title)
    assert got is not None, title
    assert int(got.group(1)) >= least, title


# ------------------------------------------------------------------ 3. the headline names the slow phase
@pytest.mark.parametrize("msg, slow, normal", [
    ("M2 Max 38-core 64GB, llama 3.1 8b q4_k_m, llama-bench says pp512 120 tg128 55. normal?", "prefill", "decode"),
    ("RTX 4090, llama 3.1 8b q4_k_m: prompt processing 300 tok/s and generation 130 tok/s", "prefill", "decode"),
    ("RTX 3090 24GB, mistral 7b q4_k_m, prefill 150 tok/s, decode 120 tok/s, is that ok?", "prefill", "decode"),
])
def test_the_headline_names_the_phase_that_is_slow(store, msg, slow, normal):
    r = service.ask(store, msg)
    v = r.verdict
    assert v is not None and v.status == "below_expected"
    assert v.phase_status["prefill_tps"] == "below_expected" and v.phase_status["decode_tps"] == "normal"
    head = r.reply.split("\n", 1)[0]
    assert head.startswith("**Slower than it should be: prefill")
    assert re.search(rf"{slow}\b.*measured, about [\d,.]+ expected; {normal}\b.*is normal", head), head
    expected = f"{v.prediction.prefill_tps:,.0f}"
    assert f"about {expected} expected" in head


def test_a_slow_decode_is_still_named_decode(store):
    r = service.ask(store, "M2 Max 38-core 64GB, llama 3.1 8b q4_k_m, pp512 520 tg128 20, normal?")
    assert r.verdict is not None and r.verdict.phase_status["decode_tps"] == "below_expected"
    head = r.reply.split("\n", 1)[0]
    assert head.startswith("**Slower than it should be: decode")
    assert re.search(r"decode\b.* 20 tok/s\b.*measured, about [\d.]+ expected; prefill\b.* 520 tok/s is normal", head), head


# ------------------------------------------------------------------ 4. a planned GPU runs fully offloaded
@pytest.mark.parametrize("msg, hw", [
    ("I have no GPU yet but plan to buy an RTX 4090, can it run llama 3.1 70b q4?", "nvidia-rtx-4090"),
    ("I have no GPU but I'm thinking of getting a 3090, llama 3.1 8b", "nvidia-rtx-3090"),
    ("no graphics card at the moment, planning to buy an RTX 5090 for qwen3 32b", "nvidia-rtx-5090"),
    ("my PC has no GPU; if I buy a 4060 Ti 16GB can it run llama 3.1 8b?", "nvidia-rtx-4060-ti"),
])
def test_a_planned_gpu_is_answered_with_every_layer_on_it(store, msg, hw):
    r = service.ask(store, msg)
    assert r.facts.n_gpu_layers is None
    v = r.verdict
    assert v is not None and v.prediction is not None
    assert v.prediction.hardware["id"].startswith(hw)
    assert "-ngl 0" not in r.reply and "Running on the CPU only" not in r.reply
    assert "81 of 81 layers run from system RAM" not in r.reply


def test_cpu_only_words_on_a_gpu_box_stay(store):
    r = service.ask(store, "RTX 4090 but no gpu offload, llama 3.1 8b")
    assert r.facts.n_gpu_layers == 0
    r = service.ask(store, "no gpu, 16GB DDR4, llama 3.1 8b")
    assert r.facts.n_gpu_layers == 0 and r.facts.hardware_kind == "cpu"


# ------------------------------------------------------------------ 5. a hedged number answers the memory question
@pytest.mark.parametrize("answer, gb", [
    ("whatever, 32 maybe", 32.0), ("32 i think", 32.0), ("maybe 64", 64.0), ("probably 24GB", 24.0),
    ("i think it's 16", 16.0), ("32?", 32.0), ("hmm, around 24 or so", 24.0),
])
def test_a_hedged_number_answers_the_memory_question(store, answer, gb):
    first = service.ask(store, "Mac mini M4, llama 3.1 8b")
    assert first.question is not None and first.question.field == "memory_gb"
    r = service.ask(store, answer, first.facts)
    assert r.facts.memory_gb == gb
    assert r.verdict is not None and r.verdict.prediction.memory.total_gb == gb


@pytest.mark.parametrize("answer", ["DDR4 -5 GB", "-5 GB", "-5", "−8 GB"])
def test_a_negative_size_is_rejected_with_a_message(store, answer):
    first = service.ask(store, "Mac mini M4, llama 3.1 8b")
    r = service.ask(store, answer, first.facts)
    assert r.facts.memory_gb is None
    assert "cannot be negative" in r.reply
    assert r.reply.count("cannot be negative") == 1


def test_a_negative_size_in_a_first_message_is_not_five_gb(store):
    r = service.ask(store, "no gpu, DDR4 -5 GB, llama 3.1 8b")
    assert r.facts.memory_gb is None and "cannot be negative" in r.reply


# ------------------------------------------------------------------ 6. an Intel Mac is a CPU machine
@pytest.mark.parametrize("msg", [
    "my 2019 intel macbook pro, llama 3.1 8b",
    "intel imac with 32GB, llama 3.1 8b",
    "MacBook Pro 2019 16GB, mistral 7b",
    "my intel mac mini, llama 3.2 3b",
    "2017 iMac 27 inch, llama 3.1 8b",
])
def test_an_intel_mac_is_asked_as_a_cpu_machine(store, msg):
    r = service.ask(store, msg)
    assert r.facts.hardware_kind == "cpu"
    assert r.question is not None and r.question.field == "hardware"
    assert not any(re.search(r"\bM[1-5]\b", c) for c in r.question.choices), r.question.choices
    assert "x86 CPU" in r.reply
    r2 = service.ask(store, "i7-9750H", r.facts)
    assert r2.verdict is not None and r2.verdict.prediction.hardware["kind"] == "cpu"


def test_an_intel_mac_with_its_cpu_model_is_answered(store):
    r = service.ask(store, "2019 intel macbook pro with an i7-9750H and 16GB, llama 3.1 8b")
    assert r.verdict is not None
    assert r.verdict.prediction.hardware["id"] == "intel-core-mobile-8-10"


def test_the_intel_mac_pro_stays_its_catalog_entry(store):
    r = service.ask(store, "Mac Pro 2019 96GB, llama 3.1 8b")
    assert r.verdict is not None and r.verdict.prediction.hardware["id"] == "intel-mac-pro-2019-16c"


# ------------------------------------------------------------------ 7. Phi-3-mini; "yes, that one"
@pytest.mark.parametrize("name", ["phi-3 mini", "phi 3 mini", "phi3-mini", "Phi-3-mini", "phi3:mini",
                                  "phi-3-mini-4k-instruct"])
def test_phi_3_mini_is_recognised(store, name):
    r = service.ask(store, f"RTX 4090, {name}")
    assert r.verdict is not None
    assert r.verdict.prediction.model["id"] == "microsoft/Phi-3-mini-4k-instruct"
    assert r.verdict.prediction.model["params_b"] == pytest.approx(3.82)


@pytest.mark.parametrize("reply", ["yes that one", "yes", "that one", "yep", "sure, that one please", "ok"])
def test_yes_takes_the_one_choice_offered(store, reply):
    first = service.ask(store, "rtx 4090, phi3.5")
    assert first.question is not None and first.question.choices == ["Phi-3.5-mini-instruct"]
    r = service.ask(store, reply, first.facts)
    assert r.facts.model == "Phi-3.5-mini-instruct"
    assert r.verdict is not None and r.verdict.prediction.model["id"] == "microsoft/Phi-3.5-mini-instruct"


def test_an_ordinal_takes_that_choice_and_yes_alone_does_not_guess(store):
    first = service.ask(store, "rtx 4090, phi 3")
    assert first.question is not None and len(first.question.choices) == 2
    second = service.ask(store, "the second one", first.facts)
    assert second.facts.model == first.question.choices[1]
    vague = service.ask(store, "yes", first.facts)
    assert vague.facts.model is None  # two choices: "yes" does not say which
    no = service.ask(store, "no", service.ask(store, "rtx 4090, phi3.5").facts)
    assert no.facts.model is None


# ------------------------------------------------------------------ 8. tiny rates; a model that cannot run
@pytest.mark.parametrize("x, shown", [(0.0137, "0.014"), (0.052, "0.052"), (0.00046, "0.00046"), (0.1, "0.1"),
                                      (3.14, "3.1"), (1234.5, "1,234")])
def test_rates_below_a_tenth_keep_two_significant_figures(x, shown):
    assert fmt_rate(x) == shown


@pytest.mark.parametrize("msg", [
    "MacBook Pro M4 Max 128GB, llama 3.1 405b q4",
    "MacBook Air M2 8GB, llama 3.3 70b q4",
    "Mac mini M4 16GB, qwen3 235b a22b q4",
])
def test_a_model_larger_than_the_machine_is_said_not_to_run(store, msg):
    r = service.ask(store, msg)
    assert r.verdict is not None and not r.verdict.prediction.memory.fits
    assert "0.0 tok/s" not in r.reply and "0.0 words" not in r.reply
    assert r.reply.startswith("**No: it does not fit.")
    assert "In practice it will not run" in r.reply
    rate = re.search(r"will not run:\*\* about ([\d.]+) tok/s", r.reply)
    assert rate is not None and float(rate.group(1)) > 0


# ------------------------------------------------------------------ 9. sizes that round the same are told apart
@pytest.mark.parametrize("sizes, shown", [
    ((16.2, 16.0), ["16.2", "16"]), ((16.04, 16.0), ["16.04", "16"]), ((45.2, 30.0), ["45", "30"]),
    ((256.7, 7.5, 8.0), ["257", "7.5", "8"]), ((10.66, 10.7), ["10.66", "10.70"]),
])
def test_sizes_compared_keep_the_decimals_that_tell_them_apart(sizes, shown):
    assert fmt_gb_apart(*sizes) == shown


@pytest.mark.parametrize("msg", [
    "MacBook Air M2 16GB, gemma 2 27b Q4_0",
    "MacBook Air M2 16GB, gemma 3 27b Q4_0",
    "MacBook Air M2 16GB, qwen3 32b Q3_K_M",
])
def test_the_no_fit_headline_never_reads_the_same_size_twice(store, msg):
    r = service.ask(store, msg)
    m = re.search(r"It needs about ([\d.]+) GB — more than this machine's whole ([\d.]+) GB", r.reply)
    assert m is not None, r.reply[:200]
    assert float(m.group(1)) > float(m.group(2)) == 16.0


# ------------------------------------------------------------------ 10. multi-socket bandwidth is the total
@pytest.mark.parametrize("msg, per_socket", [
    ("dual-socket Xeon E5-2690 v4 server, 256GB RAM, llama 3.1 70b q4", 76.8),
    ("2x EPYC 9654 genoa, 768GB, llama 3.1 70b q4", 460.8),
    ("dual socket Xeon Gold 6248 with 384GB, llama 3.1 8b", 140.8),
])
def test_a_multi_socket_machine_is_labelled_with_its_total(store, msg, per_socket):
    r = service.ask(store, msg)
    p = r.verdict.prediction
    assert p.bandwidth_gbs == pytest.approx(2 * per_socket)
    assert "per socket" not in p.hardware["name"]
    assert "2 sockets together" in p.hardware["name"]
    assert f"per socket: {p.bandwidth_gbs:g} GB/s" not in r.reply


# ------------------------------------------------------------------ 11. a Mac named beside a PC without a GPU
@pytest.mark.parametrize("msg, hw", [
    ("my old PC has no GPU but I also have a mac mini M4 16GB, llama 3.1 8b", "Mac mini M4"),
    ("the laptop has no gpu, I also have a MacBook Air M2 with 16GB. llama 3.2 3b", "MacBook Air M2"),
    ("old desktop without a graphics card; I've also got an M1 Max MacBook Pro 32GB, mistral 7b", "M1 Max"),
])
def test_the_named_mac_is_the_machine_and_keeps_its_gpu(store, msg, hw):
    r = service.ask(store, msg)
    assert r.facts.hardware == hw
    assert r.facts.n_gpu_layers is None
    assert r.verdict is not None and r.verdict.prediction.hardware["kind"] == "apple_soc"
    assert r.verdict.bottleneck != "misconfiguration"
    assert "two computers" in r.reply


@pytest.mark.parametrize("msg", ["no GPU, only a MacBook Air M2 16GB, llama 3.2 3b",
                                 "laptop without a gpu, and a MacBook Air M2 8GB. llama 3.2 3b"])
def test_no_gpu_beside_a_mac_is_no_separate_card(store, msg):
    r = service.ask(store, msg)
    assert r.facts.n_gpu_layers is None
    assert r.verdict is not None and r.verdict.bottleneck != "misconfiguration"


def test_intake_update_also_names_a_carried_id(store):
    res = intake.update({"hardware": "cpu-ddr5-6000-2ch"}, "llama 3.1 8b", store)
    assert res.facts.hardware == "Desktop dual-channel DDR5-6000"
    assert "hardware" not in res.changed
