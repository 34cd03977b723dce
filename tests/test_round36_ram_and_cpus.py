"""A CPU machine's RAM as people state it decides its bandwidth; CPUs named by model number are the machine; a core
count said is used; big MoE models people run on such machines are known.

Peak DRAM bandwidth = 64-bit channels × 8 bytes × MT/s (knowledge.hardware_seed.peak_bandwidth_gbs).
"""

from __future__ import annotations

import pytest

from advisor import service
from advisor.intake._ramspec import ram_bandwidth, stated_ram
from advisor.resolve import resolve_scenario
from knowledge import catalog
from knowledge.hardware_seed import peak_bandwidth_gbs
from knowledge.store import Store


@pytest.fixture(scope="module")
def store():
    return Store(":memory:")


@pytest.mark.parametrize("text, gen, mts, ch, total", [
    ("8 channels DDR5-5200", "DDR5", 5200, 8, False),
    ("DDR4-3200 quad channel", "DDR4", 3200, 4, False),
    ("ddr5 6000 dual-channel kit", "DDR5", 6000, 2, False),
    ("12 channels total DDR5-4800", "DDR5", 4800, 12, True),
    ("LPDDR5X-8533", "LPDDR5X", 8533, None, False),
    ("octa-channel DDR4 3200 MT/s", "DDR4", 3200, 8, False),
    ("DDR5-4800 (12 channels)", "DDR5", 4800, 12, False),
    ("16 channels of DDR4-2933 in total", "DDR4", 2933, 16, True),
])
def test_ram_specs_as_people_write_them(text, gen, mts, ch, total):
    s = stated_ram(f"a box with {text}, 512GB")
    assert s is not None and (s.gen, s.mts, s.channels, s.total) == (gen, mts, ch, total)


@pytest.mark.parametrize("text", ["16GB DDR5", "64 GB of DDR4 RAM", "ddr5 laptop", "RTX 4090 24GB"])
def test_a_generation_alone_states_no_spec(text):
    assert stated_ram(text) is None


def test_peak_bandwidth_by_hand():
    assert peak_bandwidth_gbs(5200, 8) == 332.8  # 8 × 8 B × 5200 MT/s
    assert peak_bandwidth_gbs(8533, 2) == 136.5  # a 128-bit LPDDR5X bus


def test_stated_ram_on_a_cpu_entry(store):
    tr = catalog.get_hardware(store, "amd-threadripper-7000")  # fitted with 4-channel DDR5-5200: 166.4 GB/s
    # A non-PRO Threadripper 7000 (TRX50) has 4 channels: 8 DIMMs share them, so 8 channels cannot all be used.
    bw, why = ram_bandwidth(stated_ram("8 channels DDR5-5200"), tr)
    assert bw == 166.4 and "4 channels × 8 bytes × 5200 MT/s = 166.4 GB/s" in why and "has 4 memory channels" in why
    pro = catalog.get_hardware(store, "amd-threadripper-pro-7000wx")  # WRX90: 8 channels
    bw, why = ram_bandwidth(stated_ram("8 channels DDR5-5200"), pro)
    assert bw == 332.8 and "8 channels × 8 bytes × 5200 MT/s = 332.8 GB/s" in why and "rather than" not in why
    bw, why = ram_bandwidth(stated_ram("4-channel DDR5-5200"), tr)  # what the entry already has: still said
    assert bw == 166.4 and "as the catalog has it" in why
    bw, _ = ram_bandwidth(stated_ram("DDR5-6400"), tr)  # channels from the CPU's own memory system: 4
    assert bw == 204.8
    genoa = catalog.get_hardware(store, "amd-epyc-9004-genoa")  # no memory system row: only a full statement counts
    assert ram_bandwidth(stated_ram("DDR5-4800"), genoa, 2) is None
    assert ram_bandwidth(stated_ram("12 channels total DDR5-4800"), genoa, 2)[0] == 460.8
    assert ram_bandwidth(stated_ram("8 channels DDR5-4800"), genoa, 2)[0] == 614.4  # per socket × 2


def _hw(store, r):
    return resolve_scenario(store, r.facts).hardware


@pytest.mark.parametrize("msg, hw_id, bw", [
    ("Threadripper PRO 7985WX with 8 channels DDR5-5200, 768GB, deepseek r1 671b q4, how fast?",
     "amd-threadripper-pro-7000wx", 332.8),
    ("threadripper 7980x, 8-channel ddr5 5200, 512 gb ram. deepseek v3 q4_k_m speed?", "amd-threadripper-7000", 166.4),
    ("Ryzen 9 9950X, 128GB DDR5 6000 in 4 channels, no GPU. Qwen3 30B-A3B Q4_K_M speed?", "amd-ryzen-desktop-am5", 96.0),
    ("ryzen 5 5600x, no gpu, DDR4-3600 dual channel, 32gb, gemma 2 9b q4_k_m", "amd-ryzen-desktop-am4", 57.6),
    ("Running Mixtral 8x7B on a Ryzen 9 7950X with 64GB DDR5-6000, no GPU", "amd-ryzen-9-7950x", 96.0),
    ("dual EPYC 9654, 12 channels total DDR5-4800, 1.5TB RAM, Kimi K2 Q4_K_M decode speed?",
     "amd-epyc-9004-genoa", 460.8),
])
def test_a_named_cpu_with_its_stated_ram(store, msg, hw_id, bw):
    r = service.ask(store, msg)
    hw = _hw(store, r)
    assert hw is not None and hw.id == hw_id and hw.bandwidth_gbs == pytest.approx(bw), (hw, r.reply[:300])
    assert r.verdict is not None and "I don't know the hardware" not in r.reply


