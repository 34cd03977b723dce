"""Symptoms: what a person's words or pasted output say about their setup, as typed facts.

The patterns below are the only place where setup wording is read; rules in :mod:`advisor.diagnose`
read :class:`~advisor.understand.situation.Symptoms` fields instead.

>>> s = read_symptoms("llama-server -ngl 20 --top-k 0 in Docker")
>>> s.n_gpu_layers, s.cpu_sampling, s.container
(20, True, True)
"""

from __future__ import annotations

import re

from advisor.understand.situation import Symptoms

__all__ = ["parse_ngl", "read_symptoms"]

_NGL = re.compile(r"(?:-ngl|--n-gpu-layers|n[_-]gpu[_-]layers|\bngl|num_gpu)\s*[=:]?\s*(\d{1,6})\b", re.I)
_PREFILL_WORDS = re.compile(
    r"prompt[- ]processing|prefill|time to first token|ttft|first (?:token|word)|before (?:it|the model) (?:starts|answers)|"
    r"takes? (?:long|forever|a minute|minutes|ages) to (?:start|respond|answer)|re-?process|resend|cache[_ ]prompt|"
    r"prompt cache|conversation grows|growing prompt|long prompts?",
    re.I,
)
_DECODE_WORDS = re.compile(r"generation|generat(?:es|ing)|tokens? per second|tok/s|t/s|streaming|decode|eval rate|"
                           r"types? slow|words? per second", re.I)
_PREFIX_WORDS = re.compile(r"resend|re-?process|growing|conversation grows|cache[_ ]prompt|prompt cache|reuse|agent|"
                           r"history|system prompt|same (?:prompt|document|file)", re.I)
_CONTAINER = re.compile(r"docker|container|podman|\bwsl2?\b|virtualbox|\bvm\b|llamagpt|proxmox|\blxc\b", re.I)
_KV_QUANT = re.compile(r"(?:kv[_ ]cache[_ ]type|-ctk|--cache-type-k|cache-type-k|kv[_-]cache[_-]dtype)\s*[=:]?\s*(q\d_\d|q\d|fp8\w*|f16)|"
                       r"kv[- ]cache quantization|(q[48]_0) kv|kv.{0,12}(q[48]_0)", re.I)
_NUMA = re.compile(r"numa|dual[- ]socket|2 sockets|two sockets", re.I)
_SWAP = re.compile(r"\bswap(?:ping|s)?\b|memory pressure|page ?file|paging|shared gpu memory|out of memory|\boom\b", re.I)
_NO_GPU = re.compile(
    r"no (?:cuda|gpu|metal|rocm|vulkan)[- ]?(?:capable )?(?:device|gpu)?s? (?:found|detected|available)|"
    r"(?:cuda|gpu|metal|rocm) (?:is )?not (?:found|detected|available|used)|not using (?:the )?gpu|"
    r"gpu (?:usage|utili[sz]ation|load) (?:is |stays |at )?(?:0|zero|idle|low)|runs? on (?:the )?cpu(?! only)|"
    r"using (?:the )?cpu instead|cpu[- ]only (?:build|wheel|version)|offloaded 0/\d+ layers",
    re.I,
)
_THERMAL = re.compile(r"throttl|fanless|gets? (?:slower|hot)|after (?:a few|some|\d+) minutes|thermal|overheat", re.I)
_LONG_CTX = re.compile(
    r"(?:long|large|growing|bigger|full) (?:context|conversation|chat|history)|as the (?:context|conversation|chat) grows|"
    r"\d+k (?:context|tokens of context)|deeper into|context fills", re.I)
_THREADS = re.compile(r"(?:\s-t|--threads|threads?\s*[=:]?)\s*(\d{1,3})\b", re.I)
_CPU_ONLY = re.compile(r"cpu[- ]only|-ngl 0\b|ngl 0\b|cpu backend|n[_-]gpu[_-]layers\s*=\s*0|num_gpu\s*[=:]?\s*0\b", re.I)
_TOP_K0 = re.compile(r"(?:--?top[-_ ]?k|top_k)\s*[=:]?\s*0\b", re.I)
_EAGER = re.compile(r"enforce[-_]eager|eager mode|cuda graphs? (?:off|disabled)", re.I)
_ATTN = re.compile(r"(?:attention[-_ ]backend|VLLM_ATTENTION_BACKEND)\s*[=:]?\s*([A-Za-z_]+)", re.I)
_FA = re.compile(r"(?:-fa|--flash-attn|flash[_ ]attn|flash[- ]attention)\s*(?:[=:]?\s*(on|off|1|0|true|false|enabled|disabled))?", re.I)
_SPEC = re.compile(r"\b(mtp|eagle3?|medusa|draft model|--model-draft|-md\b|speculative|ngram|lookahead)", re.I)
_PREFIX_CACHE = re.compile(r"(enable|disable|no)[-_ ]prefix[-_ ]caching|prefix[-_ ]caching\s*(on|off|enabled|disabled)?|"
                           r"cache_prompt\s*[=:]?\s*(true|false)", re.I)
