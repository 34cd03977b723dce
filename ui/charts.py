"""Plotly figures for the verdict: roofline, one request's time line, peers.

Pure functions from :class:`~advisor.models.Prediction`, :class:`~advisor.models.Verdict` and peer rows
(``knowledge.queries.peers``) to ``plotly.graph_objects.Figure``. No Gradio, no store.

Units: arithmetic intensity in FLOP per byte of weights read, performance in GFLOP/s (10^9 FLOP/s),
rates in tokens per second, times in seconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from advisor.models import Fix, Prediction, Verdict

__all__ = [
    "CANDIDATE_COLORS",
    "COLORS",
    "compare_figure",
    "empty_figure",
    "fix_effect",
    "peers_figure",
    "roofline_figure",
    "timeline_figure",
]

# One colour per meaning, the same in every chart.
COLORS = {
    "prefill": "#2563eb",  # blue: compute-bound phase
    "decode": "#ea580c",  # orange: bandwidth-bound phase
    "fix": "#16a34a",  # green: after the fix
    "roof": "#334155",  # slate: the machine's limits
    "peer": "#94a3b8",  # grey: other people's results
    "measured": "#dc2626",  # red: the user's own numbers
}
# One colour per hardware candidate in the comparison chart (ranked order).
CANDIDATE_COLORS = ["#2563eb", "#9333ea", "#0891b2", "#ca8a04", "#16a34a", "#db2777"]
# llama.cpp and mlx process a long prompt in micro-batches of about this many tokens, so each
# weight read serves at most this many tokens during prefill.
PREFILL_UBATCH = 512
_FONT = dict(size=13)
_MARGIN = dict(l=70, r=20, t=60, b=70)


def _ok(x: float | None) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def _num(x: Any) -> float | None:
    """A positive finite float, or None (DuckDB may hand back Decimal or None)."""
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) and f > 0 else None


def _base_layout(fig: go.Figure, title: str, *, height: int = 420) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, x=0.01, xanchor="left", font=dict(size=15)),
        template="plotly_white",
        height=height,
        margin=_MARGIN,
        font=_FONT,
        legend=dict(orientation="h", yanchor="top", y=-0.24, xanchor="left", x=0),
        hoverlabel=dict(font_size=12),
    )
    return fig


def empty_figure(message: str = "Tell me your hardware and model to see this chart.") -> go.Figure:
    """A blank figure that says what is missing (shown before the first verdict)."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                       font=dict(size=14, color="#64748b"))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return _base_layout(fig, "", height=300)


# ---------------------------------------------------------------------------------------- fixes
def fix_effect(p: Prediction, fix: Fix, bottleneck: str | None = None) -> tuple[float | None, float | None]:
    """New (TTFT s, decode tok/s) after a fix; unchanged values when the fix does not say.

    A fix that gives only a ``speedup`` is applied to the phase it acts on (decode for bandwidth-side
    fixes, prefill for compute-side ones, else the bottleneck phase).
    """
    ttft, tps = p.ttft_s, p.decode_tps
    if fix.new_ttft_s is not None:
        ttft = fix.new_ttft_s
    if fix.new_decode_tps is not None:
        tps = fix.new_decode_tps
    if fix.new_ttft_s is None and fix.new_decode_tps is None and _ok(fix.speedup):
        prefill_side = {"prefix_caching", "shorter_prompt", "more_compute", "gpu_offload", "chunked_prefill",
                        "flash_attention"}
        decode_side = {"quantization", "smaller_model", "speculative_decoding", "more_bandwidth", "batching",
                       "kv_cache_quantization"}
        if fix.id in prefill_side or (fix.id not in decode_side and bottleneck == "prefill"):
            ttft = ttft / fix.speedup if _ok(ttft) else ttft  # type: ignore[operator]
        else:
            tps = tps * fix.speedup if _ok(tps) else tps  # type: ignore[operator]
    return ttft, tps


# ------------------------------------------------------------------------------------- roofline
def _decode_gflop_per_token(p: Prediction) -> float:
    """2 FLOP per weight read; weights read per token = bytes / (bpw / 8)."""
    return 2.0 * p.weight_bytes_per_token_gb * 8.0 / max(p.bits_per_weight, 0.1)


def _intensities(p: Prediction) -> tuple[float, float]:
    """Arithmetic intensity (FLOP/byte of weights) of decode at the batch and of prefill."""
    bytes_per_weight = max(p.bits_per_weight, 0.1) / 8.0
    decode_i = 2.0 * max(p.concurrency, 1) / bytes_per_weight
    prefill_i = 2.0 * max(min(p.prompt_tokens, PREFILL_UBATCH), 1) / bytes_per_weight
    return decode_i, prefill_i


