"""Symptoms: what a person's words or pasted output say about their setup, as typed facts.

The patterns below are the only place where setup wording is read; rules in :mod:`advisor.diagnose`
read :class:`~advisor.understand.situation.Symptoms` fields instead.

>>> s = read_symptoms("llama-server -ngl 20 --top-k 0 in Docker")
>>> s.n_gpu_layers, s.cpu_sampling, s.container
(20, True, True)
"""

from __future__ import annotations

import re

from advisor.understand.engine_question import api_asked, engine_asked
from advisor.understand.situation import Symptoms

__all__ = ["guess_kind", "kv_cache_said", "parse_ngl", "read_machine_facts", "read_symptoms"]

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
                       r"kv[- ]cache quantization|(q[48]_0) kv|kv.{0,12}(q[48]_0)|\b(fp8|int8|q[48]_0)[\s_-]+kv\b|"
                       r"\b(q[48]_0)(?:\s*(?:/|,|or|and)\s*q[48]_0)*\s+(?:for|in|on)\s+(?:the\s+|my\s+)?(?:kv|k/v)\b|"
                       r"\bquantiz\w*\s+(?:the\s+|my\s+)?(?:kv|k/v)\b|\b(?:kv|k/v)[\s-]cache\s+(?:in|at|to)\s+(\d)[\s-]?bits?\b|"
                       r"\b(f16|fp16|unquantized|full[\s-]precision)\s+(?:kv\s+|k/v\s+)?cache\b",
                       re.I)
# "would a draft model help?", "what about speculative decoding with qwen 0.5b as draft?", "is -md worth trying?": asked
# about, not in use ("I run it with -md qwen2.5-0.5b", "using speculative decoding, 60 tok/s, is that normal?").
_SPEC_ASK_BEFORE = re.compile(r"\b(?:would|should|could|can|does|will|worth|try(?:ing)?|what\s+about|how\s+about|how\s+do|"
                              r"consider\w*|enabl\w*|turn(?:ing)?\s+on|add(?:ing)?)\b[^.!?\n]{0,50}$", re.I)
_SPEC_ASK_AFTER = re.compile(r"^[^.!?\n]{0,70}?\b(?:help|worth|faster|speed\s*(?:it\s+)?up|gain|improve|boost)", re.I)
_SPEC_IN_USE = re.compile(r"\b(?:i'?m|i\s+am|we'?re|already|currently|"
                          r"(?<!can\s)(?<!could\s)(?<!should\s)(?<!would\s)(?<!do\s)(?<!will\s)(?<!shall\s)(?<!to\s)"
                          r"i\s+(?:use|run))\s+(?:using\s+|running\s+|with\s+)?"
                          r"[^.!?\n]{0,20}$", re.I)


def _spec_question(t: str, start: int, end: int, *, after: bool = True) -> bool:
    """Whether the setting mentioned at ``start:end`` (speculative decoding, a quantized KV cache) is asked about
    rather than in use; ``after``: "… help?" after the mention also asks (not for a command-line flag)."""
    clause = re.split(r"[.!?\n;]", t[max(0, start - 80):start])[-1]
    if _SPEC_IN_USE.search(clause):
        return False
    return bool(_SPEC_ASK_BEFORE.search(clause) or (after and _SPEC_ASK_AFTER.search(t[end:end + 90])))


# The NPU named ("is it using the NPU?", "can the Neural Engine help?", "XDNA"): answered by diagnose.npu.
_NPU = re.compile(r"\bnpus?\b|\bneural\s+engine\b|\bxdna\d?\b|\bhexagon\b|\bane\b(?!\w)", re.I)

_NUMA = re.compile(r"numa|dual[- ]socket|2 sockets|two sockets", re.I)
_SWAP = re.compile(r"\bswap(?:ping|s)?\b|memory pressure|page ?file|paging|shared gpu memory|out of memory|\boom\b", re.I)
_NO_GPU = re.compile(
    r"no (?:cuda|gpu|metal|rocm|vulkan)[- ]?(?:capable )?(?:device|gpu)?s? (?:found|detected|available)|"
    r"(?:cuda|gpu|metal|rocm) (?:is )?not (?:found|detected|available|used)|not using (?:the )?gpu|"
    r"gpu (?:usage|utili[sz]ation|load) (?:is |stays |at )?(?:0|zero|idle|low)|runs? on (?:the )?cpu(?! only)|"
    r"using (?:the )?cpu instead|cpu[- ]only (?:build|wheel|version)|offloaded 0/\d+ layers|"
    r"gpu (?:sits|stays|is|remains|shows) (?:completely |totally )?(?:idle|at [0-5] ?%|[0-5] ?%)|"
    r"(?:nvidia-smi|nvtop|jtop|radeontop|intel_gpu_top|task manager) shows? (?:the gpu (?:at )?)?(?:0|zero) ?%|"
    r"gpu shows no (?:load|activity|usage)|no (?:gpu )?load in (?:nvtop|radeontop|intel_gpu_top|jtop)|"
    r"task manager shows (?:the )?gpu (?:idle|at 0 ?%)|\bgpu\b[^.\n]{0,20}\b(?:idle|at 0 ?%|0 ?% (?:usage|load|util))",
    re.I,
)
# The GPU's driver or runtime failing to start, as nvidia-smi, NVML, CUDA or ROCm print it: nothing runs on the GPU.
_DRIVER_FAIL = re.compile(r"couldn'?t communicate with the nvidia driver|failed to initiali[sz]e nvml|nvml: driver/library "
                          r"version mismatch|cuda driver version is insufficient|no cuda-capable device is detected|"
                          r"ggml_cuda_init: failed to initiali[sz]e cuda|cuda_error_no_device|hipErrorNoDevice|"
                          r"no devices were found|unable to determine the device handle", re.I)
