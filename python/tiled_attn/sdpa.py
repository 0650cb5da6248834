"""``sdpa(q, k, v, causal=False, scale=None)``: attention with a library kernel.

One call is: the torch-level checks (:mod:`.validation`), the output
allocation, a copy of any input whose layout the kernels cannot take, and
one call into the C++ runtime, which checks the shapes, chooses the kernel,
packs its parameters and launches it on the current stream.

``sdpa`` is also the ``torch.library`` custom op ``tiled_attn::sdpa``
(:mod:`.ops`): under ``torch.compile`` it becomes that op, which has a fake
(meta) implementation, so a compiled graph holds it without a break. In
eager mode the same work runs without the dispatcher's round trip.

torch is imported inside the functions only, so that the rest of the
package (and its unit tests) works without it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Optional, Union

from .runtime import DTYPES, MASKS, KernelLibrary, TaSdpaArgs, default_library, set_tensor
from .validation import check_inputs, copy_reason

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["sdpa", "sdpa_eager"]

LibraryArg = Union[None, str, "KernelLibrary"]


def sdpa(
    q: "torch.Tensor",
    k: "torch.Tensor",
    v: "torch.Tensor",
    causal: bool = False,
    scale: Optional[float] = None,
    *,
    library: LibraryArg = None,
    kernel: Optional[str] = None,
) -> "torch.Tensor":
    """Scaled dot-product attention, ``softmax(scale * q @ k^T [+ mask]) @ v``.

    Args:
        q: ``[B, H, S_q, D]`` CUDA tensor, float16 or bfloat16.
        k, v: ``[B, H, S_k, D]`` tensors of q's device and dtype, ``S_k >= 1``.
        causal: PyTorch's ``is_causal``: query ``i`` sees keys ``j <= i``
            (top-left alignment).
        scale: the softmax scale, a finite positive float; ``1/sqrt(D)`` when None.
        library: the kernel library (a :class:`KernelLibrary` or a folder);
            the default one when None (see :mod:`tiled_attn.runtime`).
        kernel: the name of the manifest entry to use, for comparing
            schedules; the best fit for the device when None.

    Returns:
        A new contiguous ``[B, H, S_q, D]`` tensor, computed on the current
        torch stream. It does not track gradients (forward only).

    Any strides are taken as they are if the last dimension's is 1 and the
    data pointer and the other strides are multiples of the kernel's
    alignment (16 bytes); otherwise that input is first copied into a
    contiguous tensor.

    Raises:
        TypeError, ValueError: bad arguments; the message names the problem.
        TiledAttnError: no kernel library, no kernel for this device, dtype,
            head dim and mask, or a CUDA driver error.
    """
    import torch

    if torch.compiler.is_compiling():
        from . import ops  # noqa: F401  (registers tiled_attn::sdpa)

        path = str(library.path) if isinstance(library, KernelLibrary) else library
        return torch.ops.tiled_attn.sdpa(q, k, v, causal, scale, kernel, path)
    return sdpa_eager(q, k, v, causal, scale, library, kernel)


def sdpa_eager(
    q: "torch.Tensor",
    k: "torch.Tensor",
    v: "torch.Tensor",
    causal: bool = False,
    scale: Optional[float] = None,
    library: LibraryArg = None,
    kernel: Optional[str] = None,
) -> "torch.Tensor":
    """:func:`sdpa`'s work, and the CUDA implementation of ``tiled_attn::sdpa``."""
    import torch

    dtype = check_inputs(q, k, v, causal, scale)
    if not isinstance(library, KernelLibrary):
        library = default_library(library)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    align = library.align_bytes
    if copy_reason(q, align) is not None:
        q = q.clone(memory_format=torch.contiguous_format)
    if copy_reason(k, align) is not None:
        k = k.clone(memory_format=torch.contiguous_format)
    if copy_reason(v, align) is not None:
        v = v.clone(memory_format=torch.contiguous_format)
    args = TaSdpaArgs()
    set_tensor(args.q, q)
    set_tensor(args.k, k)
    set_tensor(args.v, v)
    set_tensor(args.o, out)
    args.dtype = DTYPES[dtype]
    args.mask = MASKS["top_left"] if causal else MASKS["none"]
    args.scale = scale
    if kernel is not None:
        args.kernel = kernel.encode()
    device = q.device.index
    library.launch(args, device, _current_stream(torch, device))
    return out


def _current_stream(torch: Any, device: int) -> int:
    """The raw handle of the current torch stream on ``device``."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(device)
    return torch.cuda.current_stream(device).cuda_stream  # pragma: no cover
