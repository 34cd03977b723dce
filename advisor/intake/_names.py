"""Model, size, weight-format and engine facts in chat text.

A model is a Hugging Face repo id ("Qwen/Qwen3-8B"), an Ollama tag ("gemma3:27b") or a family
name with version, variant and size words ("qwen3 30b a3b", "deepseek r1 32b"). Each phrase is
checked with :func:`knowledge.catalog.resolve_model`; a bare size ("a 7B model") becomes ``params_b``.
"""

from __future__ import annotations

import re

from advisor.errors import AdvisorError, NotFoundError
from advisor.intake._machine import LACKS_GPU
from advisor.intake._schema import Extraction
from advisor.intake._text import WORDNUM, Msg, fmt, negated, word_number
from advisor.models import MAX_PARAMS_B
from advisor.understand.engine import classify_engine, engine_mentions
from advisor.understand.engine_question import alternative_spans, api_spans, refused_spans
from advisor.understand.formats import NOT_AS_IT_IS, format_conflict
from advisor.understand.symptoms import cpu_moe_layers, kv_cache_said
from knowledge import catalog
from knowledge.store import Store

_FAMILIES = (
    r"codellama|tinyllama|(?:meta[\s-])?llama|r1[\s-]distill|qwq|qwen|codegemma|gemma|mixtral|ministral|mistral|codestral|devstral|phi|"
    r"lama(?=[\s-]?\d)|quen|qwenn|gema(?=[\s-]?\d)|mistrall?|mistal|deepseak|"
    r"gpt[\s-]?oss|deepseek|granite|falcon|command-?r|olmo|smollm|(?:nvidia[\s-])?nemotron|glm|kimi|hermes|dolphin|vicuna|starcoder|"
    r"wizardlm|minimax|zephyr|openchat|starling|solar|internlm|baichuan|exaone|aya|(?:ai21-)?jamba|dbrx|yi|hunyuan|magistral|"
    r"(?-i:Command[\s-]A)(?![a-z])|(?:c4ai-)?command-a(?![a-z])|"  # "Command A" or "command-a"; "command a team" is English
    r"(?:stepfun[\s_-]?step[\s_-]?3(?:\.5|p5)(?:[\s_-]?flash)?|step[\s_-]?3(?:\.5|p5)[\s_-]?flash|step[-_]?3(?:\.5|p5))(?![\w.])"  # StepFun's "Step-3.5-Flash"; "step 3.5" alone is English
)
# Family names as they are mistyped ("lama 3.1 8b", "quen 2.5"), spelled right before the catalog is asked.
_TYPOS = ((re.compile(r"^lama\b", re.I), "llama"), (re.compile(r"^(?:quen|qwenn)\b", re.I), "qwen"),
          (re.compile(r"^gema\b", re.I), "gemma"), (re.compile(r"^(?:mistal|mistrall)\b", re.I), "mistral"),
          (re.compile(r"^deepseak\b", re.I), "deepseek"))
_WEAK_FAMILIES = {"granite", "falcon", "olmo", "glm", "kimi", "hermes", "dolphin", "vicuna", "minimax", "zephyr",
                  "openchat", "starling", "solar", "internlm", "baichuan", "exaone", "aya", "jamba", "dbrx", "yi",
                  "phi", "command-r", "commandr", "starcoder", "wizardlm", "hunyuan"}