# ROCm refusing the card in the engine's log ("amdgpu is not supported … gpu_type=gfx1032"): it then runs on the CPU.
_ROCM_REFUSED = re.compile(r"amdgpu (?:is )?not supported|gpu_type=gfx10[1-3][1-9]|unsupported (?:gpu|gfx)|"
                           r"gfx10(?:31|32|34|12|10)\b", re.I)
_THERMAL = re.compile(r"throttl|fanless|gets? (?:slower|hot)|after (?:a few|some|\d+) minutes|thermal|overheat", re.I)
# llama-server's slot log when no cached prefix matched: the slot's KV cache is removed from position 0 and the
# whole prompt is evaluated again (tools/server/server.cpp: "kv cache rm [%d, end)" with 0 as the kept length).
_KV_RM = re.compile(r"kv cache rm \[0, end\)|memory_seq_rm \[0, end\)", re.I)
_LONG_CTX = re.compile(
    r"(?:long|large|growing|bigger|full) (?:context|conversation|chat|history)|as the (?:context|conversation|chat) grows|"
    r"(?<!\d)\d+k (?:context|tokens of context)|deeper into|context fills|\blong(?:er)? prompts?\b|\bdepth\b|"
    r"\bat \d+(?:\.\d+)?\s?k\b", re.I)
# The person says it IS slow, as they see it (not a worry about what it will be): "so slow", "takes forever",
# "terrible", "why is my ... slow". A future or conditional before it in the sentence ("will it be slow?") is no
# complaint (:func:`_complains`).
_COMPLAINT = re.compile(
    r"\b(?:so|too|very|really|painfully|super|incredibly|unbearably|extremely|quite|way|kinda|pretty)\s+slow\b|"
    r"\b(?:is|are|feels?|runs?|seems?|got|gets|getting|been|being)\s+(?:\w+\s+)?slow\b|\bslow(?:er)? than (?:i |it |expected)|"
    r"sluggish|\blaggy\b|\blags?\b|\bcrawl(?:s|ing)?\b|\bterrible\b|\bhorrible\b|\bawful\b|\bunusabl[ey]\b|"
    r"\bpainful(?:ly)?\b|\bforever\b|\btakes? (?:so |too |very |really )?long\b|\btoo long\b|\bages\b|"
    r"\bwait(?:ing)? (?:for ages|forever|so long|too long|a long time|minutes)\b|"
    r"\bwhy (?:is|does|do|are) (?:it|this|my|the|ollama|lm studio|llama)\b[^.?!]{0,80}\b(?:slow|long)\b|"
    # the same in other languages people write in: es/pt lento, de langsam, fr lent(e), it lento, ru медленно, zh/ja 慢/遅い
    r"\b(?:muy |tan |bem |muito |sehr |so |zu |très |trop |troppo )?(?:lent[oae]s?|langsam|lente?s?)\b|"
    r"медленн|тормоз|慢|遅い|느려", re.I)
# The slow request comes after a pause (the model was unloaded meanwhile): "after a few min break", "after being idle".
_AFTER_IDLE = re.compile(r"after (?:a |an |some )?(?:few |couple of |\d+ )?(?:min(?:ute)?s?|hours?|while|break|pause|idle|"
                         r"inactivity)\b|after (?:being |sitting |it sits )?idle|cold start|first (?:message|request|prompt|"
                         r"question) (?:of the day|after|in a while)|\b(?:when|after|once|whenever|every time) (?:i|we) (?:come|get|am|are) back\b|"
                         r"\bback from (?:lunch|a break|break|a meeting|coffee|a walk)|(?:left|leave) it (?:for|idle)|"
                         # "after lunch the first reply takes 25 s, then it's fast", "in the morning the first answer…"
                         r"after (?:lunch|a meeting|the weekend|a coffee|coffee|dinner|sleep|a night)|"
                         r"(?:in the morning|next morning)\b.{0,40}\bfirst\b|"
                         r"\bfirst (?:reply|answer|response|message|request|prompt|question|one)\b[^.?!]{0,60}"
                         r"\bthen (?:it'?s |it is |everything(?:'s| is) )?(?:fast|quick|fine|ok|normal)", re.I)
_NOT_YET = re.compile(r"\b(?:will|would|going to|gonna|might|could|should i expect|if i|before i buy|planning)\b[^.?!]*$", re.I)
_THREADS = re.compile(r"(?:\s-t|--threads|threads?\s*[=:]?)\s*(\d{1,3})\b", re.I)
_CPU_ONLY = re.compile(r"cpu[- ]only|-ngl 0\b|ngl 0\b|cpu backend|n[_-]gpu[_-]layers\s*=\s*0|num_gpu\s*[=:]?\s*0\b", re.I)
_TOP_K0 = re.compile(r"(?:--?top[-_ ]?k|top_k)\s*[=:]?\s*0\b", re.I)
_EAGER = re.compile(r"enforce[-_]eager(?!\s*[=:]\s*(?:false|0)\b)|eager mode|cuda graphs? (?:off|disabled)|"
                    r"cudagraphs? (?:off|disabled)", re.I)
_ATTN = re.compile(r"(?:attention[-_ ]backend|VLLM_ATTENTION_BACKEND)\s*[=:]?\s*([A-Za-z_]+)|"
                   r"\bUsing ([A-Za-z][\w-]*(?: SDPA)?) (?:attention )?backend", re.I)
