"""The conversation: merge each message into the facts, say what is missing, ask one question.

Only the hardware (or its bandwidth) and the model (or its size) are needed to answer; the memory
size is asked when the machine ships in several sizes. Everything else has a default that the
answer states (:func:`defaults_for`).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pydantic import ValidationError

from advisor.errors import AdvisorError, AmbiguousError, NotFoundError
from advisor.intake._correct import self_corrected
from advisor.intake._cpu import default_cpu_memory
from advisor.intake._extract import TROUBLE, extract
from advisor.intake._hardware import shown_name
from advisor.intake._paste import looks_like_tool_output
from advisor.intake._replies import SMALLEST_ANSWER, picked_choice, plain_answer, smallest_memory
from advisor.intake._schema import FACT_FIELDS, Extraction, IntakeResult, Question
from advisor.intake._text import WORDNUM, fmt, word_number
from advisor.models import Hardware, Scenario
from knowledge import catalog
from knowledge.store import Store

log = logging.getLogger(__name__)

DEFAULT_QUANT = "Q4_K_M"  # what Ollama and most GGUF downloads use
DEFAULT_QUANT_MLX = "MLX 4-bit"  # mlx-community's usual conversion
DEFAULT_QUANT_SERVER = "BF16"  # vLLM / SGLang / TensorRT-LLM serve the checkpoint's 16-bit weights by default


def default_quant(backend: str | None, model: str | None) -> tuple[str, str]:
    """The weight format assumed when none is stated, and why (one rule for the chat and the resolver).

    MLX engines → mlx-community's 4-bit; a model released in MXFP4 (gpt-oss) → MXFP4 everywhere else (its GGUFs
    keep it); vLLM / SGLang / TensorRT-LLM → the checkpoint's own weights: its release format (FP8 for
    DeepSeek-V3/R1, :func:`knowledge.catalog.release_format`), else BF16; anything else → Q4_K_M (Ollama's and
    most GGUFs'). ``model``: a catalog id or the name as written.
    """
    from advisor.understand.engine import classify_engine

    if "mlx" in (backend or "").lower():
        return DEFAULT_QUANT_MLX, "mlx-community's usual 4-bit conversion"
    released = catalog.release_format(model) or (
        "MXFP4" if "gpt-oss" in (model or "").lower().replace("_", "-").replace(" ", "-") else None)
    if released == "MXFP4":
        return "MXFP4", "the format the model is released in (its MoE weights ship as MXFP4)"
    if backend and classify_engine(backend)[0] in ("vllm", "sglang", "tensorrt-llm"):
        if released:
            return released, "the checkpoint's own weights (the format it is released in), what vLLM/SGLang serve"
        return DEFAULT_QUANT_SERVER, "the checkpoint's own 16-bit weights, what vLLM/SGLang serve unless told otherwise"
    return DEFAULT_QUANT, "what Ollama and most GGUF downloads use"
DEFAULT_PROMPT_TOKENS: dict[str | None, int] = {
    "chat": 500, "coding_agent": 4_000, "rag": 4_000, "summarising": 2_000, "batch": 1_000, None: 500,
}
DEFAULT_GEN_TOKENS = 300
# Options compared before the model is named are compared on this one (the Compare tab's default too).
DEFAULT_COMPARE_MODEL = "Llama 3.3 70B"
DEFAULT_TEAM_CODING_MODEL = "Qwen3 Coder Next"  # a coding team's: 80B MoE, 3B active (fast per user at a team's batch)
DEFAULT_HOME_CODING_MODEL = "Qwen3 Coder 30B A3B"  # one coder's: fits 24-32 GB at Q4, 3B active
DEFAULT_HOME_MODEL = "Qwen3.6 27B"  # one person's or a household's comparison with no model named: a current model for 24–32 GB
DEFAULT_CONCURRENCY = 1
_HOUSEHOLD_WORDS = re.compile(r"\b(?:family|household|home|kids?|children|wife|husband|partner|son|daughter|parents|"
                              r"grandma|grandpa|roommates?|flatmates?)\b", re.I)


def default_model(concurrency: int | None, use: str | None, text: str | None) -> tuple[str, str]:
    """(model, who it is a common choice for) when a comparison names no model: a team's (4+ people, not a
    household) or one person's, a coding model for coding (:data:`DEFAULT_TEAM_CODING_MODEL`,
    :data:`DEFAULT_HOME_CODING_MODEL`), else :data:`DEFAULT_COMPARE_MODEL` / :data:`DEFAULT_HOME_MODEL`."""
    home = bool(_HOUSEHOLD_WORDS.search(text or ""))
    team = (concurrency or 1) >= 4 and not home
    coding = use == "coding_agent"
    if coding:
        return (DEFAULT_TEAM_CODING_MODEL, "a coding team") if team else (DEFAULT_HOME_CODING_MODEL, "one coder")
    if team:
        return DEFAULT_COMPARE_MODEL, "a team"
    return DEFAULT_HOME_MODEL, "a household" if home else "one person"
DEFAULT_DEPTH = 0

# "What GPUs should we buy to serve a 70B to 40 users?", "what hardware do I need for qwen 32b?": a buying question
# with no machine named is answered on a shortlist (buying_shortlist), never with "which GPU is it?".
BUYING = re.compile(
    r"\b(?:what|which|wich|whcih|witch)\s+(?:\w+\s+){0,2}(?:gpus?|cards?|graphics\s+cards?|hardware|machines?|computers?|"
    r"set-?up|rig|servers?|boxe?s?|macs?|accelerators?)\b[^.?!]{0,60}?\b(?:buy|by|get|need|use|recommend|choose|pick|"
    r"purchase|rent|for|to\s+(?:run|serve|host))\b"
    r"|\bwhat\s+(?:hardware|gpus?|machines?|set-?up)\s*(?:\?|$)"  # "… to 1000 users, what hardware?"
    r"|\bwhat\s+(?:do|would|should|must)\s+(?:i|we)\s+(?:need|buy|get|purchase)\b"
    r"|\bwhat\s+should\s+(?:i|we)\s+(?:buy|get)\b"
    r"|\bwhat\s+(?:\w+\s+)?(?:to|do\s+(?:i|we)|can\s+(?:i|we))\s+(?:buy|purchase)\b"  # "what to buy", "what hardware to buy"
    r"|\b(?:buying|purchase|purchasing)\s+(?:advice|recommendations?|decision|guide)\b"
    r"|\b(?:which|what)\s+(?:one\s+)?(?:should\s+(?:i|we)\s+|to\s+)(?:buy|get|purchase)\b"
    r"|\b(?:recommend|suggest)\w*\s+(?:me\s+|us\s+)?(?:a\s+|some\s+|the\s+)?(?:gpus?|cards?|hardware|machines?|set-?up|rig)\b"
    r"|\bhow\s+many\s+(?:gpus|cards|h100s|h200s|a100s|l40s|4090s|3090s|5090s)\b"
    r"|\b(?:hardware|gpu)\s+(?:recommendations?|advice|suggestions?)\b"
    r"|\bbest\s+(?:\w+\s+)?(?:gpus?|cards?|graphics\s+cards?|hardware|macs?|machines?|set-?up|rig|computers?)\b"
    r"[^.?!]{0,40}?\b(?:for|to)\b"  # "best gpu under 1000 dollars for llama 3.1 8b"
    r"|\b(?:want|need|looking|plan\w*|going)\s+to\s+(?:buy|get|purchase)\s+(?:a\s+|an\s+|some\s+|new\s+|more\s+)?"
    r"(?:gpus?|cards?|graphics\s+cards?|hardware|macs?|machines?|computers?|servers?|set-?up|rig)\b"
    r"|\bwhat\s+should\s+(?:i|we|(?:our|my)\s+\w+)\s+(?:buy|get|purchase)\b"
    r"|\bwelche[rn]?\s+(?:gpus?|grafikkarten?|hardware)\b[^.?!]{0,40}\bkaufen\b"
    r"|\bqu[eé]\s+(?:gpus?|tarjetas?(?:\s+gr[aá]ficas?)?|hardware)\s+(?:comprar|compro|necesito)\b"
    r"|\bquel(?:le)?s?\s+(?:gpus?|cartes?\s+graphiques?|mat[eé]riel)\b[^.?!]{0,40}\bacheter\b", re.I)
# Buying for a home (a family, oneself) whatever the head count: the household shortlist.
_HOME = re.compile(r"\b(?:at\s+home|home\s*lab|homelab|family|household|kids|my\s+(?:wife|husband|partner)|personal|hobby|"
                   r"for\s+myself)\b", re.I)
_MAC = re.compile(r"\b(?:mac|macbook|mac\s*studio|mac\s*mini|apple\s+silicon)\b", re.I)
MAC_SHORTLIST = ["M4 Max 40-core 128GB", "M3 Ultra 80-core 256GB", "M3 Ultra 80-core 512GB", "M4 Pro 20-core 64GB"]
# "How many H100s do we need?": the count of a named card is the question (answered on 1, 2, 4 and 8 of it).
HOW_MANY = re.compile(r"\bhow\s+many\s+(?:more\s+)?(?:(?:rtx|gtx|rx|nvidia|amd|geforce|radeon|instinct|tesla)\s+)?"
                      r"(?:(?:\w*\d\w*\s+)?(?:gpus|cards|graphics\s+cards|accelerators)|\w*\d\w*s|of\s+(?:them|those|these)"
                      r"|\w*\d\w*(?:\s+\d+\s*gb)?(?:\s+(?:sxm\w*|pcie|ti|super|ada))?(?=\s+(?:do|would|should|will|to|for|are|is|cards?)\b))\b",
                      re.I)
TEAM_SHORTLIST = ["H100 SXM", "H200", "A100 80GB SXM", "L40S", "RTX PRO 6000", "RTX 5090"]
HOUSEHOLD_SHORTLIST = ["RTX 3090", "RTX 4090", "RTX 5090", "M4 Max 40-core 128GB", "M3 Ultra 80-core 256GB",
                       "Ryzen AI Max+ 395 128GB"]


def buying_shortlist(users: int | None, text: str = "") -> tuple[list[str], str]:
    """The machines a buying question with no machine named is answered on, and the sentence that says so.

    Four or more users: datacenter and workstation GPUs (a team's server; multi-GPU counts are added where one
    card cannot hold them, :func:`advisor.render.options.scale_out`); fewer: the cards and unified-memory
    machines households buy.
    """
    team = (users or 1) >= 4 and not _HOME.search(text)
    if _MAC.search(text) and not team:
        picks, kind = MAC_SHORTLIST, "Macs"
    else:
        picks = TEAM_SHORTLIST if team else HOUSEHOLD_SHORTLIST
        kind = "server and workstation GPUs" if team else "the GPUs and unified-memory machines people buy for this"
    return picks, f"You asked what to buy: compared on a shortlist of {kind} ({', '.join(picks)}); name machines to compare others."

HARDWARE_CHOICES = ["MacBook Air M2", "MacBook Pro M3 Max", "Mac Studio M2 Ultra", "RTX 4090", "RTX 3090",
                    "2x RTX 3090"]
# The hardware question when the kind of machine is known but not the machine ("no GPU", "my Mac", "a GPU"): a
# CPU-only computer is sized by its memory system (decode reads the weights from RAM), so it is asked for that.
KIND_QUESTIONS: dict[str, tuple[str, list[str]]] = {
    "cpu": ("Which CPU, or which RAM does it have (decode speed follows the memory: e.g. DDR5-5600 dual channel)?",
            ["DDR4-3200 dual channel", "DDR5-5600 dual channel", "DDR5-6000 dual channel", "Ryzen 7 7840HS",
             "Core Ultra 7 155H", "Raspberry Pi 5"]),
    "apple_soc": ("Which Mac is it (chip and memory)?",
                  ["MacBook Air M2", "MacBook Pro M3 Pro", "MacBook Pro M3 Max", "Mac mini M4", "Mac Studio M2 Ultra"]),
    "discrete_gpu": ("Which GPU is it?", ["RTX 4090", "RTX 3090", "RTX 4060", "RTX 3060 12GB", "RX 7900 XTX", "2x RTX 3090"]),
    "datacenter_gpu": ("Which GPU is it?", ["H100 SXM", "A100 80GB", "L40S", "L4", "8x H100"]),
}
MODEL_CHOICES = ["Llama 3.2 3B", "Llama 3.1 8B", "Qwen3 14B", "Gemma 3 27B", "Qwen3 30B A3B", "Llama 3.3 70B"]
QUANT_CHOICES = ["4-bit (Q4_K_M)", "8-bit", "16-bit"]
_ASK_ORDER = ("hardware", "memory_gb", "model")
_NOUNS = {"hardware": "machine", "model": "model", "quant": "weight format", "memory_gb": "memory size"}


# ----------------------------------------------------------------------------- update
def update(facts: Scenario | dict[str, Any] | None, text: str, store: Store, *, asked: str | None = None) -> IntakeResult:
    """Merge one chat message into the facts known so far.

    New facts override old ones ("actually it's 32 GB", "no, I meant the 70B"); facts the
    message does not mention stay. Never raises.

    Args:
        facts (Scenario | dict | None): the facts so far (None at the start of a conversation).
        text (str): the user's message.
        store (Store): the knowledge store.
        asked (str | None): the field the last question asked for; by default the field
            :func:`next_question` would ask about given ``facts``.

    Returns:
        IntakeResult: merged facts, the fields that changed, notes and problems.
    """
    try:
        old = facts if isinstance(facts, Scenario) else Scenario.model_validate(facts or {})
    except ValidationError:
        old = Scenario()
    old = named_machines(old, store)
    if (parts := self_corrected(text)) is not None and not looks_like_tool_output(text):
        # "…jk, I mean 2x 3090 in llama.cpp": the first part, then the rest as the follow-up that corrects it
        first = update(old, parts[0], store, asked=asked)
        second = update(first.facts, parts[1], store)
        changed = [f for f in Scenario.model_fields if getattr(old, f) != getattr(second.facts, f)]
        return second.model_copy(update={
            "changed": changed, "changes": [(f, getattr(old, f), getattr(second.facts, f)) for f in changed],
            "notes": list(dict.fromkeys(first.notes + second.notes)), "resolved": {**first.resolved, **second.resolved}})
    try:
        if asked is None and old != Scenario():
            q = next_question(old, store)
            asked = q.field if q else None
        picked = picked_choice(old, text, asked, store)  # "yes, that one" / "the second" after a choice was offered
        ext = extract(picked or text, store, context=old, asked=asked)
        if asked == "memory_gb" and ext.memory_gb is None and plain_answer(ext, text) and SMALLEST_ANSWER.search(text):
            smallest_memory(old, ext, store, text)
        elif asked == "hardware" and old.hardware_kind == "cpu" and ext.hardware is None and plain_answer(ext, text):
            default_cpu_memory(ext, text)
        new, changed = _merge(old, ext, store, text)
    except Exception:  # last line of defence: the chat must keep going
        log.exception("intake.update failed")
        return IntakeResult(facts=old, notes=[TROUBLE])
    return IntakeResult(
        facts=new, changed=changed, changes=[(f, getattr(old, f), getattr(new, f)) for f in changed], notes=ext.notes, not_understood=ext.not_understood, ambiguous=ext.ambiguous,
        suggestions=ext.suggestions, resolved=ext.resolved, looks_like_tool_output=ext.looks_like_tool_output,
    )


def named_machines(facts: Scenario, store: Store) -> Scenario:
    """Facts carried in with a machine written as its catalog id (``cpu-ddr4-3200-2ch``): its name instead."""
    hw = shown_name(store, facts.hardware) if facts.hardware else None
    cands = [shown_name(store, c) for c in facts.compare_hardware] if facts.compare_hardware else None
    if hw == facts.hardware and cands == facts.compare_hardware:
        return facts
    return facts.model_copy(update={"hardware": hw, "compare_hardware": cands})


def _merge(old: Scenario, ext: Extraction, store: Store, text: str = "") -> tuple[Scenario, list[str]]:
    new = ext.facts()
    data = old.model_dump()
    _follow_up(old, new, ext, store, text)
    _same_measurement(old, new)
    _forget_measurement(old, new, data, ext, store, text)
    if "params_b" in new and "model" not in new and old.model:
        _resize_model(old.model, new, data, ext, store)
    if "model" in new and "params_b" not in new:
        data["params_b"] = None
    if ("model" in new or "params_b" in new) and "active_params_b" not in new:
        data["active_params_b"] = None  # a new model or size: the earlier MoE's active share is not its
    total = new.get("params_b") or data.get("params_b")
    if new.get("active_params_b") and total and new["active_params_b"] >= total:
        ext.not_understood.append(f"{fmt(new['active_params_b'])}B active is not less than the {fmt(total)}B in all; "
                                  "I ignored the active size.")
        del new["active_params_b"]  # the earlier share (if any) stays
    if old.compare_models and ("model" in new or "params_b" in new) and "compare_models" not in new:
        # "what about a 14B?" after comparing two 4B models: the one model asked about now, not the old pair
        data["compare_models"] = None
    if old.compare_quants and ("quant" in new or "model" in new) and "compare_quants" not in new:
        data["compare_quants"] = None  # "and at Q8_0?" after weighing two formats: the one format asked about now
    if "hardware" in new and new["hardware"] != old.hardware and old.hardware and _differs(
            store, "hardware", old.hardware, new["hardware"]):
        # (one of the choices an ambiguous name had, "H100 SXM5 80GB" for "2x H100": the same machine, its count kept)
        _forget_machine_details(data, new, ext, store)
    elif new.get("hardware_kind") == "cpu" and "hardware" not in new and old.hardware \
            and (was := _hardware_of(store, old.hardware)) is not None and was.kind != "cpu":
        # "sorry, I meant 0 GPUs" after a GPU: the machine is a CPU one, not that card
        for f in ("hardware", "memory_gb", "gpu_cores", "bandwidth_gbs", "tflops", "gpu_count", "n_gpu_layers",
                  "gpu_fraction", "tensor_parallel", "interconnect"):
            data[f] = None
        ext.note(f"No GPU: the {was.name} is set aside and the model runs on the CPU with system RAM.")
    if ("measured_decode_tps" in new or "measured_prefill_tps" in new) and "measured_streams" not in new:
        data["measured_streams"] = data["measured_tpot_ms"] = None  # a rate the person states now: not the pasted run's
    data.update(new)
    try:
        merged = Scenario.model_validate(data)
    except ValidationError as e:  # extractors bound every value; this is belt and braces
        bad = {str(err["loc"][0]) for err in e.errors() if err.get("loc")}
        for f in bad:
            ext.reject(f"I could not use the value given for {f}.")
            data[f] = getattr(old, f, None)
        merged = Scenario.model_validate(data)
    changed = [f for f in FACT_FIELDS if getattr(merged, f) != getattr(old, f)]
    return merged, changed


_MEASURED = ("measured_decode_tps", "measured_prefill_tps", "measured_ttft_s")
# "that was on an R9700", "it's actually Q8", "I meant the 14B", "sorry, Llama 3.1": the measurement's own set-up
# corrected, so the measured rates stay with it.
_CORRECTION = re.compile(r"\b(?:that|this|it|they|those|these)\s+(?:was|were|is|are|'s|ran)\b|\bit'?s\s+actually\b|"
                         r"\b(?:i\s+)?mean(?:t)?\b|\bsorry\b|\bcorrection\b|\bmy\s+bad\b|\boops\b|\bactually\b|"
                         r"\bnot\s+(?:the|a|an)?\s*\S+\s*,?\s*(?:but|it'?s)\b|\bmeasured\s+(?:on|with)\b|\bran\s+(?:it\s+)?on\b|"
                         r"(?<!\bif\s)\b(?:my|the|our)\s+(?:\w+\s+){0,2}(?:was|were)\b|\bmisread\b",
                         re.I)


def _forget_measurement(old: Scenario, new: dict[str, Any], data: dict[str, Any], ext: Extraction,
                        store: Store, text: str) -> None:
    """"What about nemotron?" after "granite gets 45 tok/s": the measured rates belong to the set-up they
    were measured on. When a follow-up names another model, machine, format or engine and states no rate,
    and it is not a correction of that set-up (:data:`_CORRECTION`), the rates are set aside (said)."""
    if not any(getattr(old, f) for f in _MEASURED) or any(f in new for f in _MEASURED):
        return
    if _CORRECTION.search(text or ""):
        return
    moved: list[str] = [f for f in ("model", "hardware", "quant", "backend") if f in new and getattr(old, f)
             and _differs(store, f, getattr(old, f), new[f])]
    was_b = old.params_b or _catalog_size(store, old.model)
    if "params_b" in new and was_b and abs(new["params_b"] - was_b) > 0.25 * was_b:
        moved.append("model")
    labels: dict[str, str] = {}
    for f, label in (("prompt_tokens", "prompts"), ("depth", "tokens already in the cache")):
        # "my real prompts are 16k" after a pp512 / tg128 run: the run says nothing about 16k-token prompts.
        # A length not known before ("my prompt was 2000 tokens") says what the run was: the rates stay.
        was, now = getattr(old, f), new.get(f)
        if was is None or now is None or (f == "depth" and not was):
            continue
        if max(now, 1) > 2 * max(was, 1) or was > 2 * max(now, 1):
            moved.append(f)
            labels[f] = f"{fmt(was)}-token {label}" if was else f"no {label}"
    if not moved:
        return
    said = ", ".join(f"{_rate(getattr(old, f))} {unit}" for f, unit in
                     (("measured_decode_tps", "tok/s decode"), ("measured_prefill_tps", "tok/s prefill"),
                      ("measured_ttft_s", "s to the first token")) if getattr(old, f))
    what = " / ".join(labels.get(f) or str(getattr(old, f)) for f in dict.fromkeys(moved) if labels.get(f) or getattr(old, f))
    for f in (*_MEASURED, "measured_streams", "measured_is_aggregate", "measured_tpot_ms"):
        data[f] = None
    ext.note(f"Set aside the {said} you measured: that was for {what}. Say it again if it applies to this one too.")


def _catalog_size(store: Store, model: str | None) -> float | None:
    """Total parameters (billions) of a named model, or None when it does not resolve."""
    if not model:
        return None
    try:
        return float(catalog.resolve_model(store, model).value.params_b)
    except AdvisorError:
        return None


def _rate(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def _differs(store: Store, field: str, a: Any, b: Any) -> bool:
    """Whether two values of a fact name different things (the same catalog entry under two spellings does not)."""
    if str(a).strip().lower() == str(b).strip().lower():
        return False
    if field in ("model", "hardware"):
        look = catalog.resolve_model if field == "model" else catalog.resolve_hardware
        try:
            rb = look(store, str(b)).value
        except AdvisorError:
            return True
        try:
            ra = look(store, str(a)).value
        except AmbiguousError as e:
            # "H100" answered "H100 SXM5 80GB": one of the choices the name had, the same machine said exactly
            return not any(rb.id in c or c.split(" (")[0] == rb.name for c in e.candidates)
        except AdvisorError:
            return True
        return bool(ra.id != rb.id)
    return True


def _same_measurement(old: Scenario, new: dict[str, Any]) -> None:
    """"Is 18 tok/s normal?" after a paste measured 18.31: the person quotes the measurement (rounded),
    it is not a new one, so the measured value stays (within 0.5 tok/s or 2 %, whichever is larger)."""
    for f in ("measured_decode_tps", "measured_prefill_tps"):
        was, said = getattr(old, f), new.get(f)
        if was and said and abs(said - was) <= max(0.5, 0.02 * was):
            del new[f]


def _resize_model(old_model: str, new: dict[str, Any], data: dict[str, Any], ext: Extraction, store: Store) -> None:
    """"No, I meant the 70B": the same family at the new size, when the catalog has it."""
    size = new["params_b"]
    swapped, n = re.subn(r"(?<![\w.])\d+(?:\.\d+)?(?=\s*-?\s*b\b)", fmt(size), old_model, count=1, flags=re.I)
    if n:
        try:
            m = catalog.resolve_model(store, swapped)
        except NotFoundError:
            m = None
        if m is not None and not m.value.generic:
            new["model"] = swapped
            del new["params_b"]
            ext.resolved["model"] = m.value.id
            ext.note(f"Took that as {swapped}.")
            return
    data["model"] = None
    ext.note(f"Sizing the model as a generic {fmt(size)}B model instead of {old_model}.")


def _forget_machine_details(data: dict[str, Any], new: dict[str, Any], ext: Extraction, store: Store) -> None:
    """A different machine: drop the old one's memory, GPU cores and spec numbers unless restated."""
    for f in ("gpu_cores", "bandwidth_gbs", "tflops", "gpu_count", "hardware_kind"):
        if f not in new:
            data[f] = None
    hw = _hardware_of(store, new["hardware"])
    if ("backend" not in new and "mlx" in (data.get("backend") or "").lower() and hw is not None
            and hw.kind != "apple_soc"):
        ext.note(f"MLX runs on Apple Silicon: the engine for the {hw.name} is assumed instead (name it to change it).")
        data["backend"] = None
    before = _hardware_of(store, data.get("hardware"))
    if hw is not None and (before is None or before.kind != hw.kind):
        # Layer placement belongs to the machine it was said for: "no GPU" (0 layers) on a CPU box is not the Mac's.
        for f in ("n_gpu_layers", "gpu_fraction"):
            if f not in new:
                data[f] = None
    if "memory_gb" in new or data.get("memory_gb") is None or not data.get("hardware"):
        return  # no machine before: the memory said was this one's ("16GB RAM, no GPU" → "DDR4-3200")
    if hw is not None and before is not None and hw.kind == before.kind == "apple_soc":
        return  # a Mac's memory is chosen apart from its chip: "it's the M4 Pro" keeps the 16 GB said
    if hw is None or not hw.memory_gb_options or data["memory_gb"] not in hw.memory_gb_options:
        ext.note(f"Forgot the {fmt(data['memory_gb'])} GB said for the previous machine.")
        data["memory_gb"] = None