_VARIANT_WORDS = (
    r"coder|code|instruct|it|chat|r1|v\d+(?:\.\d+)?|distill|small|mini|medium|large|nemo|nano|vl|math|base|turbo|"
    r"preview|moe|next|thinking|latest|oss|plus|lite|hf|beta|alpha|scout|maverick|air|"
    r"k\d(?:\.\d)?|(?<=minimax[\s_-])m\d(?:\.\d)?|tiny|micro|h(?=[\s_-]+(?:small|tiny|micro|nano|\d))|"
    + _FAMILIES  # "Kimi K2", "MiniMax M2.1", "Granite 4.0 H Small"
)
_NUM_TOKEN = r"\d+(?:\.\d+)?(?:x\d+(?:\.\d+)?)?(?:[bm]|v(?=\W|$))?(?!\s*-?\s*(?:bits?|gb|gigs?|tok|t/s|k\b|%|users|people|words))"
_TOKEN = rf"(?:{_NUM_TOKEN}|a\d+(?:\.\d+)?b|e\d+b|\d+n|small\d(?:\.\d)?|(?:{_VARIANT_WORDS}))(?![\w]|\.\d)"  # "3n": Gemma 3n; "small3.1": Ollama's Mistral Small tag
_FAMILY = re.compile(
    rf"(?<![\w/.-])(?:{_FAMILIES})(?![a-z]|[.\-_ ]?(?:cpp|server|bench|cli|perf|print|batched|swap|file)\b)"
    rf"(?:\d+(?:\.\d+)?(?:n|v(?![a-z]))?)?(?:[\s_:-]+{_TOKEN}){{0,8}}",
    re.I,
)
_AFTER_SIZE = re.compile(r".*?(?<![\w.])\d+(?:\.\d+)?(?:x\d+(?:\.\d+)?)?b(?![\w])"
                         r"(?:[\s_:-]+(?:a\d+(?:\.\d+)?b|instruct|it|chat|base|hf|preview|thinking|latest|beta|"
                         r"v\d+(?:\.\d+)?)(?![\w]|\.\d))*",
                         re.I)
# The rest of a model name written as one slug ("-super-120b-a12b", "-h-tiny", ".5-35b-a3b"): words joined by
# "-", "_" or "." with no space, up to the end of the run (a trailing "?" or "," is not part of it).
_SLUG_REST = re.compile(r"(?:[-_.](?!(?:ud[-_])?[it]?q\d|f16\b|bf16\b|fp16\b|gguf\b|mlx\b|\d+-?bits?\b|mxfp4\b|awq\b|gptq\b)"
                        r"[a-z0-9]+)+(?=[\s?!,;:)\]]|[.](?:\s|$)|[-_.](?:(?:ud[-_])?[it]?q\d|[bf]p?16|gguf|mlx|\d+-?bits?|mxfp4|awq|gptq)|$)",
                        re.I)
_REPO = re.compile(r"(?<![\w./-])(?P<org>[A-Za-z0-9][\w.-]{0,60})/(?P<name>[A-Za-z0-9][\w.-]{0,120})")
_REPO_OK = re.compile(rf"(?:{_FAMILIES})|\d+(?:\.\d+)?[bm]\b", re.I)
_SIZE = re.compile(r"(?<![\w.])(?P<num>\d+(?:\.\d+)?)\s*-?\s*(?P<u>b|bn|billion|m|million|t|trillion)\b"
                   r"(?:\s*(?:param(?:eter)?s?|model))?", re.I)
# A size marked as the MoE's per-token share: "3B active", "3B active parameters", "3B activated", "3B per token",
# or written "-A3B" after the total ("30B-A3B"); "active" may also come before it ("active 3B", "with 3B active").
_ACTIVE_AFTER = re.compile(r"\s*(?:param(?:eter)?s?\s+)?(?:active|activated|per[\s-]token|used\s+per\s+token)\b", re.I)
_ACTIVE_BEFORE = re.compile(r"\b(?:active|activated)(?:\s+param(?:eter)?s?)?\s*(?:of|:|=|is|are)?\s*$", re.I)
_TOTAL_A = re.compile(r"(?<![\w.])(?P<total>\d+(?:\.\d+)?)\s*b\s*[-_ ]?\s*a(?P<active>\d+(?:\.\d+)?)\s*b\b", re.I)
_HAS_SIZE = re.compile(r"\d\s*b\b|\d+x\d|a\d+b", re.I)

_GGUF = re.compile(r"(?<![\w])(?:ud[-_])?(?P<q>[it]?q\d(?:_[a-z0-9]+)*)(?![\w])", re.I)
_BITS = re.compile(r"(?<![\w.])(?P<mlx>mlx[\s_-]*)?(?P<b>\d{1,2})\s*-?\s*bits?\b(?:\s*g(?P<g>32|64|128)\b)?"
                   r"(?!\s*(?:kv|cache|os|windows|linux|colou?r|version|machine|system|cpu|float))", re.I)
_NAMED_Q = re.compile(r"\b(?P<q>fp16|f16|bf16|fp32|f32|fp8|float16|bfloat16|half[\s-]precision|int[48]|mxfp4|awq|gptq|"
                      r"nf4|nvfp4|mxfp8|w4a16|w8a16|w8a8|full[\s-]precision|unquantized|unquantised)\b", re.I)