# Flash attention said on or off, in words, flags, env vars, log names and labels; the last said wins (llama.cpp
# takes the last flag). Off: "-fa 0", "--flash-attn off", "fa=0", "-fa0", "OLLAMA_FLASH_ATTENTION=0", "flash attention
# is off/disabled", "disabled flash attention", "no FA", "(no FA)", "without flash attention", "FA off", "__fa0".
_FA_NAME = r"(?:ollama_flash_attention|--flash-attn|flash[_ ]?attn|flash[- ]?attention|(?<![\w-])-fa|(?<![\w-])fa(?=\s*[=:]|\s+(?:on|off)\b))"
_FA_STATE = re.compile(
    rf"(?P<neg>\b(?:no|without|disabled?|disabling|turned\s+off|turn\s+off|switched\s+off|w/o)\s+(?:the\s+)?"
    rf"(?:-fa|fa|flash[- ]?attn|flash[- ]?attention)\b)"
    rf"|(?P<pos>\b(?:with|enabled?|turned\s+on|turn\s+on)\s+(?:the\s+)?(?:-fa|fa|flash[- ]?attn|flash[- ]?attention)\b"
    rf"(?!\s*(?:[=:]|\bis\b|\bwas\b)?\s*(?:off|0|false|disabled)\b))"
    rf"|(?P<name>{_FA_NAME})\s*(?:(?:[=:]|\bis\b|\bwas\b)?\s*(?P<v>on|off|1|0|true|false|enabled|disabled|auto)\b)?"
    r"|__fa(?P<log>[01])\b|\((?P<paren>no\s+)?FA\b(?!\s*(?:on|off)\b)",
    re.I)


def flash_attention_said(text: str | None) -> bool | None:
    """Flash attention as a text says it (the last mention wins), None when it says nothing or "auto".

    >>> flash_attention_said("llama-server -fa 0"), flash_attention_said("ik_llama.cpp-cpu (FA)")
    (False, True)
    >>> flash_attention_said("llama.cpp -fa 0 -fa 1"), flash_attention_said("RTX 4090, llama.cpp") is None
    (True, True)
    """
    state: bool | None = None
    for m in _FA_STATE.finditer(text or ""):
        if m.group("neg"):
            state = False
        elif m.group("pos"):
            state = True
        elif m.group("log"):
            state = m.group("log") == "1"
        elif m.group("name") is not None or m.group(0).startswith("("):
            if m.group(0).startswith("("):
                state = not m.group("paren")
                continue
            v = (m.group("v") or "on").lower()
            state = None if v == "auto" else v in ("on", "1", "true", "enabled")
    return state
_SPEC = re.compile(r"\b(mtp|eagle3?|medusa|draft model|speculative|ngram|lookahead)|(?<![\w-])(--model-draft|-md|--draft(?:-max|-n)?)\b", re.I)
_TGWUI = re.compile(r"text-generation-webui|oobabooga|\btgwui\b|text gen(?:eration)? web ?ui", re.I)
_PREFIX_CACHE = re.compile(r"(enable|disable|no)[-_ ]prefix[-_ ]caching|prefix[-_ ]caching\s*(on|off|enabled|disabled)?|"
                           r"cache_prompt\s*[=:]?\s*(true|false)", re.I)
_PARALLEL = re.compile(r"(?:-np|--parallel|--max-num-seqs|OLLAMA_NUM_PARALLEL)\s*[=:]?\s*(\d{1,5})\b", re.I)
_REGRESSION = re.compile(r"after (?:the |an? )?(?:update|upgrade)|after (?:updating|upgrading)|since (?:updating|upgrading)|"
                         r"since (?:the |an? )?(?:update|upgrade|version)|(?:got|became|is|much) slower (?:after|since|than before)|"
                         r"regress|downgrad|roll(?:ed|ing)? back|(?:new|newer|latest) (?:version|release|build) is slower|"
                         r"used to (?:get|run|be|do) (?:about |around |~)?\d", re.I)
_FULL_OFFLOAD = re.compile(r"fully (?:offloaded|on the gpu)|full(?:y)? (?:gpu )?offload|all (?:the )?layers (?:on|to|in) (?:the )?(?:gpu|vram)|"
                           r"(?:-ngl|--n-gpu-layers|num_gpu)\s*[=:]?\s*(?:99|999|9999|-1)\b|offloaded (\d+)/(\d+) layers", re.I)
_PASCAL = re.compile(r"\b(?:tesla )?p40\b|\btesla p4\b|\bp4 \d+gb|\bgtx ?10[5-8]0|\bpascal\b|titan xp?\b|\bp10[24]\b|"
                     r"quadro p[1-6]000|\bp106-\d+", re.I)
_MAXWELL = re.compile(r"\b(?:tesla )?m40\b|\bgtx ?9[5-8]0|\bmaxwell\b", re.I)
_KEPLER = re.compile(r"\bk80\b|\bkepler\b|\bgtx ?7[6-8]0", re.I)
_P2P_OFF = re.compile(r"p2p (?:is )?(?:disabled|off|not (?:supported|available))|nccl_p2p_disable\s*=\s*1|no p2p", re.I)
_ENGINE_WORDS = r"(?:lm ?studio|ollama|llama\.?cpp|llama-server|vllm|sglang|koboldcpp|mlx(?:-lm)?|exllama\w*|the (?:old|previous|older) version)"
_FASTER_ELSEWHERE = re.compile(
    _ENGINE_WORDS + r"\s+(?:gets|got|does|did|reaches|reached|runs at|ran at|gives|gave|hits|manages)\s+(?:over |about |~|around |more than )?\d|"
    r"(?:faster|quicker) (?:in|with|on|under) " + _ENGINE_WORDS + r"|same model (?:and quant )?(?:is|runs) (?:much )?faster", re.I)
