"""The first sentence of an answer about a verdict: what the person's own numbers say, in plain words.

:func:`plain_verdict` (with :func:`limit_raise_fits`, :func:`over_roofline`, :func:`decode_words`): the chat's
first answer, follow-ups and the report call it; the formatting helpers it uses live in
:mod:`advisor.render.markdown`.
"""

from __future__ import annotations

import math
import re

from advisor.models import Fix, Verdict
from advisor.render.markdown import (
    _fmt_gb,
    _fmt_rate,
    above_range,
    fmt_gb_apart,
    low_end,
    plain_answer,
)
from advisor.roofline import served_share
from advisor.understand.engine import classify_engine
from advisor.understand.formats import not_loadable


def limit_raise_thin(v: Verdict) -> Fix | None:
    """The raise-the-Mac's-GPU-limit fix when the model then fits with little to spare (not the margin of
    :func:`advisor.diagnose.fit.roomy`): a yes with a setting and care, not a plain yes."""
    if limit_raise_fits(v):
        return None
    return next((f for f in v.fixes if "GPU memory limit" in f.title and not f.fits_with_margin
                 and f.margin_gb is not None and f.margin_gb >= 0), None)


def limit_raise_fits(v: Verdict) -> bool:
    """The first fix raises a Mac's GPU memory limit and the model then fits with room to spare: the default
    limit, not the machine, is what stands in the way."""
    f = v.fixes[0] if v.fixes else None
    return f is not None and "GPU memory limit" in f.title and bool(f.fits_with_margin)


OVER_ROOFLINE = 1.15  # a decode this far over the memory's roofline is no result of this machine and model


def over_roofline(v: Verdict) -> bool:
    """A measured decode more than :data:`OVER_ROOFLINE` × what the machine's memory can deliver for the model
    (bandwidth ÷ bytes per token; a serving run's total against the roofline at its streams): another machine,
    model or format, a total said as one stream's, or an edited number — not a result to improve."""
    p, mt = v.prediction, v.measured.get("decode_tps")
    if not (mt and p is not None and p.decode_ceiling_tps) or (p.concurrency > 1 and not v.measured_streams):
        return False  # several users and one stream's rate: judged against its share elsewhere
    return mt > OVER_ROOFLINE * p.decode_ceiling_tps