# Bits per weight as EXL2/EXL3 files are named ("4.0bpw", "4.65 bpw", "6bpw"), and the words of their engines.
_BPW = re.compile(r"(?<![\w.])(?P<b>\d(?:\.\d{1,2})?)\s*-?\s*bpw\b", re.I)
_EXL_WORDS = re.compile(r"\bexl[23]\b|\bexllama\w*|\btabby\w*", re.I)
_Q_CANON = {"float16": "FP16", "half precision": "FP16", "half-precision": "FP16", "bfloat16": "BF16",
            "full precision": "BF16", "full-precision": "BF16", "unquantized": "BF16", "unquantised": "BF16",
            "int4": "int4", "int8": "int8", "awq": "AWQ", "gptq": "GPTQ"}

# A server engine's version as people write it: "vllm 0.6.3", "vLLM v0.7.2", "vllm==0.5.4", "vLLM version 0.10"
_SERVER_VERSION = re.compile(r"\b(?:vllm|sglang)(?:\s+version)?\s*(?:==|=|@|\s)?\s*v?(?P<v>\d+\.\d+(?:\.\d+)?)\b", re.I)
# "OLLAMA_VULKAN=1" names Vulkan too (the letters before it are an env var's); "=0" / "off" turns it off.
# Said not used ("without vulkan", "(no Vulkan)", "not ROCm", "vulkan off") names no API. ipex-llm is Intel's build of
# llama.cpp / Ollama on SYCL (oneAPI) for Arc and Core Ultra GPUs.
_ACCEL = re.compile(r"(?<![A-Za-z])(?<!without\s)(?<!\bno\s)(?<!\bnot\s)(?<!w/o\s)(?<!\bnon-)"
                    r"(?P<a>cuda|cublas|vulkan|rocm|hip|metal|sycl|ipex(?:[\s_-]?llm)?)\b"
                    r"(?!\s*=\s*(?:0|false|off)\b|\s+(?:off|disabled|turned\s+off)\b)", re.I)
_ACCEL_NAMES = {"cuda": "CUDA", "cublas": "CUDA", "vulkan": "Vulkan", "rocm": "ROCm", "hip": "ROCm", "metal": "Metal",
                "sycl": "SYCL", "ipex": "SYCL"}
# The run is on the CPU ("CPU only", "on the CPU", "no GPU offload"); a machine said to lack a GPU
# (intake._machine.LACKS_GPU) is settled once the machine is known (intake._hardware.settle_cpu_only).
_CPU_ONLY = re.compile(r"\bcpu[\s-]only\b|\bon\s+(?:the\s+)?cpu\b|\bno\s+gpu\s+offload\w*\b", re.I)
_NGL = re.compile(rf"(?:-ngl|--n-gpu-layers|n[_-]gpu[_-]layers|\bngl|\bgpu[_ ]layers)\s*[=:]?\s*(?P<n>\d{{1,4}})\b"
                  rf"|\boffload(?:ed|ing)?\s+(?:(?:set\s+)?to\s+|=\s*|:\s*)?(?P<n2>\d{{1,4}}|{WORDNUM})"
                  rf"(?:\s*(?:out\s+of|of|/)\s*\d{{1,4}})?\s+layers?\b"
                  rf"|\b(?P<n3>\d{{1,4}}|{WORDNUM})(?:\s*(?:out\s+of|of|/)\s*\d{{1,4}})?\s+(?:gpu\s+)?layers?\s+"
                  rf"(?:offloaded|on\s+(?:the\s+)?gpu)\b", re.I)
_KV_QUANT = re.compile(r"(?:kv|cache|(?<![\w-])-ct[kv]\b)[\w\s-]{0,16}(?:[=:]|type|to|at|in)?\s*[(\[]?\s*"
                       r"(?:(?:q\d_[01k]\w*|f16|fp8|int[48])\s*(?:/|,|or|and|vs\.?)\s*)*$", re.I)


# A cache type said after the format: "q8_0 kv", "q8_0 or q4_0 for the KV cache", "q4_0 K/V".
_KV_AFTER = re.compile(r"[\s-]*(?:(?:/|,|or|and|vs\.?)\s*(?:q\d_[01k]\w*|f16|fp8|int[48])\s*)*"
                       r"(?:(?:for|in|on)\s+(?:the\s+|my\s+)?)?(?:kv|k/v|cache)\b", re.I)


