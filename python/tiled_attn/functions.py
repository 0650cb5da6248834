"""Score and mask functions of the kernel library, by name, and their captured
inputs.

A score function (FlexAttention's ``score_mod``) maps each scaled score, with
its batch entry, head, query and key index, to the score the softmax sees; a
mask function (``mask_mod``) says whether the query sees the key. Both are
``func.func``s of the tile dialect (``kernels/functions/<name>.mlir``),
compiled into the library's kernels; a call names them and passes, in the
order the function declares them, the tensors and numbers they read: its
captured inputs (ALiBi's per-head ``slopes``, document masking's per-token
``document_ids``).
"""

from __future__ import annotations

from ctypes import addressof
from typing import Any, List, Optional, Sequence, Tuple

from .errors import NoKernelError
from .runtime import (CAPTURE_TYPES, CAPTURE_TYPE_NAMES, KernelLibrary, TaCapture,
                      c_string_address)
from .validation import aligned_rows

#: The ta_sdpa_args fields of a call without functions: score_function,
#: mask_function, captures, num_captures.
NO_FUNCTIONS = (0, 0, 0, 0)


def function_fields(torch: Any, library: KernelLibrary, device: Any,
                    score_mod: Optional[str], score_mod_args: Sequence[Any],
                    mask_mod: Optional[str], mask_mod_args: Sequence[Any],
                    block_mask_args: Sequence[Any] = ()
                    ) -> Tuple[Tuple[int, int, int, int], List[Any]]:
    """The ta_sdpa_args fields (score_function, mask_function, captures,
    num_captures) of the functions asked for, and what must stay alive until
    the launch: the captures' array and the tensors it points into. With
    `block_mask_args` (block_mask.block_mask_args'), a block-sparse kernel's:
    the block mask's four tensors are its captured inputs of function
    "block_mask".

    Raises ValueError (TypeError for a wrong type) naming the argument: a
    function no kernel of the library has, captured inputs of the wrong
    count, type, dtype, rank or device."""
    for what, name, args in (("score_mod", score_mod, score_mod_args),
                             ("mask_mod", mask_mod, mask_mod_args)):
        if name is not None and type(name) is not str:
            raise TypeError(f"{what} must be the name of a library function (a str) or None, "
                            f"got {type(name).__name__} {name!r}")
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"{what}_args must be a tuple of the function's captured inputs, "
                            f"got {type(args).__name__}")
        if name is None and len(args):
            raise ValueError(f"{what}_args given without {what}")
    if score_mod is None and mask_mod is None and not block_mask_args:
        return NO_FUNCTIONS, []
    score, mask = score_mod or "", mask_mod or ""
    sparse = bool(block_mask_args)
    # A block-sparse kernel is one of the `sparse` feature (KernelVariant.def).
    kernel = next((k for k in library.kernels
                   if k.score_function == score and k.mask_function == mask
                   and k.sparse == sparse), None)
    if kernel is None:
        have = sorted({"+".join(f for f in (k.score_function, k.mask_function,
                                            "block_mask" if k.sparse else "") if f)
                       for k in library.kernels
                       if k.score_function or k.mask_function or k.sparse})
        raise NoKernelError(
            f"the kernel library {library.path} has no kernel with score_mod={score_mod!r} and "
            f"mask_mod={mask_mod!r}{' and a block_mask' if sparse else ''}; its functions: "
            f"{', '.join(have) or 'none'}")
    groups = (("score_mod", score_mod, score_mod_args),
              ("mask_mod", mask_mod, mask_mod_args),
              ("block_mask", "block_mask" if sparse else None, block_mask_args))
    captures, count, keep = capture_array(torch, device, kernel.captures, groups)
    return ((c_string_address(score) if score_mod else 0,
             c_string_address(mask) if mask_mod else 0,
             addressof(captures), count), keep)