def plain_verdict(v: Verdict, *, with_fix: bool = True) -> str:
    """The first sentence of an answer: about the user's own numbers when there are any.

    ``with_fix=False`` leaves out the "First fix" tail (the chat answer has its own "Best fix" line).
    """
    p = v.prediction
    mt, mp = v.measured.get("decode_tps"), v.measured.get("prefill_tps")
    exp = (p.decode_tps if v.measured_streams else (p.decode_tps_per_seq or p.decode_tps)) if p else None
    if p is not None and exp and v.measured_streams and v.measured_ttft_s and p.concurrency > 1:
        exp *= served_share(p.decode_tps, p.prefill_tps, p.prompt_tokens, p.gen_tokens)  # a served run: prompts too
    if v.bottleneck == "misconfiguration":
        lo = (v.expected_range.get("decode_tps") or (None,))[0] if p is None else None
        # Only the prompt is read slowly (decode judged fine): the sentence names prefill, not the decode rate.
        pre_only = (v.phase_status.get("prefill_tps") == "below_expected"
                    and v.phase_status.get("decode_tps") != "below_expected" and mp and p is not None and p.prefill_tps)
        if pre_only and p is not None:
            got = f"prompts are read at {mp:,.0f} tok/s where this hardware normally does about {_fmt_rate(p.prefill_tps)}"
        elif mt and exp:
            got = f"you get {mt:g} tok/s where this hardware normally does about {_fmt_rate(exp)}"
        elif mt and lo:
            got = f"you get {mt:g} tok/s where any machine of this kind does at least {_fmt_rate(lo)} tok/s"
        else:
            got = "the numbers point at the setup, not the hardware"
        fix = f" First fix: {v.fixes[0].title.lower()}." if v.fixes and with_fix else ""
        return f"**Something in the setup is holding it back: {got}.**{fix}"
    if v.bottleneck == "memory_fit":
        if p is not None and not p.memory.fits and p.running and not mt:
            # the weights fit and only some users' KV caches do: a server queues the rest, nothing spills
            return plain_answer(p)
        if p is not None and not p.memory.fits:
            total, need, usable = p.memory.total_gb, p.memory.required_gb, p.memory.usable_gb
            # close calls keep a decimal (24.7 vs 23.5), and sizes that would read the same are told apart (16.2 vs 16)
            shown = fmt_gb_apart(need, usable, *([total] if total and need > total else []))
            card = p.hardware.get("kind") in ("discrete_gpu", "datacenter_gpu")
            one = (p.hardware.get("n_devices") or 1) == 1
            whole = (f" — more than the {'card' + chr(39) + 's' if one else 'cards' + chr(39)} {shown[2]} GB" if card
                     else f" — more than this machine's whole {shown[2]} GB") if len(shown) > 2 else ""
            if not mt and (thin := limit_raise_thin(v)) is not None:
                # the raised limit holds it with little to spare: yes, with a setting and care, or a smaller model
                cmd = re.search(r"`[^`]+`", thin.title)
                return (f"**Only just, and only with one setting: it needs about {shown[0]} GB and macOS lets the GPU use "
                        f"about {shown[1]} GB until you raise that limit" + (f" ({cmd.group(0)} in Terminal)" if cmd else "")
                        + f"; raised, {thin.margin_gb:.1f} GB is left to spare, so close other apps and keep the context "
                        "short, or take a smaller model (below).**")
            if not mt and limit_raise_fits(v):
                # a Mac whose default GPU limit (about 2/3–3/4 of memory) is all that stands in the way: one setting
                return (f"**Not as macOS is set by default, but one setting makes it fit: it needs about {shown[0]} GB "
                        f"and macOS lets the GPU use about {shown[1]} GB until you raise that limit (below).**")
            # "No:" answers "can I run it?"; beside a measured rate the question is "what is wrong?"
            server = classify_engine(p.backend)[0] in ("vllm", "sglang", "tensorrt-llm")
            head = (f"**{'It does not fit' if mt else 'No: it does not fit'}. It needs about {shown[0]} GB{whole}, and about "
                    f"{shown[1]} GB is usable for the model here,** "
                    + ("so the engine stops at load" if server and card and not mt else "so part of it runs from slow memory"))
            split_rng = v.expected_range.get("decode_tps")
            if v.planned_split:
                # the experts in system RAM on purpose (--n-cpu-moe): the split is the design; judge its speed
                lo, hi = split_rng or (0.0, 0.0)
                where = "the card" if one else "the cards"
                head = (f"**It runs split as you set it up: the routed experts in system RAM, the rest on {where} (the "
                        f"model needs about {shown[0]} GB; {shown[1]} GB of GPU memory is usable)")
                if not mt or not hi:
                    return head + (f": about {_fmt_rate(p.decode_tps_per_seq or p.decode_tps)} tok/s.**" if not mt
                                   else ".**")
                st = v.phase_status.get("decode_tps")
                usual = f"the usual {_fmt_rate(lo)}–{_fmt_rate(hi)} for it"
                judged = (f"below {usual}" if st == "below_expected" else f"above {usual}" if mt > hi
                          else "normal for that split")
                first = (f" First fix: {v.fixes[0].title[:1].lower()}{v.fixes[0].title[1:]}."
                         if st == "below_expected" and v.fixes and with_fix else "")
                return head + f": {mt:g} tok/s of decode is {judged}.**" + first
            top = (v.expected_range.get("decode_tps") or (0.0, 0.0))[1]
            if mt and v.phase_status.get("decode_tps") == "above_expected" and p.hardware.get("kind") != "apple_soc" \
                    and mt > 2 * top:  # a little above a spill's estimate is ordinary (how much spills is uncertain)
                # (a Mac past its GPU limit pages to its SSD, at a speed no one can predict well: not doubted)
                # spilling makes a run slower, never faster: a rate above the range was measured elsewhere
                return (head + f". Yet {mt:g} tok/s is far more than this machine can do with this model while part "
                        "of it is read from system RAM: those numbers were probably measured on another machine, with a "
                        "smaller model or a smaller format. Which machine and model ran them?")
            if mt and card and v.phase_status.get("decode_tps") == "normal" and (not split_rng or mt >= 0.98 * split_rng[0]):
                # a split that runs as it should: said as such, not as a fault (a MoE run on purpose with its
                # experts in system RAM, a 70B on a 24 GB card and 64 GB of RAM)
                return (f"**It runs split between the {'card' if one else 'cards'} and system RAM (it needs about "
                        f"{shown[0]} GB, about {shown[1]} GB fits on the GPU): {mt:g} tok/s of decode is normal for that "
                        "split.**")
            if not mt and how_fast_split(v):
                return (f"**About {_fmt_rate(p.decode_tps_per_seq or p.decode_tps)} tok/s, split between the "
                        f"{'card' if one else 'cards'} and system RAM: it needs about {shown[0]} GB and about {shown[1]} GB "
                        "fits on the GPU.**")
            return head + (f" — that is why you see {mt:g} tok/s." if mt else ".")
        if p is not None and not mt and limit_raise_fits(v):
            return ("**Not as macOS is set by default, but one setting makes it fit: the model with the context you "
                    f"allocate needs more than the {_fmt_gb(p.memory.usable_gb)} GB or so macOS lets the GPU use until "
                    "you raise that limit (below).**")
        if p is not None and p.memory.fits and v.allocated_gb and v.allocated_tokens and p.memory.usable_gb \
                and v.allocated_gb > p.memory.usable_gb:
            # the allocated context (num_ctx / -c) is what does not fit; the conversation itself would
            return (f"**Not with the {v.allocated_tokens:,}-token context you allocate: with the weights it needs "
                    f"{v.allocated_gb:.1f} GB of {p.memory.usable_gb:.1f} GB usable, so part of it goes to system RAM and "
                    f"runs slower. With a context that fits (below) it runs at about {_fmt_rate(exp or p.decode_tps)} "
                    "tok/s.**")
        if p is not None and p.memory.fits and mt and exp and math.isfinite(p.memory.usable_gb or math.inf):
            # fits at the workload's size, near the limit: a larger context, or layers left off the GPU
            return (f"**Probably spilling out of GPU memory: {mt:g} tok/s instead of about {_fmt_rate(exp)}, with the "
                    f"model at {p.memory.required_gb:.1f} of {p.memory.usable_gb:.1f} GB usable, close to "
                    "the limit: a larger allocated context, or layers not on the GPU, put part of it in system RAM.**")
        return ("**It no longer fits in fast memory: part of the model or its KV cache has spilled to system RAM"
                + (f", so it runs at {mt:g} tok/s instead of about {_fmt_rate(exp)}." if (mt and exp) else ".") + "**")
    if mt or mp:
        what = (decode_words(v, mt) if mt else f"prefill {mp:,.0f} tok/s")
        if v.status == "no_expectation" and p is not None and mp and not mt:
            # the one way to no expectation with a prediction: a prompt too short to time prefill on
            return (f"**Prefill {mp:,.0f} tok/s measured on a prompt too short to judge (a request's fixed costs "
                    f"dominate); on a prompt of 512 tokens or more expect about {_fmt_rate(p.prefill_tps)} tok/s.**")
        if v.status == "no_expectation":
            return f"**{what[0].upper()}{what[1:]} measured; whether that is normal depends on the exact machine: say which one.**"
        rng = v.expected_range.get("decode_tps")
        if v.status == "below_expected" and p is None and mt and rng:
            return f"**Far slower than any machine of this kind: {what} measured, at least {_fmt_rate(rng[0])} tok/s expected.**"
        if v.status == "below_expected":
            return f"**Slower than it should be: {_slow_phases(v, exp)}.**"
        if v.status == "above_expected":
            if p is not None and mt and over_roofline(v):
                # a benchmark's single stream above the memory's roofline: not this machine, model or format
                return (f"**{mt:g} tok/s of decode is more than the {p.hardware['name']}'s memory can deliver for this "
                        f"model (≈ {_fmt_rate(p.decode_ceiling_tps)} tok/s at most): those numbers were measured on "
                        "another machine, or with a smaller model or format"
                        + ("" if v.benchmark_run or v.measured_streams else ", or are a total over several requests")
                        + (", or the line was edited" if v.measured_streams else "")
                        + ". Which machine and model ran them?**")
            if mt and mp and v.phase_status.get("decode_tps") != "above_expected":  # prefill is the fast one
                what = f"prefill {mp:,.0f} tok/s; decode {mt:g} tok/s is " + (
                    "normal" if not rng or mt >= rng[0] else f"at the low end (usual {_fmt_rate(rng[0])}–{_fmt_rate(rng[1])})")
            how = ("a cached prompt reads fast" if not (mt and v.phase_status.get("decode_tps") == "above_expected")
                   else "a very short answer, a draft model, or a rate summed over several requests")
            from advisor.diagnose import FOREIGN_X  # here: advisor.diagnose imports this module

            if v.benchmark_run and p is not None and mp and p.prefill_ceiling_tps and mp > FOREIGN_X * p.prefill_ceiling_tps:
                # a benchmark reads its whole prompt (no cache): far over the compute ceiling is not this machine
                return (f"**Prefill {mp:,.0f} tok/s is more than the {p.hardware['name']} can compute for this model "
                        f"(≈ {_fmt_rate(p.prefill_ceiling_tps)} tok/s at most): those numbers were measured on another "
                        "machine, or with a smaller model, or the line was edited. Which machine and model ran them?**")
            if mt and mp and rng and mt < rng[0] and v.phase_status.get("decode_tps") != "above_expected":
                # the fast phase is the prompt; the one people ask about when they stream is at the low end: both said
                prng = v.expected_range.get("prefill_tps")
                usual = f"; about {_fmt_rate(prng[0])}–{_fmt_rate(prng[1])} is usual" if prng else ""
                return (f"**Decode {mt:g} tok/s is at the low end for this set-up (usual {_fmt_rate(rng[0])}–"
                        f"{_fmt_rate(rng[1])}), though not far enough below to point at a fault; prompt reading "
                        f"({mp:,.0f} tok/s{usual}) is faster than usual.**")
            if v.benchmark_run and v.phase_status.get("decode_tps") != "above_expected":
                return (f"**Faster than usual for this hardware ({what}):** a good result. A benchmark's own run reads "
                        "the whole prompt (no cache), so recent builds' kernels beat the older runs this is calibrated on.")
            return f"**Faster than usual for this hardware ({what}):** worth checking how it was measured ({how})."
        phase = "prompt processing (prefill)" if v.bottleneck == "prefill" else "generation (decode)"
        if mp and p is not None and p.prefill_ceiling_tps and mp > 1.05 * p.prefill_ceiling_tps:
            # more than the machine can compute: a prompt cache served the prompt, not a measure of the hardware
            rest = f"; decode {mt:g} tok/s is normal" if mt and v.phase_status.get("decode_tps") == "normal" else ""
            return (f"**Prefill {mp:,.0f} tok/s is more than this machine can compute (≈ {p.prefill_ceiling_tps:,.0f} "
                    f"at most): a prompt cache served most of the prompt, so it says nothing about the hardware{rest}.**")
        if mt and rng and above_range(rng, mt) and (p is None or p.memory.fits is not False):
            return (f"**That is a good result for this hardware ({what}, above the usual {_fmt_rate(rng[0])}–"
                    f"{_fmt_rate(rng[1])} and within what its memory allows); {phase} is what limits you.**")
        if mt and rng and mt < rng[0] * 0.98 and v.status == "normal":
            # judged normal within the spread of such runs, yet under the usual range: said as both, never "normal" bare
            return (f"**About normal for this hardware, a little under the usual range ({what}; usual "
                    f"{_fmt_rate(rng[0])}–{_fmt_rate(rng[1])}, too close to point at a fault); {phase} is what limits you.**")
        if mt and v.status == "normal" and v.phase_status.get("decode_tps") == "normal" and low_end(exp, mt):
            usual = f", usual {_fmt_rate(rng[0])}–{_fmt_rate(rng[1])}" if rng else ""
            return (f"**Within the usual range for this hardware, but at its low end ({what}, about {_fmt_rate(exp)} "
                    f"expected{usual}); {phase} is what limits you.**")
        return f"**That is normal for this hardware ({what}); {phase} is what limits you.**"
    if p is not None and v.asks_memory and p.memory.fits and p.memory.usable_gb:
        need = v.allocated_gb if v.allocated_gb and v.allocated_tokens else p.memory.required_gb
        ctx = (f" with the {v.allocated_tokens:,}-token context" if v.allocated_gb and v.allocated_tokens
               else f" for a conversation of {p.prompt_tokens + p.gen_tokens:,} tokens")
        if need <= p.memory.usable_gb:
            return (f"**About {need:.1f} GB{ctx} (weights, KV cache and overhead): it fits the {p.memory.usable_gb:.1f} GB "
                    f"usable here, and streams at about {_fmt_rate(p.decode_tps_per_seq or p.decode_tps)} tok/s.**")
    if p is None:
        return ""
    line = plain_answer(p, v.target_tps, how_fast=v.asks_speed or bool(v.engine_answer or v.format_answer),
                        allocated_gb=v.allocated_gb)
    if (cannot := not_loadable(v.assumptions)) and not (v.engine_answer or v.format_answer):
        # "AWQ in Ollama": the answer is for the build the engine loads, and says so before any "Yes"
        rest = line.replace("**", "", 2)
        return (f"**Not as written: {cannot}.** Sized as {p.quant}, the build it loads at about that size: "
                + rest[:1].lower() + rest[1:])
    return line


