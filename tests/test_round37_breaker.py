"""What a breaker found in the RAM and CPU reading: a stated RAM is never called "not stated", more channels than
the CPU has are not all used, and a two-socket CPU server is not described as two GPUs."""

import pytest

from advisor import service
from advisor.resolve import resolve_scenario


@pytest.mark.parametrize("msg", [
    "Ryzen 9 7950X with dual channel DDR5-6000, llama 3.1 8b q4_k_m cpu only",
    "Xeon w9-3495X, 8 channels DDR5-4800 256GB, llama 3.1 70b q4_k_m on the CPU",
    "EPYC 9654 with 12 channels DDR5-4800, 384GB, deepseek v3 q4_k_m",
    "i7-1165G7 and 16GB LPDDR4X-4266, no gpu, llama 3.2 3b",
])
def test_stated_ram_is_not_called_not_stated(store, msg):
    r = service.ask(store, msg)
    assert r.verdict is not None and "Memory not stated" not in r.reply, r.reply[-1500:]
    assert "memory you stated" in r.reply or "Used your RAM" in r.reply


def test_more_channels_than_the_platform_has_are_capped(store):
    # AM5 has two channels: four DIMMs share them. 2 × 8 bytes × 6000 MT/s = 96 GB/s, never 192.
    r = service.ask(store, "Ryzen 9 9950X, 128GB DDR5 6000 in 4 channels, no GPU. Qwen3 30B-A3B Q4_K_M speed?")
    hw = resolve_scenario(store, r.facts).hardware
    assert hw is not None and hw.bandwidth_gbs == pytest.approx(96.0)
    assert "192" not in r.reply and "has 2 memory channels" in r.reply


def test_a_two_socket_cpu_server_is_not_two_gpus(store):
    r = service.ask(store, "2x EPYC 9654, 24 channels DDR5-4800 total, 1.5TB RAM. Kimi K2 Q4_K_M?")
    hw = resolve_scenario(store, r.facts).hardware
    assert hw is not None and hw.kind == "cpu" and hw.bandwidth_gbs == pytest.approx(921.6)
    assert "GPUs with the layers split" not in r.reply and "GPUs in tensor parallel" not in r.reply


@pytest.mark.parametrize("first, follow, bw", [
    # 8 channels of the PRO 7995WX (WRX90) at the new rate: 8 × 8 bytes × 6400 MT/s = 409.6 GB/s
    ("Threadripper PRO 7995WX, 8 channels DDR5-4800, 512GB RAM, DeepSeek V3 Q4_K_M", "Actually I upgraded to DDR5-6400",
     409.6),
    # the 7950X's own two channels: 2 × 8 × 6400 = 102.4 GB/s
    ("Ryzen 9 7950X, llama 3.1 8b q4_k_m, no gpu", "it has DDR5-6400 now", 102.4),
])
def test_ram_said_in_a_follow_up_belongs_to_the_cpu_named_before(store, first, follow, bw):
    r1 = service.ask(store, first)
    r2 = service.ask(store, follow, r1.facts)
    assert r2.facts.hardware == r1.facts.hardware and r2.facts.bandwidth_gbs == pytest.approx(bw)
    assert r2.facts.memory_gb == r1.facts.memory_gb and "computer with" not in r2.reply
    hw = resolve_scenario(store, r2.facts).hardware
    assert hw is not None and hw.bandwidth_gbs == pytest.approx(bw) and hw.kind == "cpu"


@pytest.mark.parametrize("msg, cores", [
    ("Threadripper PRO 7995WX, 8 channels DDR5-4800, 512GB RAM, DeepSeek V3 Q4_K_M", 96),
    ("Xeon w9-3495X, 8 channels DDR5-4800 256GB, llama 3.1 70b q4_k_m on the CPU", 56),
    ("Ryzen 9 9950X, 64GB DDR5-6000, no GPU, qwen3 30b a3b q4_k_m", 16),
    ("dual-socket Xeon E5-2690 v4 server, 256GB RAM, llama 3.1 70b q4", 28),  # 14 per socket
    ("2x EPYC 9654, 24 channels DDR5-4800 total, 1.5TB RAM. Kimi K2 Q4_K_M?", 192),
    ("core i7-12700H laptop, 32gb ddr5, no gpu, llama 3.1 8b", 14),
    ("a 64-core Threadripper 7980X, llama 3.1 8b, cpu only", 64),  # said: kept
])
def test_cores_come_from_the_model_number(store, msg, cores):
    hw = resolve_scenario(store, service.ask(store, msg).facts).hardware
    assert hw is not None and hw.cpu_cores == str(cores)