_VARIANT = re.compile(r"\b(?:it'?s|it\s+is|meant?|mean|have|got|is|make\s+it|what\s+about|how\s+about|or)\s+"
                      r"(?:actually\s+|really\s+|just\s+)?(?:the\s+|a\s+|an\s+)?"
                      r"(?P<v>ti\s+super|ti|super|xtx|xt|pro|max|ultra|sxm[45]?|pcie(?!\s*(?:[\d.]|gen|x\d|lanes?|slots?|risers?|bus|links?|bandwidth|switch))|nvl)(?:\s+(?:one|version|model|variant|card|form\s+factor))?\b"
                      r"(?!\s*(?:tokens?|context|ctx|length|batch|users?|speed|_|-))"
                      r"|^\W*(?:(?:no|nah|oh|ah|hmm+|ok(?:ay)?|wait|sorry|oops|actually|correction|my\s+bad|i\s+mean|err?|um+)\W+)*(?:the\s+|a\s+|an\s+)?"
                      r"(?P<v2>ti\s+super|ti|super|xtx|sxm[45]?|pcie|nvl)(?:\s+(?:one|version|model|variant))?(?:\W+(?:btw|then|actually))?\W*$", re.I)
_ADD_ONE = re.compile(r"\b(?:add|adding|get|getting|buy|buying|with|plus)\b[^.?!]{0,30}?\b"
                      r"(?P<ord>second|2nd|third|3rd|fourth|4th|another)\b", re.I)