_POWER = re.compile(r"\bon battery\b|\bunplugged\b|battery (?:mode|saver|power)|power[- ]sav(?:ing|er)|\beco mode\b|"
                    r"power (?:limit|cap)(?:ped)? (?:set |lowered )?(?:to|at) \d+\s*w|quiet mode|silent mode|low power mode", re.I)
# A question for the speed itself ("how fast will it run?", "how many tokens per second", "wie schnell"): answered with the
# number first, not with a yes or no.
_HOW_FAST = re.compile(r"\bhow\s+(?:fast|quick(?:ly)?|many\s+(?:tokens?|tok/s|t/s|tps|words))\b|\bwhat\s+(?:speed|tok/s|t/s|tps|ttft|"
                       r"throughput|latency|time\s+to\s+first\s+token)\b|\b(?:what|which)\b[^.?!]{0,60}\bshould\s+(?:we|i)\s+expect\b|"
                       r"\bwhat\s+(?:kind\s+of\s+)?(?:speeds?|performance)\s+(?:will|would|can|should|do)\b|"
                       r"\bwie\s+(?:schnell|viele\s+token)|\bqu[eé]\s+velocidad|\bcu[aá]ntos\s+tokens|\bquelle\s+vitesse|"
                       r"\bcombien\s+de\s+tokens", re.I)
# An open question ("why…?", "what should I expect?", "which…?") and a yes/no one ("can it…?", "will it fit?"): an open
# question is answered with the number first, not with "Yes".
_OPEN_QUESTION = re.compile(r"\b(?:why|what|which|how|where|when)\b[^.?!\n]*\?", re.I)
_YES_NO = re.compile(r"\b(?:can|could)\s+(?:i|we|it|my|the|a|this|you)\b|\b(?:will|would)\s+(?:it|this|that|my|a|the)\b|"
                     r"\b(?:is|are)\s+(?:it|this|that|\d+\s*gb)\s+(?:enough|possible|feasible|usable|ok|fine)|"
                     r"\bdoes\s+(?:it|this)\s+(?:fit|run|work)|\benough\b|\bpossible\b|\bfeasible\b|\bkann\s+ich|"
                     r"\bpuedo\b|\best-ce\s+que\b", re.I)


def asks_open(text: str) -> bool:
    """An open question and no yes/no one ("why is it slow?", "what TTFT should we expect?")."""
    return bool(_OPEN_QUESTION.search(text)) and not _YES_NO.search(text)


# The prompt micro-batch set: llama.cpp "-ub 4096", "--ubatch-size 2048", "n_ubatch = 1024"; Ollama's "num_batch 1024"
# (it sets both the batch and the micro-batch).
_UBATCH = re.compile(r"(?:(?<![\w-])-ub|--ubatch-size|n_ubatch|\bnum_batch)\s*[=:]?\s*(\d{2,5})\b", re.I)
# A question for the memory it takes ("how much VRAM do I need?", "will it fit in 24GB?", "wie viel Speicher").
# "how much context can I fit", "max context I can run", "how long a context", "how many tokens of context fit",
# "what context size can I get", "biggest context window that fits"
# The engine ran out of KV cache: vLLM's warning, or the person's words for it ("lots of preemptions", "kv cache is full")
_KV_FULL = re.compile(r"preempted\s+by\s+PreemptionMode|not\s+enough\s+KV\s+cache\s+space|\bpreemptions?\b|"
                      r"\bkv[\s-]*cache\s+(?:is\s+|was\s+|gets\s+|usage\s+(?:at|hits?|is)\s+)?(?:full|100\s*%|99(?:\.\d)?\s*%)",
                      re.I)
CONTEXT_ASKED = re.compile(
    r"\bhow\s+(?:much|long|big|large)\s+(?:of\s+a\s+|a\s+)?(?:context|ctx)(?:\s+(?:window|length|size))?\b"
    r"(?!\s+(?:slow|affect|change|matter|hurt|cost|process|take|prefill|load))|"
    r"\bhow\s+(?:big|large|long)\s+(?:can|could)\s+(?:the|my|a|its)\s+(?:context|ctx)(?:\s+(?:window|length|size))?\s+(?:be|get|go)\b|"
    r"\bhow\s+many\s+tokens\s+(?:of\s+context\s+)?(?:can|could|will|would|fit|do\s+i\s+get|does\s+it\s+hold)|"
    r"\b(?:max(?:imum)?|largest|biggest|longest|highest)\s+(?:possible\s+)?(?:context|ctx|num_ctx|n_ctx)"
    r"(?:\s+(?:window|length|size))?\s+(?:(?:that\s+)?(?:i|we|it)\s+(?:can|could)|can\s+i|could\s+i|that\s+(?:fits?|will\s+fit)|"
    r"(?:will|would)\s+fit|fits?|possible|(?:do|would|will)\s+i\s+get|for\b|on\b|with\b|in\b)|"
    r"\bwhat\s+(?:context|ctx)(?:\s+(?:window|length|size))?\s+(?:can|could|will|would|should|do)\s+(?:i|we|it)\b|"
    r"\b(?:context|ctx)(?:\s+(?:window|length|size))?\s+(?:can|could)\s+(?:i|we)\s+(?:fit|run|use|get|set|afford)\b",
    re.I)
_HOW_MUCH_MEMORY = re.compile(r"\bhow\s+much\s+(?:v?ram|memory|gpu\s+memory|vram)\b|"
                              r"\bhow\s+many\s+(?:gigs?|gigabytes?|gb|gib)\b|\bwhat\s+(?:v?ram|memory)\s+(?:do|would|will)\b|"
                              r"\bwie\s+viel\s+(?:v?ram|speicher)|\bcu[aá]nta\s+(?:v?ram|memoria)|\bcombien\s+de\s+(?:v?ram|m[ée]moire)",
                              re.I)
