"""What a question asks for beyond a verdict: what to buy, which model, how many cards, how many users.

The chat (:func:`advisor.service.ask`) reframes the facts with :func:`reframe` (a shortlist of machines or models
to compare, more of a named card) and leads its answer with :func:`users_at_once` when the person asked how many
users a machine holds.
"""

from __future__ import annotations

import math
import re

from advisor.errors import AdvisorError
from advisor.models import Prediction, Scenario
from advisor.understand.symptoms import read_symptoms
from knowledge.store import Store

__all__ = ["asks_users", "reframe", "users_at_once"]


def reframe(store: Store, facts: Scenario, text: str, notes: list[str]) -> Scenario:
    """The facts with what the question asks to compare: a buying question's shortlist of machines (no machine
    named), a "which model?" question's shortlist of models (a machine, no model), or 1, 2, 4 and 8 of a named card
    ("how many H100s?"). Each adds the sentence that says so to ``notes``."""
    from advisor.intake._text import sanitize

    text = sanitize(text)[0]  # as understanding reads it: "wat shud i by" is "what should i buy"
    if (not facts.hardware and not facts.compare_hardware and not facts.bandwidth_gbs
            and _buying(text) and not facts.measured_decode_tps and not facts.measured_prefill_tps):
        # no model named either: the comparison below takes the common default model and says so
        from advisor.intake._dialog import buying_shortlist

        picks, said = buying_shortlist(facts.concurrency, text or "")
        facts = facts.model_copy(update={"hardware": picks[0], "compare_hardware": picks[1:]})
        notes.append(said)
    if (facts.hardware and not (facts.model or facts.params_b or facts.compare_models) and not facts.measured_decode_tps
            and not facts.measured_prefill_tps and _which_model(text)):
        from advisor.intake._model_pick import model_shortlist

        models, said = model_shortlist(facts.use, text or "")
        facts = facts.model_copy(update={"model": models[0], "compare_models": models[1:]})
        notes.append(said)
    if (facts.hardware and not facts.compare_hardware and (facts.model or facts.params_b) and _how_many(text)
            and not facts.gpu_count and not re.match(r"\s*\d+\s*[x×]", facts.hardware)):
        from advisor.render.options import SCALE_OUT, candidate_name

        one, _ = candidate_name(store, facts.hardware, facts.memory_gb)
        if one is not None:
            hid = one.split()[0]
            # two 8-GPU servers: the next step for weights already in 8 bits or fewer (16-bit weights first hear that FP8
            # fits them on one server)
            counts = SCALE_OUT + ((16,) if _datacenter(store, hid) and _eight_bit(store, facts) else ())
            facts = facts.model_copy(update={"compare_hardware": [f"{hid}x{n}" for n in counts]})
            notes.append(f"You asked how many: compared 1, {', '.join(str(n) for n in counts)} of the "
                         f"{facts.hardware}" + (" (16: two servers of 8)." if 16 in counts else "."))
    if (facts.hardware and not facts.compare_hardware and not facts.measured_decode_tps
            and not facts.measured_prefill_tps and not _how_many(text) and _upgrading(text)):
        picks = upgrade_shortlist(store, facts, text)
        if picks:
            mine = facts.hardware + (f" {facts.memory_gb:g}GB" if facts.memory_gb and not re.search(
                r"\d\s*(?:gb|g)\b", facts.hardware, re.I) else "")
            facts = facts.model_copy(update={"compare_hardware": [mine, *picks]})
            notes.append(f"You asked what to upgrade to: compared your {facts.hardware} with {', '.join(picks)}; "
                         "name machines to compare others.")
    return facts


# "Which laptop should I buy?", "what should I upgrade to?" from someone who named their machine: an upgrade question
UPGRADING = re.compile(
    r"\b(?:which|what)\s+(?:new\s+)?(?:laptop|notebook|mac(?:book)?|gpu|graphics\s+card|card|machine|computer|pc|"
    r"desktop|hardware|setup|rig|upgrade)\s+(?:should|would|do|to|could|can|must)\s+(?:i|we)?\s*(?:buy|get|upgrade|"
    r"choose|pick|purchase|recommend|go)?"
    r"|\bwhat\s+(?:should|would|could|do)\s+(?:i|we)\s+(?:upgrade|buy|get|switch|move)\s+(?:to|next|instead|for\s+(?:more\s+)?speed)"
    r"|\b(?:which|what)\s+upgrade\b|\bupgrade\s+(?:options|path|advice|suggestions?)\b"
    r"|\b(?:time|worth\s+it|worth)\s+to\s+upgrade\b|\bworth\s+upgrading\b|\bshould\s+(?:i|we)\s+upgrade\b(?!\s+(?:to|the\s+ram))"
    r"|\bshould\s+(?:i|we)\s+(?:buy|get)\s+(?:a\s+)?(?:new|better|faster|bigger)\s+\w+"
    r"|\bwhat\s+(?:to|should\s+(?:i|we))\s+(?:buy|get)\b", re.I)