def roofline_figure(p: Prediction, verdict: Verdict | None = None) -> go.Figure:
    """Log-log roofline of the machine with this workload's prefill and decode points.

    Draws the bandwidth slope (GB/s × FLOP/byte), the compute roof (TFLOP/s) and the ridge point
    between them, the predicted prefill and decode points, the user's measured points when given,
    and where the top fix moves the bottleneck phase.
    """
    bw = p.bandwidth_gbs
    peak = p.tflops * 1000.0 if p.tflops is not None and _ok(p.tflops) else None  # GFLOP/s
    ridge = peak / bw if peak and _ok(bw) else p.ridge_point_flop_per_byte
    decode_i, prefill_i = _intensities(p)
    dec_gflop = _decode_gflop_per_token(p)
    pre_gflop = p.flops_per_token_g if _ok(p.flops_per_token_g) else dec_gflop

    x_lo = min(0.5, decode_i / 4)
    x_hi = max(prefill_i * 4, (ridge or 1) * 8, 100.0)
    xs = [x_lo * (x_hi / x_lo) ** (i / 120) for i in range(121)]
    fig = go.Figure()
    roof = [min(bw * x, peak) if peak else bw * x for x in xs]
    fig.add_trace(go.Scatter(
        x=xs, y=roof, mode="lines", name=f"Roof: {bw:g} GB/s" + (f", {p.tflops:.1f} TFLOP/s" if peak else ""),
        line=dict(color=COLORS["roof"], width=3),
        hovertemplate="intensity %{x:.1f} FLOP/B<br>attainable %{y:,.0f} GFLOP/s<extra></extra>",
    ))
    if ridge and peak:
        fig.add_trace(go.Scatter(
            x=[ridge, ridge], y=[bw * x_lo, peak], mode="lines", name=f"Ridge point {ridge:.0f} FLOP/byte",
            line=dict(color=COLORS["roof"], width=1, dash="dot"), hoverinfo="skip",
        ))

    def point(name: str, x: float, tps: float | None, gflop: float, color: str, symbol: str, size: int = 15) -> None:
        if not _ok(tps):
            return
        fig.add_trace(go.Scatter(
            x=[x], y=[tps * gflop], mode="markers", name=name,  # type: ignore[operator]
            marker=dict(color=color, size=size, symbol=symbol, line=dict(color="white", width=1.5)),
            customdata=[[tps]],
            hovertemplate=f"{name}<br>%{{customdata[0]:,.1f}} tok/s<br>%{{y:,.0f}} GFLOP/s at %{{x:.1f}} FLOP/B<extra></extra>",
        ))

    point(f"Prefill {_rate(p.prefill_tps)} tok/s", prefill_i, p.prefill_tps, pre_gflop, COLORS["prefill"], "circle")
    point(f"Decode {_rate(p.decode_tps)} tok/s", decode_i, p.decode_tps, dec_gflop, COLORS["decode"], "circle")
    if verdict is not None:
        mp, md = verdict.measured.get("prefill_tps"), verdict.measured.get("decode_tps")
        point(f"Measured prefill {_rate(mp)} tok/s", prefill_i, mp, pre_gflop, COLORS["measured"], "diamond", 13)
        point(f"Measured decode {_rate(md)} tok/s", decode_i, md, dec_gflop, COLORS["measured"], "diamond", 13)
        if verdict.fixes:
            _add_fix_point(fig, p, verdict, prefill_i, decode_i, pre_gflop, dec_gflop)

    fig.update_xaxes(type="log", dtick=1, tickformat="~g", minor=dict(ticks="inside", showgrid=True),
                     title_text="Arithmetic intensity (FLOP per byte of weights read)")
    fig.update_yaxes(type="log", dtick=1, tickformat=",~g", minor=dict(ticks="inside", showgrid=True),
                     title_text="Performance (GFLOP/s)")
    title = f"Roofline: {esc(p.hardware.get('name', p.hardware.get('id', 'this machine')))}"
    return _base_layout(fig, title, height=460)


# Fixes that serve more tokens per byte read on the same machine: the point slides along the
# bandwidth slope (higher effective intensity). Other fixes (new hardware, skipped prompt work) move
# it straight up, to an effective rate the current roof does not bound.
_SLIDE_FIXES = {"quantization", "smaller_model", "speculative_decoding", "batching", "kv_cache_quantization"}