# ----------------------------------------------------------------------------- models
def _repo_quant(name: str, mlx: bool) -> str | None:
    m = re.search(r"(?<![a-z0-9])(\d)[-_]?bit\b", name, re.I)
    if m:
        return f"MLX {m.group(1)}-bit" if mlx else f"{m.group(1)}-bit"
    g = _GGUF.search(name.replace("-", " "))
    if g:
        return g.group("q").upper()
    n = _NAMED_Q.search(name.replace("-", " "))
    return _q_phrase(n.group("q")) if n else None


def _model_mentions(msg: Msg, ext: Extraction) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for m in msg.finditer(_REPO):
        if not _REPO_OK.search(m.group("name")):
            continue
        found.append((m.start(), m.group(0).rstrip(".-")))
        mlx = "mlx" in m.group("org").lower() or "mlx" in m.group("name").lower()
        q = _repo_quant(m.group("name"), mlx)
        if q and ext.quant is None:
            ext.quant = q
        if mlx and ext.backend is None:
            ext.backend = "mlx"
            ext.note("Assumed the MLX engine: the model is an MLX conversion.")
        msg.claim(m.start(), m.end())
    for m in msg.finditer(_FAMILY):
        if m.group(0).strip(" -_:").lower() in _WEAK_FAMILIES:
            continue  # "solar", "falcon", "hermes" alone are more often plain words than models
        cut = _AFTER_SIZE.match(m.group(0))  # "llama 3.1 8b llama 3.2 3b": two mentions, not one
        end = m.start() + (cut.end() if cut else len(m.group(0)))
        if (slug := _SLUG_REST.match(msg.s, end)) is not None:  # "nemotron-3-super-120b-a12b": the whole slug
            end = slug.end()
        phrase = msg.s[m.start():end].strip(" -_:")
        for typo, right in _TYPOS:
            phrase = typo.sub(right, phrase)
        found.append((m.start(), phrase))
        msg.claim(m.start(), end)
    return sorted((s, p) for s, p in found if not negated(msg, s))


def _resolve_model(ext: Extraction, store: Store, phrase: str) -> None:
    try:
        m = catalog.resolve_model(store, phrase)
    except NotFoundError as e:
        cands = [c.split("/")[-1] for c in e.candidates]
        if not _HAS_SIZE.search(phrase):
            sizes = _size_choices(store, phrase)
            if not sizes and re.search(r"[-_.]", phrase) and re.search(r"\d", phrase):
                # a full name the catalog lacks ("granite-4.0-h-tiny"): its size is what the numbers need
                ext.reject(f"I don't know the model '{phrase}' and its name gives no size: say how many parameters "
                           "it has (e.g. '7B', or '7B with 1B active' for a MoE) to predict it.")
                return
            ext.ambiguous["model"] = sizes or cands
            return
        ext.suggestions["model"] = cands
        ext.reject(f"I don't know the model '{phrase}'." + (f" Did you mean {', '.join(cands[:3])}?" if cands else ""))
        return
    if m.value.params_b > MAX_PARAMS_B:
        ext.reject(f"'{phrase}' would have {fmt(m.value.params_b)}B parameters — more than any model; I ignored it.")
        return
    ext.model, ext.resolved["model"] = phrase, f"generic-{fmt(m.value.params_b)}b" if m.value.generic else m.value.id
    for a in m.assumptions:
        ext.note(a)


def _size_choices(store: Store, phrase: str) -> list[str]:
    """Catalog models of a family named without a size ("llama 3.1" → "Llama-3.1-8B", "Llama-3.1-70B")."""
    words = [w for w in re.split(r"[\s:_-]+", phrase.lower()) if w]
    out = []
    for mid in catalog.all_models(store):
        name = mid.split("/")[-1]
        flat = re.sub(r"[\s_-]+", "", name.lower())
        if all(w.replace(" ", "") in flat for w in words):
            out.append(name)
    return sorted(out, key=lambda n: catalog.all_models(store)[_full_id(store, n)].params_b)[:6]


def _full_id(store: Store, name: str) -> str:
    return next(mid for mid in catalog.all_models(store) if mid.split("/")[-1] == name)