def _upgrading(text: str) -> bool:
    return bool(UPGRADING.search(text or ""))


# Upgrades by the kind of machine the person has (catalog names, current machines with measured families): a Mac or
# a laptop's next step is a Mac with more bandwidth; a desktop GPU's a card with more; a CPU desktop's a card.
_UPGRADES = {
    "apple_soc": ["M4 Pro 20-core 48GB", "M4 Max 40-core 128GB", "M3 Ultra 80-core 256GB"],
    "portable": ["M4 Pro 20-core 48GB", "M4 Max 40-core 128GB", "Ryzen AI Max+ 395 128GB"],
    "discrete_gpu": ["RTX 5060 Ti 16GB", "RTX 3090", "RTX 4090", "RTX 5090"],
    "cpu": ["RTX 5060 Ti 16GB", "RTX 3090", "M4 Max 40-core 128GB"],
    "datacenter_gpu": ["L40S", "A100 80GB SXM", "H100 SXM", "H200", "MI325X", "B200"],
}
UPGRADE_STEP = 1.3  # an upgrade has at least this × the bandwidth (decode) or this × the compute (prefill) of theirs


def upgrade_shortlist(store: Store, facts: Scenario, text: str) -> list[str]:
    """Up to three machines to compare the person's own with for "what should I upgrade to?" (:data:`_UPGRADES`):
    of their kind (a laptop's: portable unified-memory machines; an APU's too), each with at least
    :data:`UPGRADE_STEP` × their bandwidth or compute, in the list's order. Empty when their machine is unknown."""
    from knowledge import catalog

    try:
        mine = catalog.resolve_hardware(store, facts.hardware or "").value
    except AdvisorError:
        return []
    if mine is None:
        return []
    kind = mine.kind
    portable = read_symptoms(text).portable  # a laptop, mini PC or board computer: no graphics card goes in
    if kind in ("apu", "cpu") and (portable or mine.kind == "apu"):
        kind = "portable"
    elif kind == "apple_soc" and portable:
        kind = "portable"
    out: list[str] = []
    # a server of several cards is compared with servers of as many of the next cards (8× H100 → 8× H200, 8× B200)
    n = max(1, mine.n_devices or 1)
    bw, tf = mine.bandwidth_gbs, mine.fp16_tflops or 0
    for name in _UPGRADES.get(kind, []):
        try:
            h = catalog.resolve_hardware(store, name).value
        except AdvisorError:
            continue
        if h is None or h.id == mine.id or h.id == mine.id.rsplit("x", 1)[0]:
            continue
        if h.bandwidth_gbs >= UPGRADE_STEP * bw or (tf and (h.fp16_tflops or 0) >= UPGRADE_STEP * tf):
            out.append(f"{n}x {name}" if n > 1 else name)
    return out[:3]


def _eight_bit(store: Store, facts: Scenario) -> bool:
    """The weights are in 8 bits or fewer: the format stated, else the one the model is released in (FP8, MXFP4)."""
    from knowledge import catalog

    released = None
    if not facts.quant and facts.model:
        try:
            released = catalog.release_format(catalog.resolve_model(store, facts.model).value.id)
        except AdvisorError:
            released = None
    q = (facts.quant or released or "").upper()
    return bool(q) and not any(f in q for f in ("BF16", "FP16", "F16", "F32"))


def _datacenter(store: Store, hw_id: str) -> bool:
    """A datacenter card, sold in 8-GPU servers (a "how many?" answer goes on to two of them)."""
    from knowledge import catalog

    try:
        return catalog.get_hardware(store, hw_id).kind == "datacenter_gpu"
    except AdvisorError:
        return False


def asks_users(text: str | None) -> bool:
    """"How many users / people / requests can it hold?"."""
    from advisor.intake._text import sanitize

    return bool(_HOW_MANY_USERS.search(sanitize(text or "")[0]))


def _buying(text: str | None) -> bool:
    from advisor.intake._dialog import BUYING

    return bool(BUYING.search(text or ""))


_HOW_MANY_USERS = re.compile(r"\bhow\s+many\s+(?:concurrent\s+|simultaneous\s+|parallel\s+)?(?:users|people|ppl|folks|"
                             r"requests|sessions|conversations|chats|streams|clients|seats)\b(?:\s+at\s+once)?\s+"
                             r"(?:can|could|will|would|does|do|is|are|for|on|with|fit)\b"
                             r"|\bwie\s+viele\s+(?:gleichzeitige\s+)?(?:nutzer|benutzer|user|leute|anfragen)\b"
                             r"|\bcu[aá]ntos\s+usuarios\b|\bcombien\s+d['’]?\s*utilisateurs\b", re.I)


