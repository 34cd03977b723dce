"""Options side by side in the chat: the machines (or models) a person named, from the Compare engine.

"Should we buy an M3 Ultra, two 4090s or an H100?" is answered in one reply: every option with its
numbers, from :func:`advisor.compare.compare_request` (the engine behind the Compare tab), so the
chat table and the Compare tab never disagree. :func:`compare_fill` gives the Compare tab's inputs
from the same conversation (model, lengths, users, stated memory: a 96 GB M3 Ultra stays 96 GB).

Model options on one machine ("the 8B or the 14B?") use :func:`advisor.service.predict_scenario`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from advisor.compare.request import MAX_CONCURRENCY_CAP
from advisor.errors import AdvisorError, AmbiguousError
from advisor.models import Scenario
from advisor.render.markdown import (
    TTFT_BROKEN_S,
    fmt_rate,
    fmt_s,
    tidy,
)
from knowledge.store import Store

__all__ = ["DEFAULT_TPS_TARGET", "DEFAULT_TTFT_TARGET_S", "Options", "candidate_names", "compare_fill",
           "candidate_name", "has_options", "hardware_options", "scale_out", "SCALE_OUT", "model_options", "options_for", "options_markdown", "short_name"]

# The Compare tab's default targets (one home; ui.app uses these too): a first word within the wait
# that starts to feel broken (TTFT_BROKEN_S, 10 s, the household threshold of render.markdown) for 95 %
# of requests, so a machine whose first word "feels broken" never "meets the targets"; and 10 tok/s
# per user (about twice reading speed).
DEFAULT_TTFT_TARGET_S = TTFT_BROKEN_S
DEFAULT_TPS_TARGET = 10.0
_MEM = re.compile(r"(\d{1,4}(?:\.\d+)?)\s*GB\b", re.I)
_VENDOR = re.compile(r"^(?:Apple|NVIDIA|AMD|Intel)\s+|GeForce\s+|Radeon\s+|\s*\(\d+-core GPU\)", re.I)


_COUNT = re.compile(r"^(\d+)\s*[×x]\s+")


def short_name(name: str, memory_gb: float | None = None) -> str:
    """A machine's name short enough for a chat table: ``Apple M3 Ultra (80-core GPU)`` → ``M3 Ultra 96 GB``;
    several cards keep their count and show one card's memory (``4× NVIDIA L40S``, 192 GB → ``4× L40S 48 GB``)."""
    count = _COUNT.match(name)
    n = int(count.group(1)) if count else 1
    out = _VENDOR.sub("", name[count.end():] if count else name).strip()
    if memory_gb and not _MEM.search(out):
        out += f" {memory_gb / max(n, 1):g} GB"
    return f"{n}× {out}" if count else out
_ID_IN_PARENS = re.compile(r"\(([a-z0-9][a-z0-9.\-]+)\)\s*$")


@dataclass
class Options:
    """A side-by-side answer: one row per option, the workload it was worked out for, notes.

    Attributes:
        kind: ``"hardware"`` (machines for one model) or ``"models"`` (models on one machine).
        rows: per option: ``name``, ``fits`` (bool), ``users_fit`` (int | None), ``first_word_s``
            (float | None, p95 under load for hardware), ``tps_each`` (float | None, decode tok/s per
            user), ``meets`` (bool | None, hardware only), ``memory_gb`` (float | None).
        workload: ``model``, ``quant``, ``prompt_tokens``, ``gen_tokens``, ``users``.
        notes: sentences for the folded detail (assumed candidates, unknown names).
        request: :class:`advisor.compare.CompareRequest` fields that reproduce it in the Compare tab.
        hint: the cheapest change that makes an option work when none does (Markdown), else ``""``.
        said: what was assumed or left out about the names as written (shown, not folded).
    """

    kind: str
    rows: list[dict[str, Any]]
    workload: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    request: dict[str, Any] | None = None
    hint: str = ""
    said: list[str] = field(default_factory=list)


def has_options(facts: Scenario | None) -> bool:
    """True when the facts name at least two machines or two models to weigh against each other."""
    if facts is None:
        return False
    hw = [x for x in ([facts.hardware] + list(facts.compare_hardware or [])) if x]
    models = [x for x in ([facts.model] + list(facts.compare_models or [])) if x]
    return len(dict.fromkeys(hw)) >= 2 or len(dict.fromkeys(models)) >= 2