def extract_model(msg: Msg, ext: Extraction, store: Store) -> None:
    """Read the model (name or bare size) into ``ext.model`` / ``ext.params_b``."""
    men = _model_mentions(msg, ext)
    sizes = _sizes(msg)
    drafts = [x for x in men if _is_draft(msg, x[0], x[1])]
    if drafts and len(drafts) < len(men):
        # "a draft model (Llama 3.2 1B) for Llama 3.3 70B": the draft guesses for the model that runs
        men = [x for x in men if x not in drafts]
        ext.note(f"{drafts[0][1]} is the draft model for speculative decoding; the model judged is {men[0][1]}.")
    elif drafts:  # "what about speculative decoding with qwen2.5 0.5b as draft?": the model judged stays as it was
        men = []
        ext.note(f"{drafts[0][1]} is the draft model for speculative decoding, not the model judged.")
        return
    if men:
        phrase = men[0][1]
        if sizes and not _HAS_SIZE.search(phrase):  # "llama 3.1, the 70B one"
            phrase = f"{phrase} {fmt(sizes[0][0])}B"
        _resolve_model(ext, store, phrase)
        others = list(dict.fromkeys(p for _, p in men[1:] if p != men[0][1]))
        if others and ext.model and _compared(msg, men):
            ext.compare_models = list(dict.fromkeys(p for _, p in men))
            ext.note(f"Comparing {', '.join(ext.compare_models)} side by side; {ext.model} is used for the single "
                     "verdict.")
        elif others and ext.model:
            ext.note(f"You also mentioned {', '.join(others)}; I'm using {ext.model} for now.")
        _active_share(ext, store, sizes, msg)
    elif sizes:
        totals = [(v, raw) for v, raw in sizes if not _is_active(msg, raw)]
        if not totals:  # "and with 5B active instead?": the per-token share alone; the total stays as it was
            a = sizes[0][0]
            if 0 < a <= MAX_PARAMS_B:
                ext.active_params_b = a
                ext.note(f"{fmt(a)}B used per token (a mixture of experts); the total size is needed for memory.")
            return
        v, raw = totals[0]
        if not 0 < v <= MAX_PARAMS_B:
            ext.reject(f"A model of {fmt(v)}B parameters is not possible; I ignored it.")
        else:
            ext.params_b = v
            if len(totals) > 1:
                ext.note(f"Several sizes mentioned; I'm using {fmt(v)}B for now.")
            _active_share(ext, store, sizes, msg)


# "draft" right before the name: "draft model: qwen2.5 0.5b", "a draft (llama 3.2 1b)", "-md qwen…"; not "as a draft
# model for llama 3.1 70b", where the name after "for" is the model the draft speeds up
_DRAFT_NEAR = re.compile(r"(?:\bdraft(?:er|ing)?(?:\s+model)?|(?<![\w-])-md|--model-draft|\bspeculator)\s*"
                         r"(?:[:=(]\s*|\s(?:is|was|of|=|like|e\.g\.)\s+)?(?:an?\s+|the\s+)?$", re.I)


def _is_draft(msg: Msg, start: int, phrase: str) -> bool:
    """Whether the model named at ``start`` is a draft model: "draft" (or llama.cpp's -md) said just before it, or
    "as (the) draft" just after it."""
    before = msg.orig[max(0, start - 24):start]
    after = msg.orig[start + len(phrase):start + len(phrase) + 24]
    return bool(_DRAFT_NEAR.search(before) or re.match(r"\W*(?:\(?\s*)?(?:as\s+(?:the\s+|a\s+)?)?draft\b", after, re.I))


def _is_active(msg: Msg, raw: str) -> bool:
    """Whether the size phrase ``raw`` is marked as the per-token (active) share of a MoE."""
    for m in re.finditer(re.escape(raw), msg.orig):
        if _ACTIVE_AFTER.match(msg.orig, m.end()) or _ACTIVE_BEFORE.search(msg.orig[max(0, m.start() - 30):m.start()]):
            return True
    return False