def users_at_once(store: Store, facts: Scenario, p: Prediction) -> str | None:
    """"How many users can it hold?": the conversations that fit in memory at once, the speed each gets with that
    many streaming (the step model at that batch), and how many keep each at the per-user target, in one paragraph.

    Each conversation holds its context: the stated context window when one was given ("8k context each"), else
    prompt + answer (+ depth). Engine and weight format are those of many users on that machine
    (:func:`advisor.understand.resolve_scenario` at :data:`_MANY_USERS` users when none were stated: vLLM with the
    checkpoint's BF16 weights on a datacenter GPU), so the count and the speed are for one set-up, and it is
    named. The target is the stated one, else :data:`advisor.render.options.DEFAULT_TPS_TARGET` (10 tok/s)."""
    from advisor import service
    from advisor.compare.capacity import max_concurrency
    from advisor.compare.request import MAX_CONCURRENCY_CAP
    from advisor.perf.moe import weights_bpw
    from advisor.render.markdown import engine_label
    from advisor.render.options import DEFAULT_TPS_TARGET
    from advisor.understand import resolve_scenario as _resolve

    many = facts if (facts.concurrency or 1) > 1 else facts.model_copy(update={"concurrency": _MANY_USERS})
    ctx = max(p.depth + p.prompt_tokens + p.gen_tokens, facts.context_window or 0)
    target = facts.target_decode_tps or DEFAULT_TPS_TARGET

    # Each stream's step reads its whole context: the speeds are for every conversation at its full context.
    full = max(facts.depth or 0, ctx - p.prompt_tokens - p.gen_tokens)

    def each_at(k: int) -> Prediction:
        return service.predict_scenario(store, many.model_copy(update={"concurrency": k, "depth": full or None}))

    fallback = ""
    try:
        res = _resolve(store, many)
        hw, model, quant = res.hardware, res.model, res.quant
        if hw is None or model is None or quant is None:
            return None
        n = max_concurrency(hw, model, weights_bpw(model, quant), ctx)
        server = service.predict_scenario(store, many)
        if n >= 1:  # the speeds at any count use the set-up counted (engine and format), not one user's default
            many = many.model_copy(update={"backend": many.backend or server.backend, "quant": many.quant or server.quant})
        if n < 1 and many is not facts:  # the many-user set-up does not fit: count in the one answered below
            fallback = (f" {engine_label(server.backend)} with {server.quant} weights, what many users are usually "
                        f"served with here, does not fit; counted as answered below instead.")
            many = facts.model_copy(update={"concurrency": 2, "backend": facts.backend or p.backend,
                                            "quant": facts.quant or p.quant})
            res = _resolve(store, many)
            if res.quant is None:
                return None
            n = max_concurrency(hw, model, weights_bpw(model, res.quant), ctx)
        if n < 1:
            return None
        at = each_at(n)
        rate = at.decode_tps_per_seq or at.decode_tps
        keep = None
        if rate < target:  # the most at once that still get the target each (per-user speed falls with users)
            lo, hi = 0, n
            while hi - lo > 1:
                mid = (lo + hi) // 2
                q = each_at(mid)
                lo, hi = (mid, hi) if (q.decode_tps_per_seq or q.decode_tps) >= target else (lo, mid)
            keep = lo
    except AdvisorError:
        return None
    count = f"at least {n:,}" if n >= MAX_CONCURRENCY_CAP else f"about {n:,}"
    why = "your target" if facts.target_decode_tps else "about twice reading speed"
    if keep is None:
        kept = f" That is at least {target:g} tok/s each ({why}) even with all of them."
    elif keep == 0:
        kept = f" Even one conversation gets under {target:g} tok/s ({why}) here."
    else:
        kept = f" To keep each at {target:g} tok/s or more ({why}): about {keep:,} at once."
    full_ctx = " at its full context" if full else ""
    if n == 1:
        kept = kept.replace(" even with all of them", "")
        speed = f"alone{full_ctx}, it gets ≈ {rate:.1f} tok/s."
    else:
        speed = (f"with all {n:,} streaming{full_ctx.replace('its', 'their')}, each gets ≈ {rate:.1f} tok/s "
                 f"({at.decode_tps:,.0f} tok/s in all).")
    convs = "conversation" if n == 1 else "conversations"
    return (f"**Users at once: {count} {convs} of {ctx:,} tokens fit in memory together** (weights, plus "
            f"each one's KV cache), served by {engine_label(at.backend)} with {at.quant} weights; {speed}{kept}"
            f"{fallback} Fewer users, faster each; longer conversations, fewer fit.")


