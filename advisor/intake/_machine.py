"""How the machine is laid out: GPU count, interconnect, tensor parallelism, the kind of an unnamed machine,
and several machines in one message (candidates to compare, or a mixed box).

"tensor parallel 2" is a layout (two GPUs share each layer), never two users; "PCIe Gen3" / "NVLink" is
how the GPUs talk; "(an RTX 3090 in the same box for comparison)" is not the machine asked about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from advisor.intake._schema import Extraction
from advisor.intake._text import WORDNUM, Msg, word_number

_TP = re.compile(r"(?:--tensor[-_]parallel[-_]size|tensor[-_\s]parallel(?:ism)?(?:[-_\s]size)?|(?<![\w-])-tp|--tp|"
                 r"\btp)\s*(?:of|=|:|is)?\s*(?P<n>\d{1,3})\b|\bTP(?P<n2>\d)\b", re.I)
_NVLINK = re.compile(r"\b(?P<neg>no\s+|without\s+(?:an?\s+)?)?nv[\s-]?(?:link|switch)(?:ed|s)?\b", re.I)
_PCIE = re.compile(r"\bpci[\s-]?e(?:xpress)?\s*(?:gen\s*)?(?P<g>[3-6])?(?:\.0)?(?:\s*x\s?(?P<l>16|8|4|1))?\b"
                   r"|\bgen\s*(?P<g2>[3-6])\s*(?:x\s?(?P<l2>16|8|4|1))?\b(?=[^.]{0,20}pci|\s+x\d|\s+lanes|\s+slot)", re.I)
_FORM_FACTOR = re.compile(r"(?:a100|h100|h200|l40s?|a40|a30|v100|mi\d{3}x?|\d+\s*gb)[\s-]*$", re.I)
_LANES = re.compile(r"(?<![\w.])x(?P<l>16|8|4|1)\b(?:\s*lanes?)?|\b(?P<l2>16|8|4|1)\s+lanes\b", re.I)
_OF_THEM = re.compile(rf"\b(?P<n>\d{{1,2}}|{WORDNUM})\s+(?:of\s+(?:them|those|these|it)|such\s+cards|of\s+the\s+same)\b",
                      re.I)
# "2 GPUs, both RTX 3090", "four cards (all A100)", "a server with 8 GPUs, H100 SXM": the count said apart from the name.
_N_CARDS = re.compile(rf"(?<![\w.,])(?P<n>\d{{1,2}}|{WORDNUM})\s+(?:(?:identical|matching|same|nvidia|amd|geforce|radeon)\s+)?"
                      r"(?:gpus|cards|graphics\s+cards|video\s+cards|accelerators)\b", re.I)
_CHOICE = re.compile(r"\b(?:vs\.?|versus|or|compare|comparing|which|between|either)\b", re.I)
_PEOPLE = re.compile(r"\b(?:kids|children|sons?|daughters?|people|users|friends|colleagues|folks|family|us|we|"
                     r"engineers|devs|developers|students|members|staff)\b", re.I)
# A machine said to lack a GPU ("no GPU", "no dedicated graphics card", "without a GPU", "has no GPU"); not "no GPU
# offload" / "no GPU usage" (a symptom of a machine with one) nor "no GPU yet" (one is coming).
LACKS_GPU = re.compile(r"\b(?:no|without\s+(?:an?|any)?|lacks?\s+(?:an?|any)?|(?:do|does|did)(?:n'?t|\s+not)\s+have\s+(?:an?|any)?|"
                       r"ha(?:s|ve)\s+no)\s*(?:dedicated\s+|discrete\s+|separate\s+|real\s+|proper\s+|nvidia\s+|external\s+)?"
                       r"(?:gpu|graphics\s+card|video\s+card|graphics)s?\b"
                       r"(?!\s*(?:offload\w*|usage|use|utili[sz]ation|acceleration|layers?|support|load|memory|vram|yet)\b)",
                       re.I)
# A machine said to have no GPU is a CPU-only one, whatever else the words name (also "CPU only", "just the CPU"):
# checked first, since "GPU" in them would read as a GPU.
_NO_GPU = re.compile(r"\bcpu[\s-]*only\b|(?<![\w.,])(?:0|zero|no)\s+(?:dedicated\s+|discrete\s+)?gpus?\b|\bonly\s+(?:the\s+|a\s+|my\s+)?cpu\b|\bjust\s+(?:the\s+|a\s+|my\s+)?cpu\b|"
                     + LACKS_GPU.pattern, re.I)
# A machine the person means to buy ("plan to buy an RTX 4090", "thinking of getting a 3090", "no GPU yet"): what
# they lack today says nothing about how that machine runs a model.
PLANNED = re.compile(r"\b(?:plan(?:ning|s|ned)?\s+(?:to|on)\s+(?:buy|get|order|purchas)\w*|(?:thinking|thought)\s+(?:of|about)\s+"
                     r"(?:buying|getting)|consider(?:ing)?\s+(?:buying|getting)|before\s+(?:i\s+)?buy\w*|saving\s+(?:up\s+)?for|"
                     r"(?:going\s+to|gonna|about\s+to|want\s+to|wanna|should\s+i|if\s+i|once\s+i)\s+(?:buy|get|order|purchase)"
                     r"\s+(?:an?|the|one|two|\d|(?:rtx|gtx|rx|nvidia|amd|apple|mac)\w*)\b|(?:gpu|graphics\s+card)s?\s+yet)\b", re.I)
_GPU_CONTEXT = re.compile(r"\bgaming\s+(?:pc|rig|laptop|desktop|computer)\b|"
                          r"\bplan(?:ning|s)?\s+(?:to\s+(?:buy|get)\s+)?(?:an?\s+)?(?:\w+\s+)?gpu", re.I)
# Words that name a CPU-only computer without a model number ("12th gen Intel laptop", "an old i7", "Ryzen laptop").
_CPU_WORDS = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)[\s-]*gen(?:eration)?\s+(?:intel|core|i[3579])\b|\bintel\s+(?:core\s+)?"
                        r"(?:i[3579]|ultra)\b|\bcore\s+(?:i[3579]|ultra)\b|\b(?:an?\s+|my\s+|old\s+)i[3579]\b|"
                        r"\b(?:intel|ryzen|amd)\s+(?:laptop|notebook|desktop|pc|mini\s*pc|box)\b|\bxeon\b|\bepyc\b|"
                        r"\bthreadripper\b|\bddr[345]\b", re.I)
_KIND_WORDS = (
    ("apple_soc", re.compile(r"\b(?:mac|macbook|imac|apple\s+silicon|mac\s?book)\b", re.I)),  # "no GPU, only a Mac"
    ("cpu", _NO_GPU),
    ("datacenter_gpu", re.compile(r"\bdata\s?cent(?:er|re)\s+gpus?\b|\bserver\s+gpus?\b", re.I)),
    ("discrete_gpu", re.compile(r"\b(?:nvidia|geforce|radeon|amd)\s+(?:gpu|card|graphics)|\bgpus?\b|\bgraphics\s+card\b|"
                                r"\bvideo\s+card\b", re.I)),
    ("cpu", _CPU_WORDS),
)
@dataclass
class Mention:
    """A machine named in a message: where (``start``/``end``, characters), the tidied ``phrase``, GPU ``cores``
    said with it, ``product`` (a Mac product named without its chip, or ``"cpu"`` for a CPU model) and ``x86_mac``
    (an Intel Mac: a CPU machine)."""

    start: int
    end: int
    phrase: str
    cores: int | None = None
    product: str = ""
    x86_mac: bool = False


COMPARE_JOIN = re.compile(r"\bor\b|\bvs\.?(?!\w)|\bversus\b|\bcompared?\s+(?:to|with)\b|\bagainst\b|\binstead\s+of\b|"
                          r"\bbetter\b|\bthan\b", re.I)
MIXED_JOIN = re.compile(r"^\s*(?:\+|&|and|plus|with|alongside|together\s+with|,)\s*(?:an?\s+|one\s+|the\s+|my\s+)?"
                        r"(?:(?:old|older|other|second|spare|extra)\s+)?$", re.I)
ASIDE = re.compile(r"for\s+comparison|same\s+(?:box|machine|pc|rig)|\balso\s+(?:have|has|got)|\bused\s+to\s+have|"
                   r"\bprevious(?:ly)?\b|\b(?:when|before|earlier|faster|slower|better|worse)\b.{0,12}\bwas\s+on\b"
                   r"|\bmy\s+friend'?s?\b", re.I)  # "faster when it was on my 3090"; not "that was on an R9700"


def extract_layout(msg: Msg, ext: Extraction) -> None:
    """Tensor parallelism, interconnect and "N of them"; claims the words so they are not read as users."""
    for m in msg.finditer(_TP):
        n = int(m.group("n") or m.group("n2"))
        msg.claim(m.start(), m.end())
        if 1 <= n <= 4096 and ext.tensor_parallel is None:
            ext.tensor_parallel = n
            ext.note(f"Tensor parallel {n}: the model is split over {n} GPUs (a layout, not {n} users).")
    link = None
    for m in msg.finditer(_NVLINK):
        msg.claim(m.start(), m.end())
        if not m.group("neg"):
            link = "nvlink"
    for m in msg.finditer(_PCIE):
        g, lanes = m.group("g") or m.group("g2"), m.group("l") or m.group("l2")
        if lanes is None and (ln := _LANES.search(msg.orig[m.end():m.end() + 16])):
            lanes = ln.group("l") or ln.group("l2")
        if not g and not lanes and _FORM_FACTOR.search(msg.orig[max(0, m.start() - 24):m.start()]):
            continue  # "A100 80GB PCIe", "H100 PCIe": the card's form factor, read with its name
        msg.claim(m.start(), m.end())
        if link is None:
            link = f"pcie{g or ''}" + (f" x{lanes}" if lanes else "")
    if link is None and (ln := _LANES.search(msg.s)) and re.search(r"riser|lanes?|slot", msg.orig, re.I):
        link = f"pcie x{ln.group('l') or ln.group('l2')}"
        msg.claim(ln.start(), ln.end())
    ext.interconnect = link
    cards = [] if _CHOICE.search(msg.orig) else msg.finditer(_N_CARDS, limit=1)  # "which of 2 GPUs, 4090 or 5090"
    for m in [*msg.finditer(_OF_THEM, limit=1), *cards]:
        if ext.gpu_count is not None:
            break
        if _PEOPLE.search(msg.before(m.start(), 40)):
            continue  # "my kids (two of them)": people, not cards
        raw = m.group("n")
        count = int(raw) if raw.isdigit() else word_number(raw)
        if count is not None and 2 <= count <= 4096:
            ext.gpu_count = count
            msg.claim(m.start(), m.end())


def hardware_kind(msg: Msg) -> str | None:
    """The kind of machine when no name resolves: "my Mac" → apple_soc, "a GPU" → discrete_gpu."""
    for kind, pat in _KIND_WORDS:
        if pat.search(msg.orig) and not (pat is _NO_GPU and _GPU_CONTEXT.search(msg.orig)):
            return kind
    return None


def count_of(phrase: str) -> int:
    """Devices in a tidied phrase ("2x RTX 4090" → 2, "RTX 3090 + RTX 3060" → 2)."""
    total = 0
    for part in phrase.split(" + "):
        m = re.match(r"(\d{1,4})x ", part)
        total += int(m.group(1)) if m else 1
    return total


def strip_count(phrase: str) -> str:
    """The device name of a phrase without its count ("2x RTX 4090" → "RTX 4090")."""
    return re.sub(r"^\d{1,4}x\s+", "", phrase.strip())
