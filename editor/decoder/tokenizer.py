"""The tokenizer beside a decoder: ``tokenizer.json`` read by the ``tokenizers`` library.

onnxruntime-genai's builder (and optimum) write the Hugging Face tokenizer files next to the
model. Generation needs text -> ids and ids -> text; the ``tokenizers`` library reads
``tokenizer.json`` without transformers or a download. It is optional: without it (or
without the file) :func:`load_tokenizer` says what to install or where the file should be.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from editor.errors import GenerationError

__all__ = ["Tokenizer", "load_tokenizer", "special_token_ids"]


@dataclass
class Tokenizer:
    """Text <-> ids through a ``tokenizers.Tokenizer``."""

    inner: Any
    path: Path

    def encode(self, text: str) -> list[int]:
        return list(self.inner.encode(text).ids)

    def decode(self, ids: list[int]) -> str:
        return str(self.inner.decode(ids, skip_special_tokens=True))


def load_tokenizer(folder: Path) -> Tokenizer:
    """The tokenizer of the model in ``folder`` (raises :class:`GenerationError` saying why not)."""
    path = folder / "tokenizer.json"
    if not path.is_file():
        raise GenerationError(f"no tokenizer.json in {str(folder)!r}: generation needs the tokenizer the model "
                          "was exported with beside it")
    try:
        import tokenizers
    except ImportError:
        raise GenerationError("generation without onnxruntime-genai needs the 'tokenizers' library: "
                          "pip install tokenizers (or onnxruntime-genai)") from None
    try:
        return Tokenizer(tokenizers.Tokenizer.from_file(str(path)), path)
    except Exception as exc:  # noqa: BLE001 - the library's errors are plain Exceptions
        raise GenerationError(f"cannot read {str(path)!r}: {exc}") from None


def special_token_ids(folder: Path, config: dict) -> tuple[int | None, set[int]]:
    """(pad id, end-of-sequence ids) from genai_config.json, else generation_config.json."""
    model = config.get("model", {}) if config else {}
    eos = model.get("eos_token_id")
    pad = model.get("pad_token_id")
    if eos is None:
        try:
            gen = json.loads((folder / "generation_config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            gen = {}
        eos = gen.get("eos_token_id")
        pad = gen.get("pad_token_id", pad)
    ids = set(eos) if isinstance(eos, list) else ({int(eos)} if eos is not None else set())
    return (int(pad) if isinstance(pad, int) else None), ids