# The routed experts kept in system RAM on purpose (llama.cpp "--n-cpu-moe 28", "--cpu-moe", "-ot exps=CPU"), not a
# question about it ("worth switching to --n-cpu-moe?").
EXPERTS_ON_CPU = re.compile(r"--n-cpu-moe|--cpu-moe|(?<![\w-])-n?cmoe\b|(?:-ot|override-tensor)[\s=]+[\"']?[^\s\"']*exps[^\s\"']*=\s*cpu\b|"
                            r"experts?\s+(?:on|to)\s+(?:the\s+)?cpu|"
                            r"(?:experts?|moe)\s+weights?\s+(?:on|onto|to)\s+(?:the\s+)?cpu",
                            re.I)
_ASKING_ABOUT = re.compile(r"\b(?:switch\w*|try\w*|worth|should|would|could|consider\w*|what\s+about|how\s+about|how\s+fast\s+with)\b"
                           r"[^.?!\n]{0,60}$", re.I)


# How many layers' experts sit in system RAM: "--n-cpu-moe 28" (those of the first 28 layers), "--cpu-moe" or an
# override of every layer's experts ("-ot exps=CPU", "-ot '.ffn_.*_exps.=CPU'") all of them (ALL_LAYERS); an override
# naming some blocks ("-ot 'blk\.(2[0-9])\.ffn_.*_exps=CPU'") says no count (llama.cpp common/arg.cpp).
_N_CPU_MOE = re.compile(r"--n-cpu-moe[\s=]+(\d{1,3})\b|(?<![\w-])-ncmoe[\s=]+(\d{1,3})\b", re.I)
_ALL_EXPERTS = re.compile(r"--cpu-moe\b|(?:experts?|moe)\s+weights?\s+(?:on|onto|to)\s+(?:the\s+)?cpu|(?<![\w-])-cmoe\b|(?:-ot|--override-tensor)[\s=]+[\"']?(?![^\s\"']*blk)[^\s\"']*exps[^\s\"']*=\s*CPU",
                          re.I)
ALL_LAYERS = 10_000  # "every layer" for cpu_moe_layers
# An override naming the blocks whose experts go to the CPU: the block pattern between "blk\." and "\.ffn".
_BLOCK_EXPERTS = re.compile(r"(?:-ot|--override-tensor)[\s=]+[\"']?blk\\?\.(?P<blk>[^\s\"']{1,80}?)\\?\.ffn[^\s\"']*exps[^\s\"']*="
                            r"\s*cpu\b", re.I)
_MAX_BLOCKS = 256  # more transformer blocks than any released model has


def cpu_moe_layers(text: str) -> int | None:
    """Layers whose routed experts the run keeps in system RAM, as set (:data:`_N_CPU_MOE`); :data:`ALL_LAYERS` for
    all of them; None when not said as a number (or only asked about).

    >>> cpu_moe_layers("llama-server -m q.gguf -ngl 99 --n-cpu-moe 30"), cpu_moe_layers("-ot exps=CPU")
    (30, 10000)
    """
    for m in _N_CPU_MOE.finditer(text):
        if not _ASKING_ABOUT.search(text[max(0, m.start() - 80):m.start()]):
            return int(m.group(1) or m.group(2))
    for m in _ALL_EXPERTS.finditer(text):
        if not _ASKING_ABOUT.search(text[max(0, m.start() - 80):m.start()]):
            return ALL_LAYERS
    blocks: set[int] = set()
    for m in _BLOCK_EXPERTS.finditer(text):  # "-ot 'blk\.(2[0-9]|3[0-9])\.ffn_.*_exps=CPU'": those blocks' experts
        try:
            pat = re.compile(m.group("blk").replace("\\d", "[0-9]"))
        except re.error:
            continue
        blocks |= {n for n in range(_MAX_BLOCKS) if pat.fullmatch(str(n))}
    return len(blocks) or None


def experts_on_cpu_said(text: str) -> bool:
    """The run keeps its experts in system RAM (``--n-cpu-moe``, ``-ot exps=CPU``), not merely asks about it."""
    return any(not _ASKING_ABOUT.search(text[max(0, m.start() - 80):m.start()]) for m in EXPERTS_ON_CPU.finditer(text))


_HOUSEHOLD = re.compile(r"\bfamily\b|\bkids?\b|\bchildren\b|household|homework|my (?:wife|husband|partner|son|daughter|parents|mum|mom|dad)|"
                        r"grand(?:ma|pa|parents)|at home\b|for the house", re.I)
_TP = re.compile(r"(?:tensor[- ]parallel(?:ism|[_-]size)?|--tp|-tp|\btp)\s*[=:]?\s*(\d)\b|\b(\d)[- ]way tensor parallel|"
                 r"(tensor[- ]parallel|--split-mode row|-sm row)", re.I)
_PIPELINE = re.compile(r"pipeline[- ]parallel|--pipeline-parallel-size|-pp \d", re.I)
_INTERCONNECT = re.compile(r"nvlink|pcie? ?(?:gen ?)?([345])(?:\.0)?|gen ?([345]) (?:pcie|x\d+)", re.I)
_LANES = re.compile(r"\bx(16|8|4|1)\b", re.I)
_CARVEOUT = re.compile(r"(\d{1,3}(?:\.\d+)?)\s*(?:gb|gib|mb)\s*(?:of )?(?:bios |uma |dedicated |reserved )*(?:vram|carve-?out|uma frame buffer)"
                       r"(?=[^.]*\b(?:bios|carve|uma|strix|ryzen ai|apu|igpu|780m|890m|8060s)\b)|"
                       r"(?:carve-?out|uma frame buffer|bios vram)\s*(?:of|=|:|set to)?\s*(\d{1,3}(?:\.\d+)?)\s*(gb|gib|mb)", re.I)