_BARE_USERS = re.compile(rf"^\W*(?:(?:ok|so|and|actually|no|sorry|wait|well)\W+)*(?:(?P<we>we'?re|we\s+are|there\s+are|there'?ll\s+be)|make\s+(?:it|that)|"
                         rf"it'?s|now)\s+(?:now\s+|actually\s+|about\s+|around\s+|more\s+like\s+)*"
                         rf"(?P<n>\d{{1,6}}|{WORDNUM})(?:\s+(?:now|then|(?P<who>of\s+us|people|persons|users|devs)))*\W*$", re.I)
BARE_REPLY_CHARS = 120
_BARE_LEN = re.compile(r"^\W*(?:(?:ok|so|and|then|actually|no|nah|sorry|wait|hmm|oops|well)\W+)*"
                       r"(?:make\s+it|what\s+about|how\s+about|try|say|with|at|now|or|it'?s)?"
                       r"\s*(?:more\s+like|closer\s+to|about|around|maybe|like|~|roughly)?\s*(?P<n>\d+(?:\.\d+)?\s?[kK]?)\s*(?:tokens?)?(?:\s+(?:instead|then|now))?\W*$", re.I)


def _follow_up(old: Scenario, new: dict[str, Any], ext: Extraction, store: Store, text: str) -> None:
    """Follow-ups that name only a part: "actually it's the Ti", "what about two of them?", "make it 8k"."""
    from advisor.intake._machine import strip_count
    from advisor.intake._text import parse_num

    # a bare reply is short ("make it 8k", "we're 15 now"); its patterns are not run over long text (they would
    # backtrack over every run of spaces)
    bare = (text or "") if len(text or "") <= BARE_REPLY_CHARS else ""

    if old.hardware and "hardware" not in new and (m := _VARIANT.search(text or "")):
        v = (m.group("v") or m.group("v2")).lower()
        cand = _with_variant(old.hardware, v)
        if cand and cand != old.hardware and _hardware_of(store, cand, old.memory_gb) is not None:
            new["hardware"] = cand
            ext.note(f"Took that as the {cand}.")
    if old.hardware and (m := _ADD_ONE.search(text or "")) and not new.get("gpu_count") and (
            "hardware" not in new or strip_count(new["hardware"]) == strip_count(old.hardware)):
        from advisor.intake._machine import count_of

        n = {"second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}.get(m.group("ord").lower(),
                                                                                   count_of(old.hardware) + 1)
        new["gpu_count"] = n
        new.pop("hardware", None)
        ext.note(f"Took that as {n} of them.")
    if old.hardware and "hardware" not in new and new.get("gpu_count"):
        new["hardware"] = f"{new['gpu_count']}x {strip_count(old.hardware)}"
    if old.concurrency and not any(k in new for k in ("prompt_tokens", "gen_tokens", "concurrency", "memory_gb")) and (
            m := _BARE_USERS.match(bare)) and (m.group("we") or m.group("who") or not (
                old.prompt_tokens or old.gen_tokens)):
        users = int(m.group("n")) if m.group("n").isdigit() else word_number(m.group("n"))
        if users is not None and 1 <= users <= 100_000:
            new["concurrency"] = users  # "we're now 15" after "for 5 users"
            ext.note(f"Took {m.group('n')} as the new number of users.")
    if not any(k in new for k in ("prompt_tokens", "gen_tokens", "concurrency", "memory_gb")) and (
            m := _BARE_LEN.match(bare)) and (old.prompt_tokens or old.gen_tokens):
        v = parse_num(m.group("n"))
        field = "prompt_tokens" if old.prompt_tokens else "gen_tokens"
        if v is not None and 1 <= v <= 10_000_000 and (v >= 50 or "k" in m.group("n").lower()):
            new[field] = int(v)
            ext.note(f"Took {m.group('n').strip()} as the new {'prompt' if field == 'prompt_tokens' else 'answer'} "
                     "length.")


