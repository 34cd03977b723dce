"""Build a tiny random-weight llama model as a real mlx-lm model directory (no download).

The directory holds what ``mlx_lm.load`` reads from a Hugging Face snapshot: ``config.json``,
``model.safetensors``, and a tokenizer trained on the fly with the ``tokenizers`` library
(``tokenizer.json``, ``tokenizer_config.json``, ``special_tokens_map.json``). Loading it goes
through the same code path as a downloaded model.

Usage (from another test package)::

    from tests.probe.tiny_model import build_tiny_model
    path = build_tiny_model(tmp_path / "tiny")
"""

from __future__ import annotations

import json
import random
from pathlib import Path

__all__ = ["TINY_CONFIG", "build_tiny_model", "build_tiny_tokenizer"]

UNK = "[UNK]"
BOS = "<s>"
EOS = "</s>"

#: Architecture of the tiny model (a llama with hidden size 64, 2 layers, vocabulary 512).
TINY_CONFIG: dict = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "rms_norm_eps": 1e-5,
    "vocab_size": 512,
    "max_position_embeddings": 4096,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "float32",
    "bos_token_id": 1,
    "eos_token_id": 2,
}


def _words(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct pseudo-words of 2 to 6 lowercase letters, deterministic."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    out: set[str] = set()
    while len(out) < n:
        out.add("".join(rng.choice(letters) for _ in range(rng.randint(2, 6))))
    return sorted(out)


def build_tiny_tokenizer(path: str | Path, vocab_size: int = 512) -> None:
    """Train a word-level tokenizer on generated text and save it in Hugging Face layout.

    Args:
        path: directory to write ``tokenizer.json``, ``tokenizer_config.json`` and
            ``special_tokens_map.json`` into (created if missing).
        vocab_size: number of tokens, special tokens included (ids 0..vocab_size-1).
    """
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    words = _words(vocab_size + 64)
    rng = random.Random(1)
    corpus = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(400)]
    # Every word appears at least once, so the trainer has more candidates than room.
    corpus += [" ".join(words[i : i + 16]) for i in range(0, len(words), 16)]
    corpus += ["a , b . c ! d ?"]

    tok = Tokenizer(models.WordLevel(unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(vocab_size=vocab_size, special_tokens=[UNK, BOS, EOS])
    tok.train_from_iterator(corpus, trainer=trainer)
    tok.save(str(path / "tokenizer.json"))

    special = {"unk_token": UNK, "bos_token": BOS, "eos_token": EOS}
    (path / "special_tokens_map.json").write_text(json.dumps(special, indent=2))
    tok_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": 4096,
        "clean_up_tokenization_spaces": False,
        **special,
    }
    (path / "tokenizer_config.json").write_text(json.dumps(tok_config, indent=2))


def build_tiny_model(path: str | Path, *, seed: int = 0) -> str:
    """Write a tiny random-weight llama model directory that ``mlx_lm.load(path)`` accepts.

    Args:
        path: target directory (created if missing).
        seed: ``mx.random`` seed for the weights.

    Returns:
        The directory as a string.
    """
    import mlx.core as mx
    from mlx.utils import tree_flatten
    from mlx_lm.models import llama

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    cfg = dict(TINY_CONFIG)
    args = llama.ModelArgs(
        model_type="llama",
        hidden_size=cfg["hidden_size"],
        num_hidden_layers=cfg["num_hidden_layers"],
        intermediate_size=cfg["intermediate_size"],
        num_attention_heads=cfg["num_attention_heads"],
        num_key_value_heads=cfg["num_key_value_heads"],
        rms_norm_eps=cfg["rms_norm_eps"],
        vocab_size=cfg["vocab_size"],
        rope_theta=cfg["rope_theta"],
        tie_word_embeddings=cfg["tie_word_embeddings"],
    )
    mx.random.seed(seed)
    model = llama.Model(args)
    weights = dict(tree_flatten(model.parameters()))
    mx.eval(weights)
    mx.save_safetensors(str(path / "model.safetensors"), weights, metadata={"format": "mlx"})
    (path / "config.json").write_text(json.dumps(cfg, indent=2))
    build_tiny_tokenizer(path, vocab_size=cfg["vocab_size"])
    return str(path)