@pytest.mark.parametrize("msg, bw", [
    ("CPU only server, 8 channels DDR5-5200, 512GB, llama 3.1 70b q4_k_m", 332.8),
    ("no gpu, LPDDR5X-8533 laptop 32GB, qwen3 8b q4", 136.5),
    ("my box has DDR4-2666 six channels, 192GB, no GPU, mistral 7b q4", 128.0),
])
def test_ram_the_catalog_has_no_entry_for_is_the_machine(store, msg, bw):
    r = service.ask(store, msg)
    assert r.facts.bandwidth_gbs == pytest.approx(bw) and r.facts.hardware_kind == "cpu"
    assert r.verdict is not None and r.verdict.prediction.decode_tps > 0


@pytest.mark.parametrize("msg, hw_id", [
    ("I have an Intel N100 mini PC with 16GB DDR5, phi-3 mini q4 for home assistant. ok?", "intel-n100-alder-lake-n"),
    ("Dell with i7-1165G7 and 16 GB DDR4-3200, mistral 7b q4 at 4 t/s, expected?", "intel-core-mobile-10-11-g"),
    ("Xeon w9-3495X, 512GB, qwen3 235b q4", "intel-xeon-sapphire-rapids"),
    ("a Threadripper PRO 7995WX workstation, 1TB, deepseek r1 q4", "amd-threadripper-pro-7000wx"),
])
def test_cpus_by_model_number_are_the_machine(store, msg, hw_id):
    r = service.ask(store, msg)
    hw = _hw(store, r)
    assert hw is not None and hw.id == hw_id, (r.facts, r.reply[:300])


@pytest.mark.parametrize("msg, cores", [
    ("64-core Threadripper 7980X, 256GB, llama 3.1 70b q4_k_m", 64),
    ("EPYC 9654 96 cores 12-channel DDR5-4800 384GB, llama 3.1 70b q4_k_m", 96),
    ("Xeon w9-3495X 56 cores, qwen3 32b q4", 56),
    ("Threadripper 7960X (24c/48t), 128GB, qwen3 32b q4", 24),
])
def test_cpu_cores_said_are_used(store, msg, cores):
    r = service.ask(store, msg)
    assert r.facts.cpu_cores == cores
    hw = _hw(store, r)
    assert hw.cpu_cores == str(cores)
    assert any(f"{cores} cores" in a for a in r.verdict.prediction.assumptions), r.verdict.prediction.assumptions


def test_more_cores_read_the_prompt_faster(store):
    few = service.ask(store, "Threadripper 7960X 24 cores, 256GB, llama 3.1 70b q4_k_m")
    many = service.ask(store, "Threadripper 7980X 64 cores, 256GB, llama 3.1 70b q4_k_m")
    ratio = many.verdict.prediction.prefill_tps / few.verdict.prediction.prefill_tps
    assert ratio == pytest.approx(64 / 24, rel=0.01)  # CPU prefill compute scales with cores


def test_gpu_cores_of_a_mac_are_not_cpu_cores(store):
    r = service.ask(store, "M2 Max 12-core CPU 38-core GPU 64GB, llama 3 8b q4")
    assert r.facts.gpu_cores == 38 and r.facts.cpu_cores is None


@pytest.mark.parametrize("msg, model_id", [
    ("Kimi K2 on a Mac Studio M3 Ultra 512GB, q4?", "moonshotai/Kimi-K2-Instruct"),
    ("can I run kimi-k2-thinking at Q2_K on 2x EPYC 9654 with 768GB?", "moonshotai/Kimi-K2-Instruct"),
    ("MiniMax M2 on 4x RTX 3090, awq, 4 users", "MiniMaxAI/MiniMax-M2"),
    ("qwen3 coder 480b q4_k_m on an M3 Ultra 512GB", "Qwen/Qwen3-Coder-480B-A35B-Instruct"),
])
def test_big_moe_models_by_name(store, msg, model_id):
    r = service.ask(store, msg)
    m = resolve_scenario(store, r.facts).model
    assert m is not None and m.id == model_id, (r.facts.model, r.reply[:200])


def test_kimi_k2_is_sized_from_its_config(store):
    m = catalog.resolve_model(store, "Kimi K2").value
    assert (m.params_b, m.active_params_b, m.n_layers) == (1000.0, 32.0, 61)