def _with_variant(hardware: str, v: str) -> str | None:
    """"RTX 4070" + "ti" → "RTX 4070 Ti"; "Mac mini M4" + "pro" → "Mac mini M4 Pro"."""
    names = {"ti": "Ti", "super": "Super", "ti super": "Ti Super", "xtx": "XTX", "xt": "XT", "pro": "Pro",
             "max": "Max", "ultra": "Ultra", "pcie": "PCIe", "nvl": "NVL"}
    word = names.get(re.sub(r"\s+", " ", v)) or v.upper()  # SXM, SXM4, SXM5
    if v in ("pcie", "nvl") or v.startswith("sxm"):  # a datacenter card's form factor: "A100 80GB" + "SXM"
        return re.sub(r"\s+(?:SXM[45]?|PCIe|NVL)\b", "", hardware, flags=re.I) + " " + word
    if v in ("pro", "max", "ultra"):
        m = re.search(r"\bM(\d)(?:\s+(?:Pro|Max|Ultra))?\b", hardware, re.I)
        if not m:
            return None
        return hardware[:m.start()] + f"M{m.group(1)} {word}" + re.sub(r"^\s*\d{1,2}-core", "", hardware[m.end():])
    base = re.sub(r"\s+(?:Ti|Super|XTX|XT)\b", "", hardware, flags=re.I)
    return f"{base} {word}"