def _active_share(ext: Extraction, store: Store, sizes: list[tuple[float, str]], msg: Msg) -> None:
    """A MoE's active parameters stated in words ("7B total with 1B active", "30B-A3B"): ``ext.active_params_b``
    when the total is known (stated, or the size of a model the catalog lacks) and the catalog does not
    already know the model's routing."""
    if ext.model and ext.resolved.get("model", "").startswith("generic-") is False:
        return  # a catalog model: its own total and active parameters
    total = ext.params_b
    if total is None and ext.model:
        try:
            total = catalog.resolve_model(store, ext.model).value.params_b
        except AdvisorError:
            return
    active = next((v for v, raw in sizes if _is_active(msg, raw)), None)
    if active is None and (m := _TOTAL_A.search(msg.orig)):
        active = float(m.group("active"))
    if active is None or total is None:
        return
    if not 0 < active < total:
        ext.reject(f"{fmt(active)}B active of {fmt(total)}B in all is not a mixture of experts (a MoE's active part is "
                   "more than 0 and less than its total); I ignored the active size.")
        return
    ext.active_params_b = active
    ext.note(f"Mixture of experts: {fmt(total)}B parameters in all, {fmt(active)}B used per token.")


def _compared(msg: Msg, men: list[tuple[int, str]]) -> bool:
    """Several models joined by "or" / "vs" / a list, in one sentence: candidates to compare."""
    from advisor.intake._machine import COMPARE_JOIN

    gaps = [msg.orig[a + len(pa):b] for (a, pa), (b, _) in zip(men, men[1:], strict=False)]
    if any(re.search(r"[.!?]\s", g) and not COMPARE_JOIN.search(g) for g in gaps):
        return False
    return any(COMPARE_JOIN.search(g) for g in gaps) or bool(
        re.search(r"\b(?:which|compare|should\s+i|better|faster|between|pick|choose|decide|deciding)\b", msg.orig, re.I))


def _sizes(msg: Msg) -> list[tuple[float, str]]:
    sizes = []
    for m in msg.finditer(_SIZE):
        million = m.group("u").lower().startswith("m")
        trillion = m.group("u").lower().startswith("t")
        if (million or trillion) and not re.search(r"param|model", m.group(0), re.I):
            continue  # "5m" alone is minutes or metres, "780M" a Radeon iGPU, "2T" a drive: left to their readers
        msg.claim(m.start(), m.end())
        if negated(msg, m.start()):
            continue
        sign = -1.0 if re.search(r"[-−]\s*$", msg.orig[max(0, m.start() - 2):m.start()]) and \
            not re.search(r"\w[-−]\s*$", msg.orig[max(0, m.start() - 3):m.start()]) else 1.0  # "-5B", not "qwen-7b"
        sizes.append((sign * float(m.group("num")) * (1000 if trillion else 1) / (1000 if million else 1),
                      m.group(0).strip()))
    return sizes


# ----------------------------------------------------------------------------- formats
def _q_phrase(raw: str) -> str:
    low = re.sub(r"\s+", " ", raw.lower())
    return _Q_CANON.get(low, raw.upper())


def _quant_in_name(name: str) -> str | None:
    """The weight format a model's file or repo name carries ("…-exl2-4.0bpw", "…-Instruct-4bit", "…-Q4_K_M.gguf",
    "mlx-community/…-8bit"), or None."""
    if (m := _BPW.search(name)) is not None:
        ver = "3" if re.search(r"exl3", name, re.I) else "2"
        return f"EXL{ver} {float(m.group('b')):g} bpw"
    if (m := _GGUF.search(name.replace(".gguf", ""))) is not None and re.search(r"\d", m.group("q")[1:]):
        return m.group("q").upper()
    if (m := _BITS.search(name)) is not None and int(m.group("b")) in (2, 3, 4, 5, 6, 8):
        return ("MLX " if re.search(r"\bmlx", name, re.I) else "") + f"{int(m.group('b'))}-bit"
    if (m := _NAMED_Q.search(name)) is not None:
        return _q_phrase(m.group("q"))
    return None


# Average bits of a dynamic GGUF as Unsloth names its builds ("the 1.58-bit DeepSeek R1" is IQ1_S, "1.73-bit" IQ1_M,
# "2.22-bit" IQ2_XXS: unsloth.ai/blog/deepseekr1-dynamic): sized as the llama.cpp format nearest in bits per weight.
_FRAC_BITS = re.compile(r"(?<![\w.])(?P<b>[1-7]\.\d{1,2})\s*-?\s*bits?\b(?!\s*(?:kv|cache))", re.I)


