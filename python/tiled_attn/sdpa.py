"""``sdpa(q, k, v, causal=False, scale=None)``: attention with a library kernel.

torch is imported inside :func:`sdpa` only, so that the rest of the package
(and its unit tests) works without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Tuple

from .abi import INDEX_BITS, Memref, max_offset, pack_params
from .driver import get_driver
from .errors import TiledAttnError
from .manifest import KernelEntry, KernelLibrary, default_library
from .validation import SdpaProblem, check_head_dim, copy_reason, validate_inputs

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["sdpa", "launch_grid"]

#: The largest grid extent along y (heads) and z (batch).
MAX_GRID_YZ = 65535


def sdpa(
    q: "torch.Tensor",
    k: "torch.Tensor",
    v: "torch.Tensor",
    causal: bool = False,
    scale: Optional[float] = None,
    *,
    library: Optional[KernelLibrary] = None,
    kernel: Optional[str] = None,
) -> "torch.Tensor":
    """Scaled dot-product attention, ``softmax(scale * q @ k^T [+ mask]) @ v``.

    Args:
        q: ``[B, H, S_q, D]`` CUDA tensor, float16 or bfloat16.
        k, v: ``[B, H, S_k, D]`` tensors of q's device and dtype, ``S_k >= 1``.
        causal: PyTorch's ``is_causal``: query ``i`` sees keys ``j <= i``
            (top-left alignment).
        scale: the softmax scale, a finite positive float; ``1/sqrt(D)`` when None.
        library: the kernel library; the default one (``$TILED_ATTN_KERNELS``
            or ``<repo>/build/kernels``) when None.
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

    problem = validate_inputs(q, k, v, causal=causal, scale=scale, head_dims=None)
    library = library if library is not None else default_library()
    check_head_dim(problem.head_dim, library.head_dims)
    out = torch.empty_like(q, memory_format=torch.contiguous_format)
    if problem.is_empty:
        return out
    torch.cuda.init()
    device = q.device
    cc = torch.cuda.get_device_capability(device)
    # A copy that _kernel_ready makes has no larger offsets than its original.
    index32_ok = max(max_offset(Memref.of(t)) for t in (q, k, v, out)) < 2**31
    entry = library.select(cc, problem.dtype, problem.head_dim, problem.causal_mode, kernel,
                           index32_ok)
    grid = launch_grid(problem, entry)
    reason = copy_reason(out, problem.itemsize, entry.align_bytes)
    if reason is not None:  # the kernels write O in aligned 16-byte pieces
        raise TiledAttnError(f"internal error: the output buffer cannot be written: {reason}")
    with torch.cuda.device(device):
        q, k, v = (_kernel_ready(t, problem, entry) for t in (q, k, v))
        _launch(entry, cc, device.index, grid, (q, k, v, out), problem.scale,
                torch.cuda.current_stream(device).cuda_stream)
    return out


def launch_grid(problem: SdpaProblem, entry: KernelEntry) -> Tuple[int, int, int]:
    """``(ceil(S_q / block_m), H, B)``; ValueError when H or B exceed the grid."""
    for what, size in (("head count", problem.heads), ("batch size", problem.batch)):
        if size > MAX_GRID_YZ:
            raise ValueError(
                f"q has {what} {size}; tiled_attn.sdpa launches one block row per "
                f"head and batch entry, at most {MAX_GRID_YZ}"
            )
    return (-(-problem.seq_q // entry.block_m), problem.heads, problem.batch)


def _kernel_ready(t: "torch.Tensor", problem: SdpaProblem, entry: KernelEntry) -> "torch.Tensor":
    """``t``, or a contiguous copy when :func:`copy_reason` says the kernel cannot take it."""
    import torch

    if copy_reason(t, problem.itemsize, entry.align_bytes) is None:
        return t
    return t.clone(memory_format=torch.contiguous_format)


def _launch(
    entry: KernelEntry,
    cc: Tuple[int, int],
    ordinal: int,
    grid: Tuple[int, int, int],
    tensors: Tuple[Any, Any, Any, Any],
    scale: float,
    stream: int,
) -> None:
    """Load ``entry``'s module in the current context and launch it on ``stream``."""
    driver = get_driver()
    ctx = driver.current_context(ordinal)
    path, kind = entry.image_for(cc)
    func = driver.function(ctx, path, kind, entry.symbol)
    driver.set_max_dynamic_shared(func, entry.shared_bytes)
    params = pack_params([Memref.of(t) for t in tensors], scale, INDEX_BITS[entry.abi])
    driver.launch(func, grid, entry.block, entry.shared_bytes, stream, params.array)