def _add_fix_point(fig: go.Figure, p: Prediction, v: Verdict, prefill_i: float, decode_i: float,
                   pre_gflop: float, dec_gflop: float) -> None:
    fix = v.fixes[0]
    ttft, tps = fix_effect(p, fix, v.bottleneck)
    moves = []
    if _ok(tps) and _ok(p.decode_tps) and abs(tps - p.decode_tps) > 1e-9:  # type: ignore[operator]
        ratio = tps / p.decode_tps  # type: ignore[operator]
        x1 = decode_i * ratio if fix.id in _SLIDE_FIXES else decode_i
        moves.append((decode_i, x1, p.decode_tps * dec_gflop, tps * dec_gflop, tps))  # type: ignore[operator]
    if _ok(ttft) and _ok(p.ttft_s) and _ok(p.prefill_tps) and abs(ttft - p.ttft_s) > 1e-9:  # type: ignore[operator]
        new_pp = p.prefill_tps * p.ttft_s / ttft  # type: ignore[operator]
        moves.append((prefill_i, prefill_i, p.prefill_tps * pre_gflop, new_pp * pre_gflop, new_pp))  # type: ignore[operator]
    for x0, x1, y0, y1, rate in moves:
        fig.add_trace(go.Scatter(
            x=[x1], y=[y1], mode="markers", name=f"After “{_short(fix.title, 38)}”: {_rate(rate)} tok/s",
            marker=dict(color=COLORS["fix"], size=15, symbol="star", line=dict(color="white", width=1)),
            hovertemplate=f"{fix.title}<br>{fix.predicted_effect}<br>(effective rate)<extra></extra>",
        ))
        fig.add_annotation(x=math.log10(x1), y=math.log10(y1), ax=math.log10(x0), ay=math.log10(y0),
                           xref="x", yref="y", axref="x", ayref="y", showarrow=True, arrowhead=3,
                           arrowsize=1.2, arrowwidth=2, arrowcolor=COLORS["fix"], text="")


# ------------------------------------------------------------------------------------- timeline
def timeline_figure(p: Prediction, verdict: Verdict | None = None, *, max_fixes: int = 3) -> go.Figure:
    """One request as horizontal stacked bars: time to first token, then streaming the answer.

    Rows: the prediction, the user's measured rates (when given), and the prediction after each of
    the top ``max_fixes`` fixes.
    """
    rows: list[tuple[str, float | None, float | None]] = [("Predicted now", p.ttft_s, p.decode_s)]
    gen = p.gen_tokens
    per_seq = (p.decode_tps_per_seq or p.decode_tps) if p.concurrency > 1 else p.decode_tps
    if verdict is not None:
        mp, md = verdict.measured.get("prefill_tps"), verdict.measured.get("decode_tps")
        if _ok(mp) or _ok(md):
            m_ttft = p.prompt_tokens / mp if _ok(mp) else p.ttft_s  # type: ignore[operator]
            m_dec = gen / md if _ok(md) and gen else p.decode_s  # type: ignore[operator]
            rows.append(("Your measurement", m_ttft, m_dec))
        for fix in verdict.fixes[:max_fixes]:
            ttft, tps = fix_effect(p, fix, verdict.bottleneck)
            if _ok(tps) and _ok(per_seq) and _ok(p.decode_tps) and p.concurrency > 1:
                tps = tps * per_seq / p.decode_tps  # type: ignore[operator]
            dec = gen / tps if _ok(tps) and gen else p.decode_s  # type: ignore[operator]
            rows.append((f"After: {_short(fix.title, 34)}", ttft, dec))
    labels = [r[0] for r in rows][::-1]
    ttfts = [_num(r[1]) or 0.0 for r in rows][::-1]
    decs = [_num(r[2]) or 0.0 for r in rows][::-1]
    fig = go.Figure()
    fig.add_trace(go.Bar(
        y=labels, x=ttfts, orientation="h", name="Time to first token (prefill)",
        marker_color=COLORS["prefill"], text=[_secs(t) for t in ttfts], textposition="inside",
        insidetextanchor="middle", hovertemplate="TTFT %{x:.2f} s<extra>%{y}</extra>",
    ))
    fig.add_trace(go.Bar(
        y=labels, x=decs, orientation="h", name=f"Streaming {gen:,} tokens (decode)",
        marker_color=COLORS["decode"], text=[_secs(t) for t in decs], textposition="inside",
        insidetextanchor="middle", hovertemplate="streaming %{x:.2f} s<extra>%{y}</extra>",
    ))
    fig.update_layout(barmode="stack", bargap=0.35)
    fig.update_xaxes(title_text="Seconds for one request", rangemode="tozero")
    fig.update_yaxes(automargin=True)
    fig = _base_layout(fig, f"One request: {p.prompt_tokens:,}-token prompt, {gen:,}-token answer",
                       height=max(280, 110 + 62 * len(rows)))
    fig.update_layout(legend_traceorder="normal")
    return fig


