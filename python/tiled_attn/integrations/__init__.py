"""Glue between :func:`tiled_attn.sdpa` and other libraries.

Each submodule imports the library it serves; this package imports none of
them, so ``import tiled_attn`` never pulls in transformers.

- :mod:`tiled_attn.integrations.transformers`: an attention function for
  Hugging Face transformers' ``AttentionInterface``::

      import tiled_attn.integrations.transformers as ta_tf
      ta_tf.register()
      model = AutoModelForCausalLM.from_config(
          cfg, attn_implementation="tiled_attn", dtype=torch.bfloat16)
"""

__all__: list = []