def paged_fields(torch: Any, library: KernelLibrary, device: Any,
                 block_table: Any) -> Tuple[Tuple[int, int, int, int], List[Any]]:
    """The ta_sdpa_args fields (score_function, mask_function, captures,
    num_captures) of a call on a paged KV cache: its block table, the
    captured input ``block_table`` of the library's paged kernels, and what
    must stay alive until the launch.

    Raises NoKernelError when the library has no paged kernel."""
    kernel = next((k for k in library.kernels if k.paged), None)
    if kernel is None:
        raise NoKernelError(f"the kernel library {library.path} has no paged kernels (a "
                            "KV cache with a block_table): rebuild it with kernels/library.json")
    captures, count, keep = capture_array(torch, device, kernel.captures,
                                          (("block_table", "paged", (block_table,)),))
    return (0, 0, addressof(captures), count), keep


def capture_array(torch: Any, device: Any,
                  kernel_captures: Sequence[Tuple[str, str, str, int, int]],
                  groups: Sequence[Tuple[str, Optional[str], Sequence[Any]]]
                  ) -> Tuple[Any, int, List[Any]]:
    """The ta_capture array of a kernel's captured inputs (``kernel_captures``,
    each ``(name, function, dtype, rank, align_bytes)``), from ``groups``,
    each ``(what, function, values)``: a function's values in its declared
    order (``what`` names the argument in messages; a None function is
    skipped). A view the kernel copies in 16-byte blocks (``align_bytes``
    16) whose rows are not so aligned is passed as a copy with padded rows
    (:func:`~tiled_attn.validation.aligned_rows`). Returns the array, how
    many it holds, and what must stay alive until the launch.

    Raises ValueError (TypeError for a wrong type) naming the argument:
    captured inputs of the wrong count, type, dtype, rank or device."""
    captures = (TaCapture * max(1, len(kernel_captures)))()
    keep: List[Any] = [captures]
    count = 0
    for what, name, args in groups:
        if name is None:
            continue
        wanted = [c for c in kernel_captures if c[1] == name]
        if len(args) != len(wanted):
            names = ", ".join(c[0] for c in wanted) or "none"
            raise ValueError(f"{what} {name!r} takes {len(wanted)} captured input"
                             f"{'' if len(wanted) == 1 else 's'} ({names}) in {what}_args, "
                             f"got {len(args)}")
        for (cname, _, dtype, rank, align), value in zip(wanted, args):
            c = captures[count]
            count += 1
            encoded = cname.encode()
            keep.append(encoded)
            c.name = encoded
            c.type = CAPTURE_TYPE_NAMES.index(dtype)
            c.rank = rank
            label = f"{what}_args ({cname})"
            if rank == 0:
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise TypeError(f"{label} must be a number, got {type(value).__name__}")
                c.scalar = float(value)
                continue
            if not hasattr(value, "data_ptr"):
                raise TypeError(f"{label} must be a tensor, got {type(value).__name__}")
            types = {getattr(torch, n): t for n, t in CAPTURE_TYPES.items()}
            if types.get(value.dtype) != c.type:
                torch_names = " or ".join(f"torch.{n}" for n, t in CAPTURE_TYPES.items()
                                          if t == c.type)
                raise ValueError(f"{label} must be a {torch_names} tensor, got "
                                 f"{value.dtype}")
            if value.dim() != rank:
                raise ValueError(f"{label} must have rank {rank}, got shape "
                                 f"{tuple(value.shape)}")
            if value.device != device:
                raise ValueError(f"{label} must be on {device} (with q), got {value.device}")
            if align > 1:
                value = aligned_rows(torch, value)
            elif value.stride()[-1] != 1 and value.shape[-1] > 1:
                value = value.clone(memory_format=torch.contiguous_format)
            keep.append(value)
            c.data = value.data_ptr()
            for d in range(rank):
                c.sizes[d] = value.shape[d]
                c.strides[d] = value.stride()[d]
    return captures, count, keep