# ----------------------------------------------------------------------------- what is missing
def _hardware_of(store: Store, name: str | None, memory_gb: float | None = None) -> Hardware | None:
    if not name:
        return None
    try:
        return catalog.resolve_hardware(store, name, memory_gb=memory_gb).value
    except (AmbiguousError, NotFoundError):
        return None


def missing(facts: Scenario, store: Store) -> list[str]:
    """Fields still needed before an answer, in the order they are asked (from ``Situation.unresolved``).

    ``hardware`` unless a resolvable name or ``bandwidth_gbs`` is known; ``memory_gb`` when the
    machine ships with several memory sizes and none was given; ``model`` unless a resolvable
    name or ``params_b`` is known.
    """
    from advisor.understand import understand

    sit = understand(store, facts)
    out: list[str] = []
    for u in sit.unresolved:
        if u.field in _ASK_ORDER and u.field not in out:
            out.append(u.field)
    return out


def next_question(facts: Scenario, store: Store, ambiguous: dict[str, list[str]] | None = None) -> Question | None:
    """The one question to ask now, or None when nothing needed is missing.

    A name the last message left ambiguous is asked about first (with its candidates as
    choices: the user is naming that field now, even if it had a value); then the first of
    :func:`missing`. A field whose value is known and usable is never asked for; a name set
    directly on the facts that the catalog cannot resolve is asked about by name.
    """
    for field in sorted(ambiguous or {}, key=lambda f: _ASK_ORDER.index(f) if f in _ASK_ORDER else 9):
        cands = [c for c in (ambiguous or {})[field] if c][:6]
        if cands:
            said = ", ".join(cands[:-1]) + " or " + cands[-1] if len(cands) > 1 else cands[0]
            why = (" They differ in memory and bandwidth, which set what fits and how fast it writes."
                   if field == "hardware" else "")
            return Question(field=field, text=f"Which {_NOUNS.get(field, field)} do you mean: {said}?{why}",
                            choices=cands)
    todo = missing(facts, store)
    if not todo:
        return None
    field = todo[0]
    if field in ("hardware", "model") and getattr(facts, field):
        return _fix_name_question(facts, store, field)
    if field == "hardware":
        text, choices = KIND_QUESTIONS.get(facts.hardware_kind or "", (
            "What will you run it on? A Mac, a GPU, or a server?", HARDWARE_CHOICES))
        return Question(field=field, text=text, choices=choices)
    if field == "memory_gb":
        hw = _hardware_of(store, facts.hardware)
        assert hw is not None  # missing() only lists memory for a resolved machine
        kind = "unified memory" if hw.kind == "apple_soc" else ("VRAM" if "gpu" in hw.kind else "memory")
        each = " per card" if hw.n_devices > 1 else ""
        return Question(field=field, text=f"How much {kind}{each} does your {facts.hardware} have?",
                        choices=[f"{fmt(x)} GB" for x in hw.memory_gb_options])
    return Question(field=field, text="Which model do you want to run?", choices=MODEL_CHOICES)