def test_sku_lookup_prefers_the_longest_model_number():
    from knowledge.cpu_uarch import sku_cores
    assert sku_cores("Xeon E5-2690 v4")[0] == 14 and sku_cores("Xeon E5-2690")[0] == 8
    assert sku_cores("E5-2690v4")[0] == 14 and sku_cores("Xeon Platinum 8480+")[1] == "8480+"
    assert sku_cores("RTX 4090") is None and sku_cores(None) is None


def test_more_vram_than_the_card_ships_with_is_said(store):
    r = service.ask(store, "I have an RTX 3090 with 48GB VRAM, llama 3.3 70b q4_k_m")
    assert "ships with 24 GB; using 48 GB as you said" in r.reply and "'2x GeForce RTX 3090'" in r.reply
    r = service.ask(store, "RTX 4090 24GB, llama 3.1 8b")
    assert "ships with" not in r.reply


@pytest.mark.parametrize("msg, gb", [
    ("server with 16x32GB DDR5-4800, EPYC 9654, llama 3.1 70b", 512),
    ("2x48gb ddr5 6000, ryzen 9 7950x, llama 70b q4", 96),
    ("24x64gb rdimm, 2x epyc 9654, deepseek v3", 1536),
    ("RAM: 4x 16GB, ryzen 5 5600x, llama 8b", 64),
    # the model file's size after its format is not the machine's memory
    ("Kimi K2 (UD-Q2_K_XL, ~380GB) on a single EPYC 9575F, 12x DDR5-6000, 768 GB, 9 t/s tg, normal?", 768),
    ("2x RTX 3090 24GB, llama 70b", 24),  # each card's: not modules
])
def test_memory_modules_add_up(store, msg, gb):
    assert service.ask(store, msg).facts.memory_gb == gb


@pytest.mark.parametrize("msg, hw_id", [
    ("epyc 7443p (24 cores), 8 channels ddr4-3200, 256gb, llama 3.1 70b q4", "amd-epyc-7003-milan"),
    ("EPYC 7763 with 512GB, deepseek v3 q4", "amd-epyc-7003-milan"),
    ("EPYC 7702P, 256GB, qwen 32b", "amd-epyc-7002-rome"),
    ("9950x 16 cores 96gb ddr5-6000, qwen3 30b a3b", "amd-ryzen-desktop-am5"),
    ("7800x3d, 32gb, no gpu, llama 3.1 8b", "amd-ryzen-desktop-am5"),
    ("14900k no gpu 64gb ddr5-6000, llama 8b", "intel-core-desktop-12-14"),
    ("rx 7900 xtx, llama 3.1 8b", "amd-rx-7900-xtx"),
])
def test_cpus_by_bare_model_number(store, msg, hw_id):
    hw = resolve_scenario(store, service.ask(store, msg).facts).hardware
    assert hw is not None and hw.id == hw_id


def test_a_batch_is_never_predicted_above_its_own_roofline(store):
    # 20 users of Llama 3.1 8B Q8_0 on two EPYC 9354: the cores' arithmetic (20 tokens x 16 GFLOP a step) bounds the
    # batch; the fitted batched slope had put the aggregate 16 % above that roofline.
    r = service.ask(store, "we want to serve llama 3.1 8b q8_0 to 20 concurrent users on a cpu-only server: 2x EPYC "
                           "9354 (32c each), 24 channels DDR5-4800 total. prompts about 1500 tokens.")
    p = service.predict_scenario(store, r.facts)
    assert p.concurrency == 20 and p.decode_tps <= p.decode_ceiling_tps + 1e-6
    assert p.decode_tps_per_seq == pytest.approx(p.decode_tps / 20, rel=1e-6)
    assert any("reach this machine's roofline" in a for a in p.assumptions)


def test_zero_memory_modules_are_refused_as_written(store):
    r = service.ask(store, "0x32GB DDR5, ryzen 9 7950x, llama 8b")
    assert r.facts.memory_gb is None and "0x32GB is not a memory size any machine has" in r.reply