# ---------------------------------------------------------------------------------------- peers
def peers_figure(rows: Sequence[dict[str, Any]], prediction: Prediction | None = None,
                 measured: dict[str, float | None] | None = None, *, limit: int = 10) -> go.Figure:
    """Measured results on similar machines next to the prediction and the user's own numbers.

    Two panels share the row labels: decode tok/s (left) and prefill tok/s (right). The user's
    measured numbers are drawn in red, the prediction in the phase colour, peers in grey.
    """
    if not rows and prediction is None and not measured:
        return empty_figure("No measured results on similar machines yet.")
    entries: list[tuple[str, float | None, float | None, str]] = []  # label, decode, prefill, colour
    measured = measured or {}
    if _ok(measured.get("decode_tps")) or _ok(measured.get("prefill_tps")):
        entries.append(("▶ You (measured)", _num(measured.get("decode_tps")), _num(measured.get("prefill_tps")),
                        COLORS["measured"]))
    if prediction is not None:
        # Peers are single-stream runs (batch 1): compare them with one user's speed, never a batch's sum.
        per_user = prediction.decode_tps_per_seq or prediction.decode_tps
        label = ("▶ Predicted for you" if prediction.concurrency <= 1
                 else f"▶ Predicted for you (each of {prediction.concurrency} users)")
        entries.append((label, per_user, prediction.prefill_tps, COLORS["roof"]))
    seen: set[str] = set()
    for r in rows:
        label = _peer_label(r)
        key = f"{label}|{r.get('decode_tps')}|{r.get('prefill_tps')}"
        if key in seen:
            continue
        seen.add(key)
        entries.append((label, _num(r.get("decode_tps")), _num(r.get("prefill_tps")), COLORS["peer"]))
        if len(entries) >= limit + 2:
            break
    # Unique y labels (plotly merges equal category names).
    labels: list[str] = []
    for lab, *_ in entries:
        base, n = lab, 2
        while lab in labels:
            lab, n = f"{base} ({n})", n + 1
        labels.append(lab)
    labels_r = labels[::-1]
    entries_r = entries[::-1]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.05,
                        subplot_titles=("Decode: streaming speed", "Prefill: reading the prompt"))
    for col in (1, 2):
        vals = [_num(e[col]) for e in entries_r]
        top = max((v for v in vals if v), default=1.0)
        fig.update_xaxes(range=[0, top * 1.22], row=1, col=col)
        colors = [e[3] for e in entries_r]
        fig.add_trace(go.Bar(
            y=labels_r, x=vals, orientation="h", marker_color=colors, showlegend=False,
            name="decode tok/s" if col == 1 else "prefill tok/s",
            text=[_rate(v) if v else "" for v in vals], textposition="outside", cliponaxis=False,
            hovertemplate="%{y}<br>%{x:,.1f} tok/s<extra></extra>",
        ), row=1, col=col)
    fig.update_xaxes(title_text="decode tok/s", row=1, col=1)
    fig.update_xaxes(title_text="prefill tok/s", row=1, col=2)
    fig.update_annotations(font_size=13)
    fig.update_yaxes(automargin=True, tickfont=dict(size=12))
    return _base_layout(fig, "One user at a time: measured on similar machines (grey) vs you",
                        height=max(320, 120 + 34 * len(entries)))


def _peer_label(r: dict[str, Any]) -> str:
    hw = str(r.get("hardware") or r.get("hw_id") or "?")
    model = str(r.get("model") or "?")
    quant = r.get("quant")
    return _short(f"{_short(hw, 28)} · {_short(model, 22)}" + (f" {quant}" if quant else ""), 60)


def _short(s: str, n: int) -> str:
    """``s`` cut to ``n`` characters, with ``<``/``>`` escaped: Plotly renders a subset of HTML in labels
    (``<a href>``, ``<b>``), and hardware or model names are other visitors' text (issue 17 item 8)."""
    return esc(s if len(s) <= n else s[: n - 1] + "…")


