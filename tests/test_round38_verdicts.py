"""A measured rate above the usual range but within the hardware's ceiling is judged normal, and the reply says so
without quoting a range that contradicts it; fixes slower than what the person measures are not offered; short
waits read in milliseconds."""

from advisor import service
from advisor.render.markdown import fmt_s

GTX1070 = "my GTX 1070 runs mistral 7b Q5_K_M with llama.cpp, llama-bench says tg128 32 t/s, is that normal?"


def test_above_the_range_is_not_called_the_range(store):
    r = service.ask(store, GTX1070)
    assert r.verdict is not None and r.verdict.status == "normal"
    lo, hi = r.verdict.expected_range["decode_tps"]
    assert hi < 32  # the fit expects less than this card measured (Mistral 7B Q5_K_M: 4.9 GB read per token)
    assert "above the usual" in r.reply and "is normal here" not in r.reply.split("\n\n")[1], r.reply[:400]
    assert "up to 51.4" in r.reply  # 256.3 GB/s ÷ 4.99 GB: the decode ceiling


def test_fixes_slower_than_the_measured_rate_are_left_out(store):
    r = service.ask(store, GTX1070)
    for fx in r.verdict.fixes:
        assert fx.new_decode_tps is None or fx.new_decode_tps > 32 or fx.id == "speculative_decoding", (fx.id, fx.title)
    assert not any(fx.id == "quantization" for fx in r.verdict.fixes)  # Q4_K_M at ~26 tok/s is slower than 32


def test_short_waits_read_in_milliseconds():
    assert (fmt_s(0.012), fmt_s(0.0003), fmt_s(0.42), fmt_s(12.34), fmt_s(150)) == (
        "12 ms", "under 1 ms", "0.42 s", "12.3 s", "2.5 min")


def test_batching_compares_aggregates(store):
    # 20 tok/s per request at batch 32 is 640 tok/s in all: a larger batch is weighed against that, not against 20
    r = service.ask(store, "we run 8x H20 with sglang, DeepSeek-R1 FP8, ~20 tok/s per request at batch 32. "
                           "can we do better?")
    fx = [f for f in r.verdict.fixes if f.id == "batching"]
    assert fx and "vs ≈ 640 now" in fx[0].predicted_effect, [f.predicted_effect for f in r.verdict.fixes]
    assert "TFLOPS FP16 per GPU" in r.reply  # 8 GPUs: the figures are each GPU's