def candidate_name(store: Store, text: str, memory_gb: float | None) -> tuple[str | None, list[str]]:
    """A compare candidate string for what was written (catalog id + stated memory), and notes."""
    from advisor.understand.text import split_stated_memory  # names are read by understanding
    from knowledge import catalog

    bare, written_gb = split_stated_memory(text)
    mem = written_gb or memory_gb
    name = bare.strip(" ,") or text
    notes: list[str] = []
    try:
        hid = catalog.resolve_hardware(store, name, memory_gb=mem).value.id
    except AmbiguousError as e:
        # The same pick every time (the resolver's order of equally close names can vary): the first id.
        found = sorted((m.group(1), c) for c in e.candidates[:4] if (m := _ID_IN_PARENS.search(c)))
        if not found:
            return None, [f"“{text}” could be several machines: {'; '.join(e.candidates[:3])}. Name one."]
        hid = found[0][0]
        notes.append(f"“{text}” could be {' or '.join(c.split(' (')[0] for _, c in found[:2])}: "
                     f"assumed the first; say which to change it.")
    except AdvisorError:
        return None, [f"I do not know the machine “{text}”, so it is left out."]
    return (f"{hid} {mem:g}GB" if mem else hid), notes


def candidate_names(store: Store, facts: Scenario) -> tuple[list[str], list[str]]:
    """The machines to compare as compare-engine candidate strings (``id`` or ``id 96GB``), and notes."""
    out: list[str] = []
    notes: list[str] = []
    written = [(facts.hardware, facts.memory_gb)] if facts.hardware else []
    written += [(x, None) for x in facts.compare_hardware or [] if x and x != facts.hardware]
    for text, mem in written:
        if text is None:
            continue
        name, ns = candidate_name(store, text, mem)
        notes += ns
        if name and name not in out:
            out.append(name)
    return out, notes


# CompareRequest fields in a fill (the rest of the fill are words for the tab).
_REQUEST_KEYS = ("model", "quant", "backend", "prompt_tokens", "gen_tokens", "context_tokens", "concurrency", "candidates",
                 "requests_per_minute", "shared_prefix_tokens", "ttft_target_s", "tps_per_user")