_COUNT = re.compile(r"^\s*(\d{1,2})\s*[x×]\s*|\b(\d{1,2})\s*[x×]\s*(?=[a-z])|\b(dual|two|quad|four)\b", re.I)
# An Intel Mac: a Mac named with an Intel CPU, or from a year before Apple Silicon (2019 and earlier) — one home, read by
# intake (the machine is sized as an x86 CPU one) and here.
_INTEL_MAC_RE = (r"intel\s+(?:mac|imac)|\b(?:mac\w*|imac)\b.*\b(?:intel|core\s*i[3579]|i[3579]|xeon)\b|"
     r"\b(?:intel|core\s*i[3579]|i[3579]|xeon)\b.*\b(?:mac\w*|imac)\b|\b(?:mac\w*|imac)\b[^.]*\b20(?:0\d|1\d)\b|"
     r"\b20(?:0\d|1\d)\s+(?:(?:1[3-7](?:\.\d)?[\s-]*(?:inch|in|\")?|late|early|mid)\s+)*(?:mac\w*|imac)\b")
_KIND_HINTS: tuple[tuple[str, str], ...] = (
    (_INTEL_MAC_RE, "cpu"),
    (r"\bmac(?:book|\s?mini|\s?studio|\s?pro)?\b|\bimac\b|apple silicon|\bm[1-5]\s*(?:pro|max|ultra)?\b", "apple_soc"),
    (r"\b(?:radeon\s*)?(?:680m|760m|780m|880m|890m|8060s|8050s)\b|\bigpu\b|integrated (?:gpu|graphics)|strix halo|ryzen ai max|"
     r"\bapu\b|jetson|dgx spark|gb10", "apu"),
    (r"\bmi\s?\d{2,3}x?\b|instinct|\b[ahbl]\d{2,3}\b|\btesla\b|\bh20\b|\bgh200\b|\bgaudi|datacenter|data center", "datacenter_gpu"),
    (r"\brtx\b|\bgtx\b|radeon|\bgeforce\b|\barc\s?[ab]\d|\brx\s?\d{3,4}|\bgpu\b|vram|nvidia|cuda", "discrete_gpu"),
    (r"\bepyc\b|\bxeon\b|threadripper|\bryzen\b|core i[3579]|\bcpu\b|raspberry|\bddr[345]\b|\bn100\b", "cpu"),
)
# Layers on the GPU out of the model's: llama.cpp's "offloaded 20/62 layers to GPU", "20/62 layers on GPU", "20 of 62 layers"
_LAYERS_OF = re.compile(r"(?<![\w.])(\d{1,4})\s*(?:/|of|out\s+of)\s*(\d{1,4})\s+(?:repeating\s+)?layers\b", re.I)
_PS_SPLIT = re.compile(r"\b(\d{1,3})\s*%\s*/\s*(\d{1,3})\s*%\s*CPU\s*/\s*GPU\b|\b100\s*%\s*(CPU|GPU)\b", re.I)
# the split in words: "50% CPU 50% GPU", "60% GPU / 40% CPU", "30% cpu and 70% gpu" (the two add up to 100)
_SPLIT_WORDS = re.compile(r"\b(\d{1,3})\s*%\s*(CPU|GPU)\W{0,5}(?:and\s+)?(\d{1,3})\s*%\s*(CPU|GPU)\b", re.I)
_GPU_BACKEND = (("clblast", "clblast"), ("opencl", "opencl"), ("vulkan", "vulkan"), ("sycl", "sycl"),
                ("rocm", "rocm"), ("hip", "rocm"), ("cuda", "cuda"), ("cublas", "cuda"), ("metal", "metal"))


def _ubatch(text: str) -> int | None:
    """The micro-batch said last ("-ub 4096"), within llama.cpp's range (32–65536), else None."""
    got = [int(m.group(1)) for m in _UBATCH.finditer(text)]
    return got[-1] if got and 32 <= got[-1] <= 65536 else None


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


# A batch setting named in a question ("should I increase max-num-seqs?", "would -np 4 help?"): diagnose.batch_asked
_BATCH_KNOB = re.compile(r"max[-_ ]num[-_ ]seqs|max[-_ ]running[-_ ]requests|max[-_ ]batch[-_ ]size|\bbatch\s+size\b|"
                         r"OLLAMA_NUM_PARALLEL|--parallel\b|(?<![\w-])-np\s*\d*|\bnum[-_ ]parallel\b|\bparallel\s+slots?\b",
                         re.I)
_BATCH_ASK = re.compile(r"\b(?:should|would|could|will|does|do|can|is|worth|help|increas\w*|rais\w*|bump\w*|more)\b",
                        re.I)
# "does ollama even support it?", "will vLLM work on this card?": whether an engine runs here at all (diagnose.engines)
_SUPPORT = re.compile(r"\bsupport(?:s|ed|ing)?\b|\bwork(?:s|ing)?\s+(?:with|on)\b|\bcompatible\b|"
                      r"\brun\s+on\s+(?:it|this|that|my)\b", re.I)


def batch_setting_asked(text: str) -> str | None:
    """The batch setting a question asks about, as written ("max-num-seqs"), or None when none is asked about."""
    m = _BATCH_KNOB.search(text or "")
    if m is None or not _BATCH_ASK.search(text[max(0, m.start() - 60):m.end() + 60]):
        return None
    return m.group(0).strip()


