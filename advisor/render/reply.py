"""The chat's answers: short, plain words first, the detail folded away.

A first answer is the verdict in one sentence, the two or three numbers that matter with what they
feel like (reading speed, a first word that feels instant or broken), the cheapest fix that works
(and, when that is a purchase, what works without buying: a smaller model or format with its speed),
the lengths it was worked out for, then ``<details>`` blocks (numbers, why, other fixes,
assumptions). A follow-up says what changed since the previous answer and stays much shorter.
Every field term and format name in what is seen is explained where it first shows
(:func:`advisor.render.plain.gloss`); a fit with too thin a margin is said so (:mod:`advisor.diagnose.fit`).

Pure functions of :class:`~advisor.models.Verdict` / :class:`~advisor.models.Scenario`; no store.
Thresholds live in :mod:`advisor.render.markdown` (one home).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from advisor.diagnose.context_fit import CONTEXT_FITS
from advisor.diagnose.fit import roomy, thin_words
from advisor.models import Fix, Prediction, Scenario, Verdict
from advisor.perf.prediction import SYSTEM_RESERVE_SHARE  # the one home of the paging rule
from advisor.render.markdown import (
    COMFORTABLE_TPS,
    TTFT_BROKEN_S,
    WORDS_PER_TOKEN,
    above_range,
    answer_time,
    calibration_note,
    feel_speed,
    feel_wait,
    fmt_gb_apart,
    fmt_rate,
    fmt_s,
    gap_words,
    loaded_tps,
    low_end,
    prediction_markdown,
    queue_wait_s,
    tidy,
)
from advisor.render.plain import gloss
from advisor.render.verdict_line import (
    limit_raise_fits,
    limit_raise_thin,
    over_roofline,
    plain_verdict,
    stream_rate,
    stream_words,
)
from advisor.understand.engine import ENGINE_NAMES, classify_engine

# Fix ids that are purchases, and the changes named beside one "without buying" (advisor.diagnose.remedies).
PURCHASES = ("more_bandwidth", "more_compute")
NO_PURCHASE_IDS = ("smaller_model", "quantization", "fit_in_memory")
# Fixes a comfortable answer does not offer as "faster still": another model, or buying hardware.
NOT_FASTER_STILL = ("smaller_model", *PURCHASES)

__all__ = ["CHANGE_LABELS", "answer_markdown", "changes", "details", "feel_speed", "feel_wait",
           "followup_markdown", "said_changes", "visible_words"]

# Facts whose change a follow-up names, with how to say the value.
CHANGE_LABELS: dict[str, str] = {
    "hardware": "hardware", "memory_gb": "memory", "gpu_cores": "GPU cores", "cpu_cores": "CPU cores", "gpu_count": "GPUs",
    "model": "model", "params_b": "model size", "active_params_b": "active per token", "quant": "weight format",
    "backend": "engine",
    "prompt_tokens": "prompt", "gen_tokens": "answer", "depth": "conversation so far",
    "concurrency": "users", "measured_decode_tps": "your generation speed",
    "measured_prefill_tps": "your prompt speed", "context_window": "context window",
    "shared_prefix_tokens": "shared prefix", "n_gpu_layers": "GPU layers",
}


def _val(field: str, v: Any) -> str:
    if v is None:
        return "not set"
    if field == "memory_gb":
        return f"{v:g} GB"
    if field in ("prompt_tokens", "gen_tokens", "depth", "context_window", "shared_prefix_tokens"):
        return f"{int(v):,} tokens"
    if field in ("params_b", "active_params_b"):
        return f"{v:g}B"
    if field in ("measured_decode_tps", "measured_prefill_tps"):
        return f"{v:g} tok/s"
    if field == "concurrency":
        return f"{int(v)}"
    return str(v)


def changes(before: Scenario | None, after: Scenario) -> list[tuple[str, str, str, str]]:
    """What the person changed between two turns: ``(field, label, old, new)`` in reading order."""
    if before is None:
        return []
    out = []
    for f, label in CHANGE_LABELS.items():
        old, new = getattr(before, f, None), getattr(after, f, None)
        if f == "params_b" and after.model and after.model != before.model:
            continue  # a named model replaces the size: said once, under "model"
        if f == "model" and old is None and before.params_b:
            old = f"{before.params_b:g}B"
        if new is not None and old != new:
            out.append((f, label, _val(f, old), _val(f, new)))
    return out


def said_changes(ch: Sequence[tuple[str, str, str, str]], *, limit: int = 3) -> str:
    """``memory 16 GB → 32 GB; 20 users at once`` for :func:`changes` output (a new value alone when unset)."""
    parts = []
    for f, label, old, new in ch[:limit]:
        if f == "concurrency":
            parts.append(f"{new} users at once" if old == "not set" else f"users {old} → {new}")
        else:
            parts.append(f"{label} {new}" if old == "not set" else f"{label} {old} → {new}")
    return "; ".join(parts)


# ------------------------------------------------------------------------------------ pieces
def _per_user(p: Prediction) -> float:
    return p.decode_tps_per_seq or p.decode_tps


def _user_rate(p: Prediction) -> float:
    """Each user's decode rate on average: :func:`loaded_tps` when several users' prompts stall the streams."""
    return loaded_tps(p) or _per_user(p)


def _range_words(rng: tuple[float, float] | None, measured: float, ceiling: float | None, status: str | None) -> str:
    """"; about 15–23 is normal here", or for a measured rate above that range that the verdict still judged normal
    (within the hardware's ceiling: engines do reach such shares of the roofline) "; above the usual 15–23, within
    what this hardware allows (up to 51)" — never a range that contradicts the verdict."""
    if not rng:
        return ""
    band = f"{fmt_rate(rng[0])}–{fmt_rate(rng[1])}"
    if above_range(rng, measured) and ceiling and status == "normal" and measured > 1.05 * ceiling:
        # more than the machine can compute or read: a cache served it (the headline says so), never "within"
        return f"; above the usual {band} and above what this hardware can do (≈ {fmt_rate(ceiling)} at most)"
    if above_range(rng, measured) and ceiling and status == "normal":
        cap = f" (up to {fmt_rate(ceiling)})" if ceiling and ceiling >= measured else ""
        return f"; above the usual {band} for this set-up, within what this hardware allows{cap}"
    if measured < rng[0] * 0.98 and status == "normal":  # judged normal within the measurement's spread
        return f"; under the usual {band} for this set-up, though not far enough below to point at a fault"
    return f"; about {band} is normal here"


def _numbers(v: Verdict) -> list[str]:
    """The two or three numbers that matter, each with what it feels like."""
    p, out = v.prediction, []
    mt, mp = v.measured.get("decode_tps"), v.measured.get("prefill_tps")
    if mt:
        rng = v.expected_range.get("decode_tps")
        exp = _range_words(rng, mt, p.decode_ceiling_tps if p is not None and p.memory.fits is not False else None,
                           v.phase_status.get("decode_tps"))
        whole = answer_time(p, mt) if p is not None else ""
        n = v.measured_streams
        said = f"{mt:g} tok/s in all, {stream_words(v, mt)}" if n else f"{mt:g} tok/s"
        feel = _feel_measured(v, stream_rate(v, mt) if n else mt)
        out.append(f"**Your generation speed:** {said} ({feel}){exp}"
                   + (f"; {whole}" if whole else ""))
    if mp:
        rng = v.expected_range.get("prefill_tps")
        exp = _range_words(rng, mp, p.prefill_ceiling_tps if p is not None else None, v.phase_status.get("prefill_tps"))
        out.append(f"**Your prompt reading:** {mp:,.0f} tok/s{exp}")
    if p is None:
        return out
    m = p.memory
    if m.total_gb is not None and not m.fits and p.running and not mt:
        # the weights fit; the users' caches do not: a server queues the rest (the headline says how many run)
        need, usable = fmt_gb_apart(m.required_gb, m.usable_gb, least=1)
        out.append(f"**Memory:** all {p.concurrency} conversations would need {need} GB of {usable} GB usable: the weights "
                   f"and {p.running} users' KV caches fit, the rest queue (no weights leave the GPU)")
        return out
    if m.total_gb is not None and not m.fits:
        if v.bottleneck != "memory_fit" or mt:  # else the first sentence already says it
            need, usable = fmt_gb_apart(m.required_gb, m.usable_gb, least=1)
            out.append(f"**Memory:** needs {need} GB: the experts you placed in system RAM sit there, the rest in the "
                       f"{usable} GB of GPU memory usable"
                       if v.planned_split else f"**Memory:** needs {need} GB, only {usable} GB usable: does not fit")
        if not mt:
            whole = answer_time(p)
            paged = p.hardware.get("kind") not in ("discrete_gpu", "datacenter_gpu") and \
                m.required_gb > m.total_gb * (1 - SYSTEM_RESERVE_SHARE)
            card = p.hardware.get("kind") in ("discrete_gpu", "datacenter_gpu")
            ssd = any("paged in from the SSD for every token" in a for a in p.assumptions)
            tail = (": the part that does not fit is read from the disk for every token." if paged
                    else ": what fits neither the card nor the system RAM is read from the SSD for every token." if ssd
                    else ": the experts in system RAM are read by the CPU for every token." if v.planned_split
                    else ": the layers that do not fit run from system RAM on the CPU." if card
                    else ", and it crawls once it swaps.")
            cards = "cards" if (p.hardware.get("n_devices") or 1) > 1 else "card"
            label = ("In practice it will not run" if paged and m.required_gb > m.total_gb
                     else f"Split between the {cards} and system RAM" if card else "Even if it ran")
            if limit_raise_fits(v) or limit_raise_thin(v) is not None:
                label, tail = "Once the limit is raised", "."
            elif card and classify_engine(p.backend)[0] in ("vllm", "sglang", "tensorrt-llm"):
                # a serving engine does not run layers from system RAM: it stops at load
                label = f"As set up it will not load ({ENGINE_NAMES[classify_engine(p.backend)[0]]} stops with an out-of-memory error)"
                tail = ": the weights that do not fit would run from system RAM."
            out.append(f"**{label}:** " + ("about" if "will not load" not in label else "forced with --cpu-offload-gb, about")
                       + f" {fmt_rate(_per_user(p))} tok/s at best, first word after "
                       f"{fmt_s(p.ttft_s)}" + (f", {whole}" if whole else "") + tail)
        return out
    if not mt:
        users = f" for each of {p.concurrency} users streaming at once" if p.concurrency > 1 else ""
        if v.allocated_gb and p.memory.usable_gb and v.allocated_gb > p.memory.usable_gb:
            users += " with a context that fits"  # the allocated one does not (the memory line says so)
        whole = answer_time(p)
        loaded = loaded_tps(p)
        out.append(f"**Speed:** about {fmt_rate(_per_user(p))} tok/s{users} ({feel_speed(_per_user(p))})"
                   + (f"; ≈ {fmt_rate(loaded)} on average, with the pauses while other users' prompts are read"
                      if loaded is not None else "") + (f"; {whole}" if whole else ""))
    if not mp and v.measured_ttft_s and p.ttft_s and v.measured_ttft_s > 2 * p.ttft_s:
        out.append(f"**First word:** after {fmt_s(v.measured_ttft_s)} measured ({feel_wait(v.measured_ttft_s)}); about "
                   f"{fmt_s(p.ttft_s)} for one {p.prompt_tokens:,}-token prompt on its own: the rest is waiting")
    elif not mp and v.measured_ttft_s and p.ttft_s and p.prefill_tps and v.measured_ttft_s < 0.5 * p.ttft_s:
        # far quicker than the assumed prompt takes here: the prompt was shorter (its length, at this prefill rate)
        shorter = max(1.0, round(v.measured_ttft_s * p.prefill_tps, -1 if v.measured_ttft_s * p.prefill_tps >= 100 else 0))
        out.append(f"**First word:** after {fmt_s(v.measured_ttft_s)} measured ({feel_wait(v.measured_ttft_s)}); a "
                   f"{p.prompt_tokens:,}-token prompt takes about {fmt_s(p.ttft_s)} here, so yours was about "
                   f"{shorter:,.0f} tokens (at ≈ {fmt_rate(p.prefill_tps)} tok/s of prefill), or it ran on a faster device")
    elif not mp:
        burst = ""
        if p.concurrency > 1 and p.ttft_s:
            # the prompts are read one after another: if every user sends at once, the last one waits for them all
            last = p.concurrency * p.ttft_s
            burst = (f" on an idle server; up to ≈ {fmt_s(last)} for the last of {p.concurrency} prompts sent at "
                     f"the same moment ({feel_wait(last)})")
        out.append(f"**First word:** after about {fmt_s(p.ttft_s)} for a {p.prompt_tokens:,}-token prompt "
                   f"({feel_wait(p.ttft_s)}){burst}")
    if v.allocated_gb and m.usable_gb and v.allocated_gb > m.usable_gb:
        need, usable = fmt_gb_apart(v.allocated_gb, m.usable_gb, least=1)
        out.append(f"**Memory:** the {v.allocated_tokens:,}-token context you allocate needs {need} GB with the weights, "
                   f"of {usable} GB usable: does not fit (this conversation alone needs {m.required_gb:.1f} GB)")
    elif v.allocated_gb and v.allocated_tokens and m.usable_gb:
        # the context allocated (num_ctx / -c / "128k context") sizes the KV cache: its need is the memory answer
        need, usable = fmt_gb_apart(v.allocated_gb, m.usable_gb, least=1)
        each = f" for each of {p.concurrency} users" if p.concurrency > 1 else ""
        out.append(f"**Memory:** with the {v.allocated_tokens:,}-token context{each} it needs {need} of {usable} GB usable: "
                   f"fits" + (f", but {tight}" if (tight := thin_words(v.allocated_gb, m.usable_gb)) else "")
                   + f" (a conversation of {p.prompt_tokens + p.gen_tokens:,} tokens alone needs {m.required_gb:.1f} GB)")
    elif m.total_gb is None:
        out.append(f"**Memory:** needs about {m.required_gb:.0f} GB; say how much the machine has to check the fit")
    elif len(out) < 3 or not roomy(m.required_gb, m.usable_gb):
        tight = thin_words(m.required_gb, m.usable_gb)
        need, usable = fmt_gb_apart(m.required_gb, m.usable_gb, least=1)
        out.append(f"**Memory:** needs {need} of {usable} GB usable: fits"
                   + (f", but {tight}" if tight else ""))
    return out


def _feel_measured(v: Verdict, mt: float) -> str:
    """What a measured decode feels like; below what the hardware does, never a bare reassurance ("much faster
    than you read" under a "holding it back" headline): "fast enough to read along, but ≈ 3× below …"."""
    rng = v.expected_range.get("decode_tps")
    below = v.status == "below_expected" and bool(rng and mt < rng[0])
    if not below or mt < COMFORTABLE_TPS:
        return feel_speed(mt)
    p = v.prediction
    exp = _per_user(p) if p is not None else None
    words = f"≈ {mt * WORDS_PER_TOKEN:.0f} words a second"
    if exp and exp > mt:
        return f"{words}: fast enough to read along, but {gap_words(exp, mt)} below what this hardware does"
    return f"{words}: fast enough to read along, but below what this hardware does"


def _comfortable(v: Verdict) -> bool:
    """Nothing to fix for a person: it fits, streams faster than reading, the first word is not broken,
    and nothing measured is below what the hardware should do."""
    p = v.prediction
    if p is None or not p.memory.fits or v.status == "below_expected" or v.bottleneck in ("misconfiguration",
                                                                                          "memory_fit"):
        return False
    need = max(p.memory.required_gb, v.allocated_gb or 0.0)  # the context window set reserves its cache up front
    if p.memory.total_gb is not None and not roomy(need, p.memory.usable_gb):
        return False  # it fits with too thin a margin: a longer conversation spills it
    if v.target_tps and _per_user(p) < v.target_tps:
        return False  # under the speed the person wants: the headline says "No", so there is something to change
    return _per_user(p) >= COMFORTABLE_TPS and (p.ttft_s is None or p.ttft_s <= TTFT_BROKEN_S)


SETUP_IDS = ("fix_configuration", "gpu_offload")  # a setup fix: the check that confirms it is part of the fix


def _own_flag_costs(v: Verdict) -> bool:
    """The best fix undoes a placement the person chose (``--cpu-moe`` on a MoE that fits, too many experts in system
    RAM) for 1.5× or more: "nothing you need to change" would be wrong."""
    f = v.fixes[0]
    return f.remedy in ("offload_all", "more_experts_on_gpu", "moe_expert_offload") and (f.speedup or 1.0) >= 1.5


def _first_check(f: Fix) -> str:
    """The first check a setup fix names (its ``why`` carries "Check: a; b; c"), '' for other fixes."""
    if f.id not in SETUP_IDS or "Check: " not in f.why:
        return ""
    first = f.why.split("Check: ", 1)[1].split("; ")[0].strip().rstrip(".")
    return f" First check: {first}." if first else ""


def _low_end(v: Verdict) -> bool:
    """The measured decode is normal for the hardware but at the low end of its range (:func:`low_end`)."""
    p, mt = v.prediction, v.measured.get("decode_tps")
    return (p is not None and v.phase_status.get("decode_tps") == "normal"
            and low_end(p.decode_tps_per_seq or p.decode_tps, mt))


def _fix_line(f: Fix, label: str = "Best fix") -> str:
    return f"**{label}:** {tidy(f.title)} — {tidy(f.predicted_effect)}.{_first_check(f)}"


def _no_purchase(v: Verdict) -> Fix | None:
    """When the top fix is a purchase: the cheapest change that works without one (a smaller model or format)."""
    if not v.fixes or v.fixes[0].id not in PURCHASES:
        return None
    return next((f for f in v.fixes[1:] if f.id in NO_PURCHASE_IDS and f.fits_with_margin is not False
                 and (f.speedup or 0) > 1), None)


def _without_buying(v: Verdict) -> str:
    """"**Without buying anything:** …" beside a purchase as the top fix ('' when nothing cheaper works)."""
    alt = _no_purchase(v)
    return _fix_line(alt, "Without buying anything") if alt is not None else ""


def _assumed_line(p: Prediction | None, facts: Scenario | None) -> str:
    """The lengths (and format) the answer was worked out for, so a person can correct them."""
    if p is None:
        return ""
    facts = facts or Scenario()
    prompt = f"{p.prompt_tokens:,}-token prompts (≈ {p.prompt_tokens * WORDS_PER_TOKEN:,.0f} words)"
    answer = f"{p.gen_tokens:,}-token answers"
    bits = [prompt, answer]
    if p.concurrency > 1:
        bits.append(f"{p.concurrency} users at once")
    if p.depth:
        bits.append(f"{p.depth:,} tokens already in the conversation")
    fmt = f"weights in {p.quant}"  # glossed where it first shows (advisor.render.plain)
    stated = [f for f in ("prompt_tokens", "gen_tokens", "quant") if getattr(facts, f) is not None]
    tail = "" if len(stated) == 3 else " Tell me if yours differ."
    return f"<sub>Worked out for {', '.join(bits)}, {fmt}.{tail}</sub>"


def _why(p: Prediction) -> str:
    return (f"A request runs in two phases. **Prefill** reads your {p.prompt_tokens:,}-token prompt in one go: it "
            f"is limited by compute and sets the wait before the first word ({fmt_s(p.ttft_s)}). **Decode** then "
            f"writes the answer one token (≈ ¾ of a word) at a time, reading all "
            f"{p.weight_bytes_per_token_gb:.1f} GB of weights for every token: it is limited by memory bandwidth "
            f"({p.bandwidth_gbs:g} GB/s here) and sets the streaming speed.")


def why_text(v: Verdict) -> str:
    """Why the verdict says what it says, in one paragraph: the finding's reasoning, the two phases for this set-up, and
    why the first fix helps (the answer to a "why?" follow-up)."""
    parts = [tidy(v.explanation)] if v.explanation else []
    if v.prediction is not None:
        parts.append(_why(v.prediction))
    if v.fixes:
        parts.append(f"The first fix, {v.fixes[0].title[0].lower() + v.fixes[0].title[1:]}: {v.fixes[0].why}")
    return " ".join(p.strip() for p in parts if p.strip())


def details(v: Verdict, *, skip_fixes: int = 1, numbers: bool = True, why: bool = True) -> str:
    """The folded detail of an answer: numbers, why, other fixes, assumptions (``<details>`` blocks).

    A follow-up (``why=False``) folds only the numbers and the other fixes: the why and the
    assumptions were in the first answer.
    """
    p, blocks = v.prediction, []
    if p is not None and numbers:
        blocks.append(("The numbers", prediction_markdown(p)))
    reason = " ".join([_why(p)] if p is not None else []) + (" " + " ".join(tidy(s) for s in v.signals)
                                                               if v.signals else "")
    if why and reason.strip():
        blocks.append(("Why", reason.strip()))
    more = v.fixes[skip_fixes:5]
    if more:
        blocks.append(("Other fixes", "\n".join(
            f"{i}. **{tidy(f.title)}** — {tidy(f.predicted_effect)}. _{tidy(f.why)}_"
            for i, f in enumerate(more, skip_fixes + 1))))
    assumed = [tidy(a) for a in dict.fromkeys(v.assumptions)]
    cal = calibration_note(p) if p is not None else ""
    if why and (assumed or cal):
        blocks.append(("Assumptions", "\n".join(f"- {a}" for a in assumed) + (f"\n\n{cal}" if cal else "")))
    return "\n\n".join(f"<details><summary>{t}</summary>\n\n{body}\n\n</details>" for t, body in blocks)


def _notes(notes: Iterable[str], v: Verdict | None = None) -> str:
    known = set(v.assumptions) if v is not None else set()
    ns = [tidy(n) for n in dict.fromkeys(notes) if n and n not in known]
    return "\n".join(f"- {n}" for n in ns)


# ------------------------------------------------------------------------------------ answers
def answer_markdown(v: Verdict, *, facts: Scenario | None = None, notes: Sequence[str] = ()) -> str:
    """The first answer for a setup: verdict, 2–3 numbers, the best fix, what was assumed, folded detail.

    At most about 250 words outside the ``<details>`` blocks (:func:`visible_words`).
    """
    if v.felt_slow and v.signals:  # "it takes forever", no number: what it should do, the usual causes, a question
        first, _, more = v.signals[0].partition(". ")
        out = [f"**{first.rstrip('.')}.**", "\n".join(f"- {n}" for n in _numbers(v))]
        if more:
            out.append(more)
        if v.fixes:
            setup = v.fixes[0].id in ("fix_configuration", "gpu_offload")
            out.append(_fix_line(v.fixes[0], "First thing to check" if setup else "Best fix"))
            out.append(_without_buying(v))
    else:
        out = [plain_verdict(v, with_fix=False) or f"**{v.headline}**"]
        out.append("\n".join(f"- {n}" for n in _numbers(v)))
    if v.engine_answer:  # "should I switch to MLX?": answered beside the numbers, both sides predicted
        name, _, rest = v.engine_answer.partition(": ")
        # "how much context fits?" is what was asked: its answer leads, the speed follows
        out.insert(0 if name == CONTEXT_FITS else len(out), f"**{name}:** {rest}")
    if v.format_answer:  # "Q4_K_M or IQ1_S?": each format's memory and speed, and the pick
        out.append(f"**The formats you named:** {v.format_answer}")
    if v.felt_slow or over_roofline(v):
        pass  # its fix line is above, or the numbers are not this machine's: "nothing to change" would contradict
    elif v.fixes and _comfortable(v) and _low_end(v):  # usual, but at the low end: the check that finds why
        out.append(_fix_line(v.fixes[0], "Worth a look"))
    elif v.fixes and _comfortable(v) and not _own_flag_costs(v):
        # "faster still": a change to the set-up they chose, not another model or a purchase (those stay listed
        # under the other fixes); nothing when no such change helps
        f = next((x for x in v.fixes if x.id not in NOT_FASTER_STILL and (x.speedup is None or x.speedup > 1.05)), None)
        out.append("**Nothing you need to change.**" + (
            f" Faster still: {tidy(f.title)} — {tidy(f.predicted_effect)}." if f is not None else ""))
    elif v.fixes:
        out.append(_fix_line(v.fixes[0]))
        out.append(_without_buying(v))
    elif v.status == "normal":
        out.append("**Nothing to fix:** this is what the hardware does.")
    out += [x for x in (_notes(notes, v), _assumed_line(v.prediction, facts)) if x]
    seen: set[str] = set()
    bits = {v.prediction.quant: v.prediction.bits_per_weight} if v.prediction is not None else {}
    out = [gloss(x, seen, bits) for x in out if x]  # no jargon without a plain explanation in what is seen
    return "\n\n".join([*out, details(v)] if v.prediction is not None or v.fixes else out)


def _delta(a: float | None, b: float | None, fmt: Any, unit: str) -> str:
    if a is None or b is None:
        return f"{fmt(b)}{unit}"
    if fmt(a) == fmt(b):
        return f"still {fmt(b)}{unit}"
    return f"{fmt(a)} → {fmt(b)}{unit}"


def followup_markdown(v: Verdict, before: Verdict | None, *, facts: Scenario, before_facts: Scenario | None,
                      notes: Sequence[str] = ()) -> str:
    """A follow-up answer: what changed (stated facts and the numbers), in a few lines.

    Without a previous verdict it is the first answer (:func:`answer_markdown`).
    """
    if before is None or before.prediction is None or v.prediction is None:
        return answer_markdown(v, facts=facts, notes=notes)
    p, q = before.prediction, v.prediction
    ch = changes(before_facts, facts)
    if ch:
        head = f"**Changed:** {said_changes(ch)}."
    else:
        head = "**Same setup as before.**"
    fit_was, fit_now = p.memory.fits, q.memory.fits
    fit = ("still fits" if fit_was and fit_now else "now fits" if fit_now else
           "now does not fit" if fit_was else "still does not fit")
    if q.memory.total_gb is None:
        fit = "memory not known"
    speed = _delta(_user_rate(p), _user_rate(q), fmt_rate, " tok/s")
    wait = _delta(p.ttft_s, q.ttft_s, fmt_s, "")
    whole = answer_time(q)
    # several users: their average rate (prompts stall the streams) and, when not all fit, the queue a burst meets
    queue = queue_wait_s(q)
    slots = (f"; {q.running} of the {q.concurrency} users at once, the last of a burst starting after ≈ {fmt_s(queue)}"
             if queue else "")
    line = (f"{'With that' if ch else 'Still'}: {fit}{slots}; speed {speed}{' on average' if loaded_tps(q) else ''} "
            f"({feel_speed(_user_rate(q))}); first word {wait} ({feel_wait(q.ttft_s)})" + (f"; {whole}" if whole else "") + ".")
    # A new measured rate alone leaves the expectation as it was ("speed still 62.6"): the verdict line says it.
    # A single run judged by itself (llama-bench among stated users) is not a change of the users' speed.
    basis = p.concurrency == q.concurrency or any(c[0] == "concurrency" for c in ch)
    out = [head] if (ch and all(c[0].startswith("measured_") for c in ch)) or not basis else [head, line]
    measured_changed = any(v.measured.get(k) != before.measured.get(k) for k in ("decode_tps", "prefill_tps"))
    # The same measured numbers judged anew ("that was on an R9700", after a paste judged on another machine).
    rejudged = any(v.measured.values()) and (v.status != before.status or v.bottleneck != before.bottleneck)
    if (v.bottleneck == "memory_fit" and fit_was != fit_now) or (measured_changed and any(v.measured.values())) \
            or rejudged:
        pv = plain_verdict(v, with_fix=False)  # the numbers line above already says the rest
        if pv:
            out.append(pv)
    if v.fixes and (not before.fixes or before.fixes[0].id != v.fixes[0].id or not fit_now):
        out.append(_fix_line(v.fixes[0], "Best fix now"))
    n = _notes(notes, v)
    if n:
        out.append(n)
    seen: set[str] = {"tok/s"}  # the first answer explained it; the rest is explained where it first shows here
    out = [gloss(x, seen, {q.quant: q.bits_per_weight}) for x in out if x]
    out.append(details(v, skip_fixes=1 if v.fixes else 0, why=False))
    return "\n\n".join(x for x in out if x)


_TAG = re.compile(r"<[^>]+>")
_DETAILS = re.compile(r"<details>.*?</details>", re.S)


def visible_words(md: str) -> int:
    """Words a person sees before opening any ``<details>`` block (tables' pipes and Markdown marks excluded)."""
    text = _TAG.sub(" ", _DETAILS.sub(" ", md))
    text = re.sub(r"[|*_#>`-]+", " ", text)
    return len(text.split())