def _fix_name_question(facts: Scenario, store: Store, field: str) -> Question:
    """A hardware or model name on the facts that does not resolve: offer what it could be."""
    name = getattr(facts, field)
    ext = extract(name, store)
    cands = ext.ambiguous.get(field) or ext.suggestions.get(field) or []
    if field == "hardware" and not cands:  # a name chat would answer for its slowest version, judged with a rate
        from advisor.intake._hardware import _clean_candidates
        from advisor.understand import understand

        u = understand(store, facts).unresolved_field("hardware")
        cands = _clean_candidates(u.candidates, "") if u is not None else []
    if field == "hardware":
        return Question(field=field, text=f"Which machine is '{name}'?", choices=cands[:6] or HARDWARE_CHOICES)
    return Question(field=field, text=f"Which model is '{name}'? Its size (e.g. '8B') is enough.",
                    choices=cands[:6] or MODEL_CHOICES)


# ----------------------------------------------------------------------------- defaults
def defaults_for(facts: Scenario, store: Store | None = None) -> dict[str, tuple[Any, str]]:
    """Values assumed for the facts not given, each with the reason the answer should state.

    Args:
        facts (Scenario): the facts so far.
        store (Store | None): when given, a machine sold with several memory sizes gets the
            smallest one (as :mod:`advisor.resolve` assumes).

    Returns:
        dict[str, tuple[Any, str]]: field → (value, reason).
    """
    out: dict[str, tuple[Any, str]] = {}
    if facts.quant is None:
        q, why = default_quant(facts.backend, facts.model)
        out["quant"] = (q, f"Weight format not stated: assumed {q}, {why}.")
    use = facts.use if facts.use in DEFAULT_PROMPT_TOKENS else None
    if facts.prompt_tokens is None:
        p = DEFAULT_PROMPT_TOKENS[use]
        out["prompt_tokens"] = (p, f"Prompt length not stated: assumed {p:,} tokens"
                                + (f", typical for {use.replace('_', ' ')}." if use else " (a chat message)."))
    if facts.gen_tokens is None:
        out["gen_tokens"] = (DEFAULT_GEN_TOKENS, f"Answer length not stated: assumed {DEFAULT_GEN_TOKENS} tokens "
                             f"(about {int(DEFAULT_GEN_TOKENS * 0.75)} words).")
    if facts.concurrency is None:
        out["concurrency"] = (DEFAULT_CONCURRENCY, "Number of users not stated: assumed one person at a time.")
    if facts.depth is None:
        out["depth"] = (DEFAULT_DEPTH, "No earlier conversation assumed in the context.")
    if store is not None and facts.memory_gb is None and (hw := _hardware_of(store, facts.hardware)):
        if len(hw.memory_gb_options) > 1:
            mem = min(hw.memory_gb_options)
            out["memory_gb"] = (mem, f"Memory not stated: assumed {fmt(mem)} GB, the smallest {hw.name}.")
    return out