# A setting the person asks whether to make ("should I set …", "is it worth enabling …"): weighed, not in use
_SHOULD_SET = re.compile(r"\b(?:should|shud|shoud|shld|shall|could|can|do\s+(?:i|we)\s+need\s+to|is\s+it\s+ok\s+to)\s+"
                         r"(?:(?:i|we)\s+)?(?:also\s+)?(?:set|use|enable|add|turn\s+on|try|"
                         r"switch\s+to|go\s+with)\b|\bworth\s+(?:it\s+to\s+)?(?:setting|using|enabling|adding|trying|"
                         r"set|use|enable|add|try)\b|\bwould\s+(?:setting|using|enabling|adding)\b|\bwhat\s+if\s+i\s+(?:set|use)\b",
                         re.I)


def kv_cache_said(text: str) -> tuple[str | None, str | None]:
    """(KV-cache type in use, type asked about) as the text says it: ``"q8_0"``, ``"q4_0"``, ``"fp8"``, ``"f16"`` (said
    so), ``"quantized"`` (no type named). "would an fp8 kv cache help?" is asked about, not in use; a flag in a
    question ("does -ctk q8_0 make it fit?") is judged as set."""
    kvm = _KV_QUANT.search(text or "")
    kvq = next((g for g in kvm.groups() if g), "quantized") if kvm else None
    if kvq and kvq.isdigit():
        kvq = {"8": "q8_0", "4": "q4_0"}.get(kvq, "quantized")
    kvq = kvq.lower() if kvq else None
    if kvq in ("fp16", "unquantized", "full precision", "full-precision"):
        kvq = "f16"  # "and with an f16 cache?": the default cache, said
    # a flag or setting named ("does -ctk q8_0 make it fit?") is judged as set: the whole answer is about it
    if kvm and kvq and kvq != "f16" and kvm.group(1) is None and _spec_question(text, kvm.start(), kvm.end()):
        return None, kvq
    if kvm and kvq and kvq != "f16" and _SHOULD_SET.search(text[max(0, kvm.start() - 40):kvm.start()]):
        return None, kvq  # "should I set OLLAMA_KV_CACHE_TYPE=q8_0?": weighed, not in use yet
    return kvq, None


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
    kvq, kv_asked = kv_cache_said(t)
    if kvq == "f16":
        kvq = None
    fa = flash_attention_said(t)
    spec_m = _SPEC.search(t)
    spec = None
    spec_asked = bool(spec_m and _spec_question(t, spec_m.start(), spec_m.end()))
    if spec_m and not spec_asked:
        w = (spec_m.group(1) or spec_m.group(2)).lower()
        spec = "mtp" if w == "mtp" else "eagle" if w.startswith("eagle") or w == "medusa" else \
            "ngram" if w in ("ngram", "lookahead") else "draft"
    pc_m = _PREFIX_CACHE.search(t)
    pc: bool | None = None
    if pc_m:
        words = " ".join(g for g in pc_m.groups() if g).lower()
        pc = not any(w in words for w in ("disable", "no", "off", "false"))
    par = _PARALLEL.search(t)
    thr = _THREADS.search(t)
    attn_m = _ATTN.search(t)
    attn = (attn_m.group(1) or attn_m.group(2) or "").lower().replace(" ", "_").replace("-", "_") if attn_m else None
    tl = t.lower()
    backend = next((v for k, v in _GPU_BACKEND if k in tl), None)
    cpu_only = bool(_CPU_ONLY.search(t))
    if cpu_only and backend is None:
        backend = "cpu"
    if _SWAP.search(t):
        mentions.add("swap")
    if _TGWUI.search(t):
        mentions.add("text-generation-webui")  # its tok/s divides by the whole call, prompt included
    ngl = n_gpu_layers if n_gpu_layers is not None else parse_ngl(t, near)
    split = _LAYERS_OF.search(t) if gpu_fraction is None else None  # "20/62 layers on GPU", "offloaded 20 of 62 layers"
    if split and 0 < int(split.group(2)) <= 1000 and int(split.group(1)) <= int(split.group(2)):
        gpu_fraction = round(int(split.group(1)) / int(split.group(2)), 3)
        ngl = int(split.group(1)) if ngl is None else ngl
    ps = _PS_SPLIT.search(t) if gpu_fraction is None else None  # `ollama ps`: "48%/52% CPU/GPU", "100% CPU"
    if ps:
        gpu_fraction = (int(ps.group(2)) / 100 if ps.group(2) else (0.0 if ps.group(3).upper() == "CPU" else 1.0))
    sp = _SPLIT_WORDS.search(t) if gpu_fraction is None else None
    if sp and sp.group(2).upper() != sp.group(4).upper() and int(sp.group(1)) + int(sp.group(3)) == 100:
        gpu_fraction = int(sp.group(1) if sp.group(2).upper() == "GPU" else sp.group(3)) / 100
    full = _FULL_OFFLOAD.search(t)
    full_offload = bool(full and (full.group(1) is None or full.group(1) == full.group(2)))
    arch = "pascal" if (_PASCAL.search(t) and not re.search(r"\bp100\b", t, re.I)) else "maxwell" if _MAXWELL.search(t) else "kepler" if _KEPLER.search(t) else None
    return Symptoms(
        n_gpu_layers=ngl,
        gpu_fraction=gpu_fraction,
        gpu_backend=backend,
        cpu_only=cpu_only,
        gpu_not_used=bool(_NO_GPU.search(t) or _DRIVER_FAIL.search(t)),
        driver_failed=bool(_DRIVER_FAIL.search(t)),
        container=bool(_CONTAINER.search(t)),
        cpu_sampling=bool(_TOP_K0.search(t)),
        eager_mode=bool(_EAGER.search(t)),
        attention_backend=attn or None,
        flash_attention=fa,
        kv_cache_quant=kvq,
        kv_quant_asked=kv_asked,
        batch_setting_asked=batch_setting_asked(t),
        support_asked=bool(_SUPPORT.search(t)),
        speculative=spec,
        speculative_asked=spec_asked,
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
        cache_discarded=bool(_KV_RM.search(t)),
        mentions=frozenset(mentions),
        full_offload=full_offload,
        gpu_arch=arch,
        p2p_disabled=bool(_P2P_OFF.search(t)),
        faster_elsewhere=bool(_FASTER_ELSEWHERE.search(t)),
        household=bool(_HOUSEHOLD.search(t)),
        asks_speed=bool(_HOW_FAST.search(t)) or asks_open(t),
        rocm_refused=bool(_ROCM_REFUSED.search(t)),
        experts_on_cpu=experts_on_cpu_said(t),
        cpu_moe_layers=cpu_moe_layers(t),
        engine_asked=engine_asked(t),
        api_asked=api_asked(t),
        npu_asked=bool(_NPU.search(t)),
        asks_memory=bool(_HOW_MUCH_MEMORY.search(t)),
        context_asked=bool(CONTEXT_ASKED.search(t)),
        kv_cache_full=bool(_KV_FULL.search(t)),
        ubatch=_ubatch(t),
        intel_mac=intel_mac(t),
        portable=bool(_PORTABLE_WORDS.search(t)),
        power_limited=bool(_POWER.search(t)),
        complaint=_complains(t),
        after_idle=bool(_AFTER_IDLE.search(t)),
    )


