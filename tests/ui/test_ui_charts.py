"""Charts are pure functions: check traces, axes and labels for a hand-made prediction."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from ui import charts


def _names(fig: go.Figure) -> list[str]:
    return [t.name or "" for t in fig.data]


def test_roofline_has_roofs_points_and_fix(prediction, verdict):
    fig = charts.roofline_figure(prediction, verdict)
    assert isinstance(fig, go.Figure)
    names = _names(fig)
    assert any(n.startswith("Roof: 100 GB/s") for n in names)
    assert any(n.startswith("Ridge point 36") for n in names)
    assert any(n.startswith("Prefill 133") for n in names)
    assert any(n.startswith("Decode 16.4") for n in names)
    assert any(n.startswith("Measured decode 12.0") for n in names)
    assert any(n.startswith("After “Speculative decoding") for n in names)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "FLOP per byte" in fig.layout.xaxis.title.text
    assert "GFLOP/s" in fig.layout.yaxis.title.text
    # The roof is min(bandwidth × intensity, peak): flat at 3580 GFLOP/s right of the ridge.
    roof = fig.data[0]
    assert max(roof.y) == 3580.0
    assert math.isclose(roof.y[0], 100.0 * roof.x[0])
    # Decode sits left of the ridge (bandwidth-bound), prefill right of it (compute-bound).
    dec = next(t for t in fig.data if (t.name or "").startswith("Decode"))
    pre = next(t for t in fig.data if (t.name or "").startswith("Prefill"))
    assert dec.x[0] < 35.8 < pre.x[0]
    # The fix point sits above the decode point, with an arrow.
    fix = next(t for t in fig.data if (t.name or "").startswith("After"))
    assert fix.y[0] > dec.y[0] and fix.x[0] > dec.x[0]  # speculative decoding slides along the slope
    assert len(fig.layout.annotations) == 1


def test_roofline_without_compute_figure(prediction_factory):
    p = prediction_factory(tflops=None, ridge_point_flop_per_byte=None, prefill_tps=None, ttft_s=None)
    fig = charts.roofline_figure(p)
    names = _names(fig)
    assert not any(n.startswith("Ridge") for n in names)
    assert not any(n.startswith("Prefill") for n in names)
    assert any(n.startswith("Decode") for n in names)


def test_timeline_stacks_ttft_and_streaming(prediction, verdict):
    fig = charts.timeline_figure(prediction, verdict)
    assert fig.layout.barmode == "stack"
    ttft, stream = fig.data
    assert ttft.orientation == "h" and "first token" in ttft.name
    assert "Streaming 300 tokens" in stream.name
    labels = list(ttft.y)[::-1]  # top row first
    assert labels[0] == "Predicted now"
    assert labels[1] == "Your measurement"
    assert labels[2].startswith("After: Speculative decoding")
    assert len(labels) == 5
    # Speculative decoding halves the streaming time; prefix caching cuts TTFT to 5 s.
    streams = list(stream.x)[::-1]
    ttfts = list(ttft.x)[::-1]
    assert math.isclose(streams[2], 300 / 32.8)
    assert math.isclose(ttfts[3], 5.0)
    assert math.isclose(streams[1], 300 / 12.0)
    assert "Seconds" in fig.layout.xaxis.title.text and "2,000-token prompt" in fig.layout.title.text


def test_fix_effect_speedup_only_acts_on_its_phase(prediction, verdict):
    compute_fix = verdict.fixes[2]
    ttft, tps = charts.fix_effect(prediction, compute_fix, "decode")
    assert math.isclose(ttft, 7.5) and tps == prediction.decode_tps


def test_peers_highlights_user(prediction):
    rows = [
        {"hardware": "Apple M2 (10-core GPU)", "model": "llama-2-7b", "quant": "Q4_0", "prefill_tps": 180.0,
         "decode_tps": 21.0},
        {"hardware": "Apple M2 (10-core GPU)", "model": "llama-2-7b", "quant": "Q4_0", "prefill_tps": 180.0,
         "decode_tps": 21.0},  # duplicate: shown once
        {"hardware": "Apple M1", "model": "llama-2-7b", "quant": "Q8_0", "prefill_tps": None, "decode_tps": 12.0},
    ]
    fig = charts.peers_figure(rows, prediction, {"decode_tps": 12.0, "prefill_tps": None})
    decode = fig.data[0]
    labels = list(decode.y)[::-1]
    assert labels[0] == "▶ You (measured)" and labels[1] == "▶ Predicted for you"
    assert len(labels) == 4
    colors = list(decode.marker.color)[::-1]
    assert colors[0] == charts.COLORS["measured"]
    assert fig.layout.xaxis.title.text == "decode tok/s" and fig.layout.xaxis2.title.text == "prefill tok/s"


def test_empty_figure_says_why():
    fig = charts.empty_figure("nothing yet")
    assert fig.layout.annotations[0].text == "nothing yet"
    assert charts.peers_figure([], None, None).layout.annotations