def esc(s: str) -> str:
    """``<`` and ``>`` as entities, so Plotly shows them as text (idempotent: safe to apply twice)."""
    return str(s).replace("<", "&lt;").replace(">", "&gt;")


def _rate(x: float | None) -> str:
    if not _ok(x):
        return "?"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"  # type: ignore[operator]


def _secs(x: float) -> str:
    if not x:
        return ""
    return f"{x:.2f} s" if x < 1 else f"{x:.1f} s" if x < 120 else f"{x / 60:.1f} min"


# -------------------------------------------------------------------------------------- compare
def compare_figure(result: dict[str, Any], *, top: int = 4) -> go.Figure:
    """Batched decode of the top candidates: aggregate (left) and per-user (right) tok/s vs concurrency.

    ``result`` is :func:`advisor.compare.compare`'s JSON: each candidate's ``batch.curve`` holds
    {``concurrency``, ``aggregate_tps``, ``per_user_tps``} up to the concurrency that fits in memory.
    Draws each candidate's saturation point (where adding users stops being free), the number of
    users as a vertical line and the per-user tok/s target as a horizontal one.
    """
    cands = [c for c in result.get("candidates", []) if (c.get("batch") or {}).get("curve")][:top]
    if not cands:
        return empty_figure("No candidate holds the model at this context: nothing to draw.")
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.09,
                        subplot_titles=("Aggregate decode tok/s (all users)", "Decode tok/s per user"))
    for i, c in enumerate(cands):
        _add_candidate_curves(fig, c, CANDIDATE_COLORS[i % len(CANDIDATE_COLORS)])
    users = result.get("concurrency")
    if _ok(users):
        fig.add_vline(x=users, line=dict(color=COLORS["roof"], width=1, dash="dot"))
        for ax in ("x", "x2"):  # on a log axis an annotation's x is log10 of the value
            fig.add_annotation(x=math.log10(float(users or 1)), y=1, xref=ax, yref=f"{ax.replace('x', 'y')} domain",
                               text=f" {users} users", showarrow=False, xanchor="left", yanchor="top")
    target = (result.get("targets") or {}).get("tps_per_user")
    if _ok(target):
        fig.add_hline(y=target, row=1, col=2, line=dict(color=COLORS["measured"], width=2, dash="dash"),
                      annotation_text=f"target {target:g} tok/s", annotation_position="bottom right")
    top = max([p["concurrency"] for c in cands for p in c["batch"]["curve"]] + [users if _ok(users) else 1])
    ticks = [2 ** k for k in range(int(math.log2(top)) + 1)]
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(t) for t in ticks], range=[0, math.log10(top * 1.15)],
                     title_text="Concurrent sequences (users)")
    fig.update_yaxes(rangemode="tozero", title_text="tok/s", row=1, col=1)
    fig.update_yaxes(rangemode="tozero", row=1, col=2)
    fig.update_annotations(font_size=12)
    title = f"Batched decode: {_short(str(result.get('model', '')).split('/')[-1], 40)} at {result.get('quant', '')}"
    return _base_layout(fig, title, height=440)


def _add_candidate_curves(fig: go.Figure, c: dict[str, Any], color: str) -> None:
    curve = c["batch"]["curve"]
    xs = [p["concurrency"] for p in curve]
    name = _short(c["hardware"]["name"], 34)
    for col, key, dash in ((1, "aggregate_tps", "solid"), (2, "per_user_tps", "dash")):
        fig.add_trace(go.Scatter(
            x=xs, y=[p[key] for p in curve], mode="lines", name=name, legendgroup=name, showlegend=col == 1,
            line=dict(color=color, width=2.5, dash=dash),
            hovertemplate=f"{name}<br>%{{x}} users: %{{y:,.1f}} tok/s<extra></extra>",
        ), row=1, col=col)
    sat = c.get("saturation_concurrency")
    pt = next((p for p in curve if p["concurrency"] == sat), None)
    if pt is not None:
        why = (c.get("batch") or {}).get("saturation_limit", "")
        fig.add_trace(go.Scatter(
            x=[sat], y=[pt["aggregate_tps"]], mode="markers", name=f"{name}: saturates at {sat}",
            legendgroup=name, showlegend=False, marker=dict(color=color, size=11, symbol="diamond",
                                                            line=dict(color="white", width=1.5)),
            hovertemplate=f"{name}<br>adding users stops being free at ~{sat} ({why})<extra></extra>",
        ), row=1, col=1)
