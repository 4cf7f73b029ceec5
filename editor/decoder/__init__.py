"""Autoregressive decoders (LLMs): their KV-cache layout, and text generation through them.

:func:`find_layout` says which inputs of a model are its tokens, mask, positions and past
caches, and which named dims are the past, new and total lengths; runs
(:mod:`editor.runtime.kv_cache`), costs (:mod:`editor.cost.per_token`) and generation use it.
"""

from editor.decoder.layout import CacheInput, DecoderLayout, find_layout, read_genai_config

__all__ = ["CacheInput", "DecoderLayout", "find_layout", "read_genai_config"]