def compare_fill(store: Store, facts: Scenario) -> dict[str, Any] | None:
    """The Compare tab's inputs from the conversation's Situation, or None without a model.

    Returns the :class:`advisor.compare.CompareRequest` fields (``model`` id, ``quant``, ``backend``,
    ``prompt_tokens``, ``gen_tokens``, ``concurrency``, ``candidates`` as ``id`` or ``id 96GB``,
    ``requests_per_minute``, ``shared_prefix_tokens``, ``ttft_target_s``, ``tps_per_user``) plus
    ``stated`` and ``defaults``: short phrases for what came from the chat and what was assumed
    ("model Llama 3.3 70B: the default for comparing machines, no model was named"), and ``assumed``:
    the request fields that hold a default.
    """
    from advisor.understand import understand

    sit = understand(store, facts)
    wl = sit.workload
    model = sit.model.id if sit.model is not None else (facts.model or (f"{facts.params_b:g}B" if facts.params_b
                                                                         else None))
    if not model:
        return None
    names, _ = candidate_names(store, facts)
    label = model.split("/")[-1]
    stated: list[str] = [f"{len(names)} machines as named"]
    defaults: list[str] = []
    assumed: list[str] = []

    def put(key: str, text: str, said: bool) -> None:
        (stated if said else defaults).append(text)
        if not said:
            assumed.append(key)

    if facts.default_model and facts.model == facts.default_model:
        put("model", f"model {facts.default_model}: the default for comparing machines (no model was named in the "
                     "chat)", False)
    else:
        put("model", f"model {label}", True)
    put("prompt_tokens", f"prompts of {wl.prompt_tokens:,} tokens", "prompt_tokens" in wl.stated)
    put("gen_tokens", f"answers of {wl.gen_tokens:,} tokens", "gen_tokens" in wl.stated)
    put("concurrency", f"{wl.users} user{'s' if wl.users != 1 else ''}", "concurrency" in wl.stated)
    window = wl.context_window or sit.facts.context_window
    context = window if window and window > wl.prompt_tokens + wl.gen_tokens else None
    if context:
        stated.append(f"{context:,} tokens of context held for each user")
    quant = sit.quant.name if sit.quant is not None else None
    if quant:
        put("quant", f"weights {quant}", bool(facts.quant))
    ttft = wl.ttft_target_s or DEFAULT_TTFT_TARGET_S
    tps = wl.decode_target_tps or DEFAULT_TPS_TARGET
    put("ttft_target_s", f"first word within {ttft:g} s for 95 % of requests", bool(wl.ttft_target_s))
    put("tps_per_user", f"{tps:g} tok/s per user", bool(wl.decode_target_tps))
    rpm, in_flight = wl.requests_per_minute, wl.users
    if rpm and "concurrency" not in wl.stated:  # a service's rate without a head-count: the streams it keeps in flight
        from advisor.compare.engine import open_arrivals

        in_flight, rpm = open_arrivals(rpm * wl.users, wl.gen_tokens, wl.decode_target_tps)
        stated.append(f"{rpm * in_flight / 60:.3g} requests a second in all, about {in_flight:,} answers streaming at "
                      f"once at {tps:g} tok/s each (Little's law)")
    elif rpm:
        put("requests_per_minute", f"{rpm:g} requests per minute per user", True)
    else:
        put("requests_per_minute", "no request rate (each request on an idle machine)", False)
    users = min(in_flight, MAX_CONCURRENCY_CAP)
    if users < wl.users:
        stated.append(f"compared at {users:,} users at once, the most one comparison models; replicas for all "
                      f"{wl.users:,} below")
    return {"model": model, "quant": quant, "backend": facts.backend or None, "prompt_tokens": wl.prompt_tokens,
            "gen_tokens": wl.gen_tokens, "context_tokens": context, "concurrency": users, "users_total": in_flight,
            "candidates": names,
            "requests_per_minute": rpm,
            "open_rate_per_s": rpm * in_flight / 60 if rpm and "concurrency" not in wl.stated else None,
            "shared_prefix_tokens": min(wl.shared_prefix_tokens, max(wl.prompt_tokens - 1, 0)),
            "ttft_target_s": ttft, "tps_per_user": tps, "stated": stated, "defaults": defaults, "assumed": assumed}


def fill_request(fill: dict[str, Any]) -> dict[str, Any]:
    """The :class:`advisor.compare.CompareRequest` fields of a :func:`compare_fill` (unset ones left out)."""
    return {k: fill[k] for k in _REQUEST_KEYS if fill.get(k) is not None}