_MANY_USERS = 64  # users assumed to choose the engine and format of a "how many users" answer (none stated)


def _which_model(text: str | None) -> bool:
    from advisor.intake._model_pick import WHICH_MODEL

    return bool(WHICH_MODEL.search(text or ""))


def _how_many(text: str | None) -> bool:
    from advisor.intake._dialog import HOW_MANY

    return bool(HOW_MANY.search(text or ""))


# Share of a machine's time a service may fill before bursts queue (Poisson arrivals: waits grow fast above it).
BUSY_OK = 0.7


def service_load(store: Store, facts: Scenario) -> tuple[str, bool] | None:
    """Whether one machine carries a service's stated request rate ("10 req/s peak", "600 requests per minute in
    total", no users said): (the sentence that answers it, whether it keeps up), or None when no such rate is stated.

    Its time per second splits into prompt reading (rate × prompt tokens ÷ prefill tok/s) and writing the answers
    (rate × answer tokens ÷ the aggregate decode at the most streams its memory holds, continuous batching); above
    1 it cannot keep up, and ⌈busy ÷ :data:`BUSY_OK`⌉ such machines as replicas carry it."""
    from advisor.render.markdown import fmt_rate
    from advisor.service import predict_scenario

    rpm = facts.requests_per_minute or 0
    if facts.concurrency or rpm < 60 or not facts.hardware or not (facts.model or facts.params_b) or facts.compare_hardware:
        return None
    base = facts.model_copy(update={"requests_per_minute": None, "compare_hardware": None})
    try:
        one = predict_scenario(store, base)
        full = predict_scenario(store, base.model_copy(update={"concurrency": MAX_STREAMS}))
    except AdvisorError:
        return None
    streams = full.running or (MAX_STREAMS if full.memory.fits else None)
    each = full.decode_tps_per_seq or full.decode_tps
    if not (one.prefill_tps and one.memory.fits and streams and each):
        return None
    rps = rpm / 60
    agg = each * streams
    pre, dec = rps * one.prompt_tokens / one.prefill_tps, rps * one.gen_tokens / agg
    busy = pre + dec
    name = one.hardware.get("name") or facts.hardware
    def share(x: float) -> str:
        return f"{x:.0%} of its time" if x <= 1 else f"{x:.1f}× its time"

    parts = (f"reading the prompts takes {share(pre)} ({rps * one.prompt_tokens:,.0f} of about "
             f"{fmt_rate(one.prefill_tps)} tok/s of prefill) and writing the answers {share(dec)} "
             f"({rps * one.gen_tokens:,.0f} of about {fmt_rate(agg)} tok/s with {streams} streams batched)")
    if busy <= BUSY_OK:
        return f"**At {rps:g} requests a second the {name} keeps up, about {busy:.0%} busy:** {parts}.", True
    if busy <= 1:
        return (f"**At {rps:g} requests a second the {name} keeps up only just, about {busy:.0%} busy, so bursts "
                f"queue:** {parts}. A second one as a replica leaves room."), True
    need = math.ceil(busy / BUSY_OK)
    tail = " (fewer with a prefix cache, if the prompts repeat)" if pre > dec else ""
    return (f"**No: {rps:g} requests a second is about {busy:.1f}× what one {name} carries:** {parts}. About {need} "
            f"of them as replicas carry it{tail}."), False


MAX_STREAMS = 4096  # streams asked for to find how many the memory holds (the prediction's ``running``)


def over_context(store: Store, facts: Scenario) -> tuple[Scenario, str] | None:
    """A prompt (and its answer) longer than the model's context window: the facts with the prompt cut to what the
    model reads, and the sentence that says so; None when it fits or the window is not known."""
    from knowledge import catalog

    if not facts.model or not facts.prompt_tokens:
        return None
    try:
        match = catalog.resolve_model(store, facts.model)
    except AdvisorError:
        return None
    if match.confidence < 0.95:  # "llama 8B": a version assumed, whose window may not be the one run
        return None
    model = match.value
    limit, gen = model.max_context, facts.gen_tokens or 300
    if not limit or facts.prompt_tokens + gen <= limit or limit <= gen:
        return None
    name = model.id.split("/")[-1]
    cut = limit - gen
    line = (f"**{name} reads at most {limit:,} tokens, so a {facts.prompt_tokens:,}-token prompt does not fit its "
            f"context window on any machine:** split the document (retrieve the parts that matter, or summarise it in "
            f"pieces) or pick a model with a longer context. Below, the longest prompt it reads ({cut:,} tokens).")
    return facts.model_copy(update={"prompt_tokens": cut}), line