_PORTABLE_WORDS = re.compile(r"\b(?:laptop|notebook|thinkpad|zenbook|vivobook|ideapad|yoga|ultrabook|macbook|xps|"
                             r"mini[\s-]?pc|nuc|handheld|steam\s*deck|rog\s*ally|raspberry\s*pi|sbc)\b", re.I)


def _complains(text: str) -> bool:
    """The text says the run is slow as the person sees it now (:data:`_COMPLAINT`), not as a worry ("will it
    be slow?"): no future or conditional earlier in the same sentence."""
    for m in _COMPLAINT.finditer(text):
        start = max(text.rfind(".", 0, m.start()), text.rfind("?", 0, m.start()), text.rfind("!", 0, m.start())) + 1
        if not _NOT_YET.search(text[start:m.start()]):
            return True
    return False


def intel_mac(text: str) -> bool:
    """An Intel Mac is named (and no Apple Silicon chip is)."""
    return bool(re.search(_INTEL_MAC_RE, text, re.I)) and not re.search(r"\bm[1-5]\b|apple silicon", text, re.I)


def guess_kind(text: str | None) -> str | None:
    """The kind of machine a name describes when the catalog does not know it ("an 8 GB Mac" → apple_soc).

    Returns one of apple_soc, discrete_gpu, datacenter_gpu, apu, cpu, or None. An Intel Mac is ``cpu``.

    >>> guess_kind("MacBook Air 8GB"), guess_kind("AMD Instinct MI100"), guess_kind("laptop with Radeon 780M")
    ('apple_soc', 'datacenter_gpu', 'apu')
    """
    t = (text or "")[:2000]
    if intel_mac(t):
        return "cpu"
    return next((kind for pat, kind in _KIND_HINTS[1:] if re.search(pat, t, re.I)), None)


def read_machine_facts(text: str | None) -> dict[str, object]:
    """Machine facts a description states: GPU count, layout, tensor-parallel degree, interconnect, lanes, carve-out.

    Returns a dict with any of ``count`` (int), ``layout`` ("tensor_parallel", "pipeline_parallel"),
    ``tensor_parallel`` (int), ``interconnect`` ("nvlink", "pcie3"...), ``pcie_lanes`` (int),
    ``vram_carveout_gb`` (float, GB); keys the text does not state are absent.

    >>> read_machine_facts("2x RTX 3090, PCIe Gen3 x16, vLLM TP=2")["interconnect"]
    'pcie3'
    """
    t = (text or "")[:20_000]
    out: dict[str, object] = {}
    cm = _COUNT.search(t)
    if cm:
        word = (cm.group(3) or "").lower()
        n = int(cm.group(1) or cm.group(2) or 0) or {"dual": 2, "two": 2, "quad": 4, "four": 4}.get(word, 0)
        if 1 < n <= 64:
            out["count"] = n
    tp = _TP.search(t)
    if tp:
        out["layout"] = "tensor_parallel"
        deg = tp.group(1) or tp.group(2)
        if deg and int(deg) > 1:
            out["tensor_parallel"] = int(deg)
    elif _PIPELINE.search(t):
        out["layout"] = "pipeline_parallel"
    no_nvlink = bool(re.search(r"no nvlink|without nvlink|nvlink:? (?:no|none|off)", t, re.I))
    for ic in _INTERCONNECT.finditer(t):
        gen = ic.group(1) or ic.group(2)
        if gen or not no_nvlink:
            out["interconnect"] = f"pcie{gen}" if gen else "nvlink"
            break
    lanes = _LANES.search(t)
    if lanes and "interconnect" in out:
        out["pcie_lanes"] = int(lanes.group(1))
    co = _CARVEOUT.search(t)
    if co:
        val = float(co.group(1) or co.group(2))
        unit = (co.group(3) or co.group(0)).lower()
        out["vram_carveout_gb"] = val / 1024 if "mb" in unit else val
    return out