def hardware_options(store: Store, facts: Scenario) -> Options | None:
    """Every named machine for the facts' model and workload, through the Compare engine, best first.

    The request is the Compare tab's own (:func:`compare_fill`), so the chat and the tab give the same
    numbers; rows follow the engine's ranking (a machine that cannot hold the users is never above one
    that can).
    """
    from advisor import compare as cmp

    fill = compare_fill(store, facts)
    if fill is None or len(fill["candidates"]) < 2:
        return None
    _, said = candidate_names(store, facts)
    notes: list[str] = []
    req = cmp.CompareRequest(**fill_request(fill))
    stated = "quant" not in fill["assumed"]  # an assumed format: an option it does not fit gets its serving build
    result = cmp.compare_request(store, req, quant_stated=stated)
    rows = _rows(result)
    hint = ""
    # The cheapest change comes first: a setting on a machine named (no purchase), then more of a card named.
    if rows and not any(r["meets"] for r in rows):
        # The cheapest change that may work: the KV cache at 8 bits (half the memory per user).
        alt = _rows(cmp.compare_request(store, req.model_copy(update={"kv_quant": "q8_0"}), quant_stated=stated))
        good = [r for r in alt if r["meets"]]
        fp8 = _eight_bit_weights(store, req) if not good else None
        if fp8 is not None:
            hint = fp8
        elif good:
            b = min(good, key=lambda r: r["rank"])
            hint = (f"**Cheapest change that works:** keep the KV cache (each conversation's memory of the prompt) "
                    f"at 8 bits instead of 16 (`-ctk q8_0 -ctv q8_0 -fa` in llama.cpp): then the {b['name']} holds "
                    f"{_all_users(req.concurrency)} at {fmt_rate(b['tps_each'])} tok/s each, first word within "
                    f"{fmt_s(b['first_word_s'])}.")
    if rows and not hint and not any(r["meets"] for r in rows):
        hint = _replicas_hint(result)
    # a named option already does the job ("a 5090 or two used 3090s?"): the question is answered without adding more
    done = any(r["meets"] for r in rows) and (fill.get("users_total") or 0) <= req.concurrency
    if done and _our_household_list(facts):
        done = False  # our own shortlist for a home: two of a card that cannot hold the model alone is the usual buy
    more, why = ([], []) if done else scale_out(store, req, result, users=fill.get("users_total"))
    if more:
        req = req.model_copy(update={"candidates": [*(req.candidates or []), *more]})
        result = cmp.compare_request(store, req, quant_stated=stated)
        rows = _rows(result)
    said += why
    wl = {"model": result["model"], "quant": result["quant"], "prompt_tokens": result["prompt_tokens"],
          "gen_tokens": result["gen_tokens"], "users": fill.get("users_total") or result["concurrency"],
          "requests_per_minute": result.get("requests_per_minute"), "context_tokens": req.context_tokens,
          "open_rate_per_s": fill.get("open_rate_per_s")}
    notes += [tidy(a) for a in result.get("assumptions", [])[:1]]
    others = _other_models(store, facts, req, stated)
    hint = "\n\n".join(x for x in (hint, others) if x)
    return Options(kind="hardware", rows=rows, workload=wl, notes=notes,
                   request={**fill_request(fill), "candidates": list(req.candidates or [])}, hint=hint, said=said)


def _all_users(n: int) -> str:
    return "its one user" if n == 1 else f"all {n} users"


REPLICAS_SAID = "such servers"  # the words of a replicas sentence (:func:`scale_out`), which then leads the reply
SCALE_OUT = (2, 4, 8)  # GPU counts tried for a card that cannot hold the users alone (one server's usual counts)


def _our_household_list(facts: Scenario) -> bool:
    """The machines compared are the household buying shortlist the advisor chose (no machine was named)."""
    from advisor.intake._dialog import HOUSEHOLD_SHORTLIST

    return [facts.hardware, *(facts.compare_hardware or [])] == HOUSEHOLD_SHORTLIST


def scale_out(store: Store, req: Any, result: dict[str, Any], users: int | None = None) -> tuple[list[str], list[str]]:
    """For each single GPU compared that cannot hold every user, the fewest of it (:data:`SCALE_OUT`) that can.

    A team asking "H100 or L40S for a 70B and 40 users?" is asking how many: one card of each may hold no
    one at BF16, while two H100s or four L40S hold them all. Returns the extra candidates (``id`` × n, run
    as the engine runs several GPUs: tensor parallel for vLLM/SGLang, a layer split for llama.cpp) and one
    sentence each for the reply; none when every option already holds the users. When even the largest server
    (8 GPUs) holds only some of them, it is added with the number of such servers (data-parallel replicas, each
    serving its share) that hold all ``users`` (default: the request's).
    """
    from advisor import compare as cmp

    users = users or req.concurrency

    named = {c["hardware"]["id"] for c in result["candidates"]}
    hw_fit = {c["hardware"]["id"]: c["max_concurrency"] for c in result["candidates"]}
    bases = [c["hardware"] for c in result["candidates"]
             if c["max_concurrency"] < users and (c["hardware"].get("n_devices") or 1) == 1
             and c["hardware"].get("kind") in ("discrete_gpu", "datacenter_gpu")]
    tries = [f"{hw['id']}x{n}" for hw in bases for n in SCALE_OUT if f"{hw['id']}x{n}" not in named]
    if not bases:
        return [], []
    found = list(result["candidates"])
    if tries:
        found += cmp.compare_request(store, req.model_copy(update={"candidates": tries}))["candidates"]
    holds = {c["hardware"]["id"]: c for c in found if c["max_concurrency"] >= users}
    by_id = {c["hardware"]["id"]: c for c in found}
    target = req.tps_per_user or DEFAULT_TPS_TARGET
    extra, why = [], []
    for hw in bases:
        n = next((n for n in SCALE_OUT if f"{hw['id']}x{n}" in holds), None)
        if n is None:
            top = SCALE_OUT[-1]
            big = by_id.get(f"{hw['id']}x{top}") or {}
            held = big.get("max_concurrency") or 0
            if held >= 1:  # one server of 8 holds some: replicas of it serve the rest
                # users one server keeps at the target: its memory's count, or its aggregate decode ÷ the target
                keep = max(1, min(held, int((big.get("aggregate_decode_tps") or 0) / target) or held))
                short = short_name(hw["name"])
                if f"{hw['id']}x{top}" not in named:
                    extra.append(f"{hw['id']}x{top}")
                why.append(f"Even {top}× {short} holds {held:,} of the {users:,} users at once"
                           + (f" and keeps about {keep:,} of them at {target:g} tok/s each" if keep < held else "")
                           + f": about {-(-users // keep):,} {REPLICAS_SAID} (replicas, each serving its share of the "
                           f"users) serve all {users:,}" + (f" at {target:g} tok/s each." if keep < held else "."))
            continue
        if f"{hw['id']}x{n}" not in named:
            extra.append(f"{hw['id']}x{n}")
        short = short_name(hw["name"])
        short_of = ("cannot hold this model" if req.concurrency == 1 or not hw_fit.get(hw["id"])
                    else f"holds {hw_fit[hw['id']]} of the {req.concurrency} users")
        why.append(f"One {short} {short_of}: {n}× {short} added, the fewest that hold "
                   + ("it." if req.concurrency == 1 else "them all."))
    return extra, why