def _nearest_gguf(store: Store, bits: float) -> str | None:
    """The llama.cpp weight format (Q*/IQ*) whose bits per weight are nearest ``bits``; None when none is within
    half a bit."""
    from knowledge.catalog._load import all_quants

    table = {k: v.bits_per_weight for k, v in all_quants(store).items()
             if re.fullmatch(r"I?Q\d_\w+", k) and k not in ("Q1_0", "Q2_0") and v.bits_per_weight}
    best = min(table, key=lambda k: abs(table[k] - bits), default=None)
    return best if best is not None and abs(table[best] - bits) <= 0.5 else None


# Words that weigh two formats against each other ("Q4_K_M or IQ1_S?", "Q8 vs Q4", "which quant").
_WEIGHED = re.compile(r"\bor\b|\bvs\.?\b|\bversus\b|\bwhich\b|\bcompar\w*|\bbetter\b|\bbetween\b|\binstead\b", re.I)


def extract_quant(msg: Msg, ext: Extraction, store: Store) -> None:
    """Read the weight format ("Q4_K_M", "4-bit", "mlx 8bit", "fp16") into ``ext.quant`` and check it."""
    found: list[tuple[int, int, str]] = []  # (start, specificity, phrase)
    for m in msg.finditer(_GGUF):
        found.append((m.start(), 2, m.group("q").upper()))
    for m in msg.finditer(_NAMED_Q):
        found.append((m.start(), 2, _q_phrase(m.group("q"))))
    for m in msg.finditer(_BITS):
        b = int(m.group("b"))
        if b in (2, 3, 4, 5, 6, 8, 16, 32):
            group = f" g{m.group('g')}" if m.group("g") else ""
            found.append((m.start(), 3 if m.group("mlx") else 1, f"{'MLX ' if m.group('mlx') else ''}{b}-bit{group}"))
    frac = {}
    for m in msg.finditer(_FRAC_BITS):
        if (near := _nearest_gguf(store, float(m.group("b")))) is not None:
            found.append((m.start(), 2, near))
            frac[near] = m.group(0).strip()
    gguf = any(f[1] == 2 and f[2].startswith(("Q", "IQ", "TQ")) for f in found)
    if not gguf or _EXL_WORDS.search(msg.orig):  # "Q4_K_M (4.85 bpw)" is a GGUF's size, not an EXL2 file
        ver = "3" if re.search(r"\bexl(?:lama)?(?:v)?3\b", msg.orig, re.I) else "2"
        for m in msg.finditer(_BPW):
            found.append((m.start(), 3, f"EXL{ver} {float(m.group('b')):g} bpw"))
    for pat in (_GGUF, _NAMED_Q, _BITS, _BPW, _FRAC_BITS):
        for m in msg.finditer(pat):
            msg.claim(m.start(), m.end())
    found = [f for f in found if not _KV_QUANT.search(msg.orig[max(0, f[0] - 45):f[0]])
             and not _KV_AFTER.match(msg.orig[f[0] + len(f[2]):f[0] + len(f[2]) + 50])]
    weighed = [f for f in found if not re.search(r"\b(?:not|no|without)\s+(?:the\s+|a\s+)?$",
                                                 msg.orig[max(0, f[0] - 16):f[0]], re.I)]  # "better than Q4_K_M" too
    found = [f for f in found if not negated(msg, f[0])]
    if found and ext.quant is None:
        best = max(found, key=lambda f: (f[1], -f[0]))
        ext.quant = best[2]
        if best[2] in frac:
            ext.note(f"'{frac[best[2]]}' (the average bits of a dynamic GGUF, as Unsloth names them) taken as "
                     f"{best[2]}, the llama.cpp format nearest in bits per weight.")
        named = list(dict.fromkeys(f[2] for f in sorted(weighed)))
        if len(named) >= 2 and _WEIGHED.search(msg.orig):  # "Q4_K_M or IQ1_S, which?": both, side by side
            ext.compare_quants = named[:4]
    if ext.quant is None and ext.model and (inner := _quant_in_name(ext.model)) is not None:
        ext.quant = inner  # "Qwen2.5-Coder-32B-exl2-4.0bpw", "Llama-3.3-70B-Instruct-4bit": the build in its name
        ext.note(f"Weight format read from the model's name: {inner}.")
    if ext.quant is None:
        return
    try:
        q = catalog.resolve_quant(store, ext.quant, backend=ext.backend)
        ext.resolved["quant"] = q.value.name
        for a in q.assumptions:
            ext.note(a)
        if ext.backend and (clash := format_conflict(store, q.value, "mlx" if "mlx" in ext.backend.lower()
                                                     else classify_engine(ext.backend)[0])) is not None:
            ext.note(NOT_AS_IT_IS + clash[1])  # said where it is read; the Situation sizes the engine's own build
    except NotFoundError as e:
        ext.suggestions["quant"] = list(e.candidates)
        ext.reject(f"I don't know the weight format '{ext.quant}'. Try Q4_K_M, Q8_0, FP16 or 'MLX 4-bit'.")
        ext.quant = None