_PARALLEL = re.compile(r"(?:-np|--parallel|--max-num-seqs|OLLAMA_NUM_PARALLEL)\s*[=:]?\s*(\d{1,5})\b", re.I)
_REGRESSION = re.compile(r"after (?:the |an? )?(?:update|upgrade)|since (?:the |an? )?(?:update|upgrade|version)|"
                         r"(?:got|became|is) slower (?:after|since|than before)|regress", re.I)
_GPU_BACKEND = (("clblast", "clblast"), ("opencl", "opencl"), ("vulkan", "vulkan"), ("sycl", "sycl"),
                ("rocm", "rocm"), ("hip", "rocm"), ("cuda", "cuda"), ("cublas", "cuda"), ("metal", "metal"))


def parse_ngl(text: str | None, near: float | None = None) -> int | None:
    """GPU layer count from a command line or log (``-ngl 48``, ``n-gpu-layers = 1``, ``num_gpu 20``).

    When ``near`` (a measured rate) is given, the count on the line mentioning that number wins.
    Counts beyond 100,000 are not layer counts and are ignored.
    """
    if not text:
        return None
    if near is not None:
        token = f"{near:g}"
        for line in text.splitlines():
            if token in line:
                m = _NGL.search(line)
                if m and int(m.group(1)) <= 100_000:
                    return int(m.group(1))
    m = _NGL.search(text)
    return int(m.group(1)) if m and int(m.group(1)) <= 100_000 else None


def read_symptoms(text: str | None, *, n_gpu_layers: int | None = None, gpu_fraction: float | None = None,
                  near: float | None = None) -> Symptoms:
    """Typed symptoms from the person's words, their backend label and any pasted output.

    Args:
        text: everything the person wrote or pasted about the setup, joined (question, backend, output).
        n_gpu_layers, gpu_fraction: values already read by an importer or stated in facts (win over text).
        near: a measured rate; the ``-ngl`` on the line quoting it wins.
    """
    t = (text or "")[:200_000]
    mentions: set[str] = set()
    asks: set[str] = set()
    if _PREFILL_WORDS.search(t):
        asks.add("prefill")
    if _DECODE_WORDS.search(t):
        asks.add("decode")
    kvm = _KV_QUANT.search(t)
    kvq = next((g for g in kvm.groups() if g), "quantized") if kvm else None
    if kvq and kvq.lower() == "f16":
        kvq = None
    fa_m = _FA.search(t)
    fa: bool | None = None
    if fa_m:
        fa = (fa_m.group(1) or "on").lower() in ("on", "1", "true", "enabled")
    spec_m = _SPEC.search(t)
    spec = None
    if spec_m:
        w = spec_m.group(1).lower()
        spec = "mtp" if w == "mtp" else "eagle" if w.startswith("eagle") or w == "medusa" else \
            "ngram" if w in ("ngram", "lookahead") else "draft"
    pc_m = _PREFIX_CACHE.search(t)
    pc: bool | None = None
    if pc_m:
        words = " ".join(g for g in pc_m.groups() if g).lower()
        pc = not any(w in words for w in ("disable", "no", "off", "false"))
    par = _PARALLEL.search(t)
    thr = _THREADS.search(t)
    attn = _ATTN.search(t)
    tl = t.lower()
    backend = next((v for k, v in _GPU_BACKEND if k in tl), None)
    cpu_only = bool(_CPU_ONLY.search(t))
    if cpu_only and backend is None:
        backend = "cpu"
    if _SWAP.search(t):
        mentions.add("swap")
    return Symptoms(
        n_gpu_layers=n_gpu_layers if n_gpu_layers is not None else parse_ngl(t, near),
        gpu_fraction=gpu_fraction,
        gpu_backend=backend,
        cpu_only=cpu_only,
        gpu_not_used=bool(_NO_GPU.search(t)),
        container=bool(_CONTAINER.search(t)),
        cpu_sampling=bool(_TOP_K0.search(t)),
        eager_mode=bool(_EAGER.search(t)),
        attention_backend=attn.group(1).lower() if attn else None,
        flash_attention=fa,
        kv_cache_quant=kvq,
        speculative=spec,
        prefix_caching=pc,
        batching=int(par.group(1)) if par else None,
        swapping=bool(_SWAP.search(t)),
        thermal=bool(_THERMAL.search(t)),
        numa=bool(_NUMA.search(t)),
        threads=int(thr.group(1)) if thr else None,
        regression=bool(_REGRESSION.search(t)),
        long_context=bool(_LONG_CTX.search(t)),
        asks_about=frozenset(asks),
        prefix_reuse=bool(_PREFIX_WORDS.search(t)),
        mentions=frozenset(mentions),
    )