def _eight_bit_weights(store: Store, req: Any) -> str | None:
    """When no option meets the targets with 16-bit weights on a server engine: the options at FP8 (half the
    weight memory, what vLLM/SGLang serve with ``--quantization fp8``; Hopper, Ada and Blackwell GPUs run it
    natively), as a hint naming the best that then meets them (None if the weights are not 16-bit or none does)."""
    from advisor import compare as cmp
    from advisor.calibration import qclass

    if qclass(req.quant) != "float" or (req.backend or "").lower() not in ("vllm", "sglang", "tensorrt-llm", ""):
        return None
    alt = [r for r in _rows(cmp.compare_request(store, req.model_copy(update={"quant": "FP8"}))) if r["meets"]]
    if not alt:
        return None
    b = min(alt, key=lambda r: r["rank"])
    return (f"**Cheapest change that works:** serve the weights in FP8 (8 bits instead of 16: `--quantization fp8` "
            f"in vLLM or SGLang, or an FP8 checkpoint): then the {b['name']} holds {_all_users(req.concurrency)} at "
            f"{fmt_rate(b['tps_each'])} tok/s each, first word within {fmt_s(b['first_word_s'])}.")


def _rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Chat rows from a compare result, in its ranking order."""
    rows = []
    for c in sorted(result["candidates"], key=lambda c: c["rank"]):
        hw = c["hardware"]
        mem = (hw.get("memory_gb") or 0) * (hw.get("n_devices") or 1) or None
        fmt = f" at {c['quant']}" if c.get("quant") else ""  # an option evaluated at its own serving build
        rows.append({"name": short_name(hw["name"], mem) + fmt, "memory_gb": mem, "id": hw["id"],
                     "fits": bool(c["max_concurrency"]), "users_fit": c["max_concurrency"],
                     "first_word_s": c["ttft_s"].get("p95"), "tps_each": c["decode_tps_per_user"],
                     "tps_total": c["aggregate_decode_tps"], "meets": c["meets_targets"], "rank": c["rank"],
                     "status": c.get("status", "no_fit"), "holds": bool(c.get("holds_users")),
                     "price_usd": (c.get("cost") or {}).get("price_usd")})
    return rows


def _other_models(store: Store, facts: Scenario, req: Any, stated: bool) -> str:
    """The other models named beside the machines ("Qwen2.5 32B and maybe Llama 3.3 70B"): which of the machines each
    fits and how fast, one line each, through the same Compare engine; "" when only one model was named."""
    from advisor import compare as cmp

    names = [m for m in dict.fromkeys(facts.compare_models or []) if m and m != facts.model][:3]
    out = []
    for name in names:
        try:
            rows = _rows(cmp.compare_request(store, req.model_copy(update={"model": name, "quant": None if not stated
                                                                           else req.quant}), quant_stated=stated))
        except (AdvisorError, ValueError):
            continue
        fit, out_of = [r for r in rows if r["fits"]], [r for r in rows if not r["fits"]]
        each = ", ".join(f"{r['name']} ({fmt_rate(r['tps_each'])} tok/s)" for r in fit)
        if not fit:
            out.append(f"**{name}:** fits none of them.")
        elif not out_of:
            out.append(f"**{name}:** fits all of them ({each}).")
        else:
            out.append(f"**{name}:** fits only the {each}; not the {', '.join(r['name'] for r in out_of)}.")
    return "\n".join(f"- {x}" for x in out) if out else ""


def model_options(store: Store, facts: Scenario) -> Options | None:
    """Every named model on the facts' machine (single predictions at the same lengths and users)."""
    from advisor import service

    names = list(dict.fromkeys(x for x in [facts.model, *(facts.compare_models or [])] if x))
    if len(names) < 2 or not facts.hardware:
        return None
    rows, notes = [], []
    wl: dict[str, Any] = {}
    own: dict[str, list[str]] = {}
    for name in names:
        try:
            p = service.predict_scenario(store, facts.model_copy(update={"model": name, "params_b": None,
                                                                         "compare_models": None}))
        except AdvisorError as e:
            notes.append(f"{name}: {str(e).splitlines()[0]}")
            continue
        wl = wl or {"model": None, "quant": p.quant, "prompt_tokens": p.prompt_tokens, "gen_tokens": p.gen_tokens,
                    "users": p.concurrency, "hardware": p.hardware.get("name"), "target_tps": facts.target_decode_tps}
        if p.quant != wl["quant"]:  # a model served in its own format (gpt-oss: MXFP4): said in the title
            own.setdefault(p.quant, []).append(name)
        rows.append({"name": name, "fits": p.memory.fits, "users_fit": None, "first_word_s": p.ttft_s,
                     "tps_each": p.decode_tps_per_seq or p.decode_tps, "meets": None,
                     "memory_gb": p.memory.required_gb, "params_b": (p.model or {}).get("params_b")})
    if len(rows) < 2:
        return None
    if own:
        wl["quant"] = f"{wl['quant']} ({'; '.join(f'{q} for ' + ', '.join(ns) for q, ns in own.items())})"
    return Options(kind="models", rows=rows, workload=wl, notes=notes)