# ----------------------------------------------------------------------------- engine
def _api_in_use(text: str) -> re.Match[str] | None:
    """The first API named that is not asked about ("Vulkan or ROCm?": Vulkan; "would ROCm beat my Vulkan build?":
    Vulkan)."""
    asked = api_spans(text)
    return next((a for a in _ACCEL.finditer(text) if not any(s <= a.start() < e for s, e, _ in asked)), None)


def extract_backend(msg: Msg, ext: Extraction) -> None:
    """Read the engine ("ollama", "llama.cpp", "LM Studio", "mlx", "vllm"), GPU offload and CPU-only runs."""
    hits = sorted((m.start(), name) for m, name in engine_mentions(msg.orig))
    alts = alternative_spans(msg.orig)  # "should I switch to MLX?": asked about, not the engine in use
    hits = [h for h in hits if not any(a <= h[0] < b for a, b, _ in alts)
            and not any(a <= h[0] < b for a, b in refused_spans(msg.orig))]  # "I'd never use MLX": not the engine
    repo = [h for h in hits if h[1] == "mlx" and re.match(r"mlx[-_]community/|mlx[\s_-]*\d{1,2}[\s-]*bits?\b",
                                                            msg.orig[h[0]:h[0] + 14], re.I)]
    if repo and any(h[1] not in ("mlx", "LM Studio") for h in hits):  # LM Studio runs an MLX build with MLX
        hits = [h for h in hits if h not in repo]  # "mlx-community/…", "MLX 4-bit" in ollama: a build's name
    names = list(dict.fromkeys(n for _, n in hits))
    if len(names) > 1 and "exllamav2" in names and not re.search(r"\bexllama|\btabby", msg.orig, re.I):
        names.remove("exllamav2")  # "4.0bpw exl2 in llama.cpp": the format's name, beside the engine named
    if names:
        be = names[0]
        if "mlx" in names and "LM Studio" in names:
            be = "LM Studio (MLX)"
        elif be in ("llama.cpp", "ollama", "LM Studio", "koboldcpp") and (a := _api_in_use(msg.orig)):
            api = _ACCEL_NAMES[re.split(r"[\s_-]", a.group("a").lower())[0]]
            be += f" ({api})"
        if be in ("vllm", "sglang") and (v := _SERVER_VERSION.search(msg.orig)):
            be += f" {v.group('v')}"  # the version decides vLLM's engine (V0 before 0.8: advisor.perf.fit.vllm_v0)
        ext.backend = be
    if (layers := cpu_moe_layers(msg.orig)) is not None:
        ext.cpu_moe_layers = layers  # "--n-cpu-moe 30", "--cpu-moe": kept for the turns that follow
    if (kv := kv_cache_said(msg.orig)[0]) is not None:
        ext.kv_cache_type = kv  # "OLLAMA_KV_CACHE_TYPE=q4_0", "-ctk q8_0": kept for the turns that follow
    m = _NGL.search(msg.s)
    if m:
        raw = m.group("n") or m.group("n2") or m.group("n3")
        ext.n_gpu_layers = int(raw) if raw.isdigit() else word_number(raw)
        msg.claim(m.start(), m.end())
    elif _CPU_ONLY.search(msg.orig):
        ext.n_gpu_layers, ext.cpu_only_said = 0, "run"
    elif LACKS_GPU.search(msg.orig):
        ext.n_gpu_layers, ext.cpu_only_said = 0, "machine"