def how_fast_split(v: Verdict) -> bool:
    """A question for the speed of a model larger than the card, run split with system RAM by a llama.cpp-family
    engine (a serving engine stops at load instead): the headline gives the number."""
    p = v.prediction
    return bool(v.asks_speed and p is not None and p.hardware.get("kind") in ("discrete_gpu", "datacenter_gpu")
                and classify_engine(p.backend)[0] not in ("vllm", "sglang", "tensorrt-llm"))


def decode_words(v: Verdict, mt: float) -> str:
    """"decode 42 tok/s", or for a rate summed over streams "decode 602.6 tok/s in all (9.4 each over 64 streams)"."""
    n = v.measured_streams
    return f"decode {mt:g} tok/s in all ({stream_words(v, mt)})" if n else f"decode {mt:g} tok/s"


def stream_rate(v: Verdict, mt: float) -> float:
    """Each stream's writing speed in a run summed over ``v.measured_streams``, tok/s: 1000 ÷ the run's mean TPOT (ms)
    when it printed one (what a user watching one answer sees; the total ÷ streams is lower by the time each request
    spent reading its prompt and queueing), else the total ÷ streams."""
    return v.measured_stream_tps or mt / (v.measured_streams or 1)


def stream_words(v: Verdict, mt: float) -> str:
    """"9.4 each over 64 streams", or with a TPOT "each of 256 streams writes at 10.5 tok/s (a token every 95 ms)"."""
    n = v.measured_streams
    if v.measured_stream_tps:
        return f"each of {n} streams writes at {v.measured_stream_tps:.1f} tok/s (a token every {1000 / v.measured_stream_tps:.0f} ms)"
    return f"{mt / (n or 1):.1f} each over {n} streams"


def _slow_phases(v: Verdict, exp_decode: float | None) -> str:
    """"prefill 120 tok/s measured, about 520 expected; decode 55 tok/s is normal": the phase(s) judged below what the
    hardware does named first, with what was expected (tok/s), and a measured phase that is normal said so. A verdict
    below expected for another reason (a setup rule, no phase judged low) names the decode rate, else the prefill."""
    p = v.prediction
    mt, mp = v.measured.get("decode_tps"), v.measured.get("prefill_tps")
    exp = {"decode_tps": exp_decode, "prefill_tps": p.prefill_tps if p else None}
    said = {"decode_tps": decode_words(v, mt) if mt else "", "prefill_tps": f"prefill {mp:,.0f} tok/s" if mp else ""}
    slow = [k for k in ("decode_tps", "prefill_tps") if said[k] and v.phase_status.get(k) == "below_expected"]
    if not slow:
        slow = ["decode_tps" if mt else "prefill_tps"]
    parts = [f"{said[k]} measured, about {_fmt_rate(exp[k])} expected" for k in slow]
    parts += [f"{said[k]} is normal" for k in ("decode_tps", "prefill_tps")
              if k not in slow and said[k] and v.phase_status.get(k) == "normal"]
    return "; ".join(parts)