def options_for(store: Store, facts: Scenario) -> Options | None:
    """Hardware options when several machines are named, else model options, else None."""
    try:
        return hardware_options(store, facts) or model_options(store, facts)
    except (AdvisorError, ValueError):
        return None


def _replicas_hint(result: dict[str, Any]) -> str:
    """When every option is overloaded by the request rate: how many one-card machines as separate replicas carry the
    load (each serves its own requests; vLLM data parallel or a load balancer), from one card's busy fraction under it
    (⌈busy ÷ BUSY_OK⌉, :func:`advisor.asked.service_load`'s rule); "" when no one-card option holds the model."""
    from advisor.asked import BUSY_OK

    ones = [c for c in result.get("candidates", []) if c["hardware"].get("n_devices") == 1 and c.get("fits")
            and (c.get("load") or {}).get("utilisation_lower_bound")]
    if not ones:
        return ""
    c = min(ones, key=lambda c: c["load"]["utilisation_lower_bound"])
    busy = float(c["load"]["utilisation_lower_bound"])
    if busy <= 1.0:
        return ""
    need = math.ceil(busy / BUSY_OK)
    name = c["hardware"]["name"]
    return (f"**Replicas carry it:** this load keeps about {busy:.1f} of the {name} busy (one reads prompts at "
            f"{fmt_rate(c['prefill_tps'])} tok/s), so about {need} of them as separate replicas, each serving its own "
            f"requests (vLLM data parallel, or one server per card behind a load balancer), each about "
            f"{busy / need:.0%} busy. Replicas need no traffic between cards, so they beat one tensor-parallel group "
            "of the same cards on throughput.")


from advisor.render.options_text import options_markdown  # noqa: E402  (the text of an Options; re-exported)
