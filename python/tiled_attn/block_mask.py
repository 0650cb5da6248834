"""Block masks: FlexAttention's ``BlockMask`` for the block-sparse kernels.

A block mask splits the scores into blocks of :data:`BLOCK_SIZE` queries by
:data:`BLOCK_SIZE` keys and lists, per batch entry, query head and query
block, the key blocks that are *partial* (the kernel visits them and applies
its mask function and the keys' bounds) and those that are *full* (visited
with no mask at all). A block in neither list costs nothing. The lists are
four int32 tensors, ``kv_num_blocks`` and ``full_kv_num_blocks`` of shape
``[B, H, n_q]``, ``kv_indices`` and ``full_kv_indices`` of shape ``[B, H,
n_q, n_k]`` (``B`` and ``H`` may be 1, broadcast), each list's first entries
in increasing order; the kernels take them as captured inputs of those names.

A full block must lie inside ``S_k``: its keys are not checked against it.
:func:`create_block_mask` builds the lists on the GPU from a boolean mask,
as FlexAttention's from a mask function of index tensors, or, fastest, from
a mask function of the kernel library by name (``"document"``,
``"prefix_lm"``): the library's block mask kernel of that function, compiled
from the same tile-dialect function the attention kernels apply, classifies
the blocks (``ta_block_mask``), so the two cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

#: The queries and keys of a block of a block mask (FlexAttention's default).
BLOCK_SIZE = 128

#: The captured inputs a block-sparse kernel takes, in order.
BLOCK_MASK_INPUTS = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices")


@dataclass(frozen=True)
class BlockMask:
    """The key blocks each query block visits (see the module's docstring)."""

    kv_num_blocks: Any
    kv_indices: Any
    full_kv_num_blocks: Any
    full_kv_indices: Any
    seq_lengths: Tuple[int, int]

    def as_tuple(self) -> Tuple[Any, Any, Any, Any]:
        return (self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks,
                self.full_kv_indices)

    def sparsity(self) -> float:
        """The fraction of blocks (over every batch entry and head) visited."""
        n_q, n_k = self.kv_indices.shape[-2:]
        visited = (self.kv_num_blocks + self.full_kv_num_blocks).sum().item()
        return visited / (self.kv_num_blocks.numel() * n_k)


def _lists(torch: Any, kinds: Any) -> Tuple[Any, Any]:
    """Counts and indices (in increasing order, then padding) of the blocks
    where `kinds` ([..., n_q, n_k] bool) is true."""
    counts = kinds.sum(dim=-1, dtype=torch.int32)
    order = torch.sort((~kinds).to(torch.int8), dim=-1, stable=True).indices
    return counts, order.to(torch.int32)


def _classify(torch: Any, mask: Any, seq_q: int, seq_k: int,
              rows: int) -> Tuple[Any, Any]:
    """Per block of `mask` ([B, H, rows, S_k] bool, `rows` a multiple of
    BLOCK_SIZE or the last rows up to S_q): whether some element is True,
    and whether all are (keys past S_k count as False, rows past S_q as
    True: they are not stored)."""
    n = BLOCK_SIZE
    batch, heads = mask.shape[:2]
    n_q, n_k = -(-rows // n), -(-seq_k // n)
    seen = torch.nn.functional.pad(mask, (0, n_k * n - seq_k, 0, n_q * n - rows), value=False)
    every = torch.nn.functional.pad(mask, (0, n_k * n - seq_k), value=False)
    every = torch.nn.functional.pad(every, (0, 0, 0, n_q * n - rows), value=True)
    shape = (batch, heads, n_q, n, n_k, n)
    some = seen.reshape(shape).any(dim=5).any(dim=3)
    full = every.reshape(shape).all(dim=5).all(dim=3)
    return some, full


def create_block_mask(mask: Any, B: Optional[int] = None, H: Optional[int] = None,
                      Q_LEN: Optional[int] = None, KV_LEN: Optional[int] = None,
                      device: Any = "cuda", rows_per_chunk: int = 1024, *,
                      mask_mod_args: Sequence[Any] = (), library: Any = None) -> BlockMask:
    """A block mask from a boolean mask, on the GPU: a block whose every
    element is True (and inside ``S_k``) is full, one with some True
    partial, one with none left out.

    ``mask`` is a ``torch.bool`` tensor ``[B|1, H|1, S_q, S_k]`` (on its
    device), or, as FlexAttention's ``create_block_mask(mask_mod, B, H,
    Q_LEN, KV_LEN)``, a function ``mask_mod(b, h, q_idx, kv_idx)`` of index
    tensors that broadcast (``b`` ``[B, 1, 1, 1]``, ``h`` ``[1, H, 1, 1]``,
    ``q_idx`` ``[1, 1, R, 1]``, ``kv_idx`` ``[1, 1, 1, S_k]``; ``B`` or ``H``
    None: 1, broadcast) giving a bool tensor, evaluated on ``device``
    ``rows_per_chunk`` query rows at a time (never the whole ``S_q x S_k``
    mask: 16 MB a chunk at ``S_k`` = 16k). The kernel still applies its mask
    function to the partial blocks: pass the same mask to it (a library
    mask function, or ``attn_mask``), or the partial blocks count as fully
    visible but for ``S_k``.

    ``mask`` may also name a mask function of the kernel library (``library``:
    a :class:`~tiled_attn.runtime.KernelLibrary` or its folder, None the
    default), its captured inputs in ``mask_mod_args`` as for
    :func:`tiled_attn.sdpa`'s ``mask_mod``: the library's block mask kernel of
    that function classifies the blocks in one launch, called with batch
    entry b < B and head h < H."""
    import torch

    if isinstance(mask, str):
        if Q_LEN is None or KV_LEN is None:
            raise ValueError("create_block_mask: a mask function needs Q_LEN and KV_LEN")
        some, full = _classify_by_kernel(torch, mask, B or 1, H or 1, Q_LEN, KV_LEN,
                                         torch.device(device), mask_mod_args, library)
        counts, indices = _lists(torch, some & ~full)
        full_counts, full_indices = _lists(torch, full)
        return BlockMask(counts, indices, full_counts, full_indices, (Q_LEN, KV_LEN))
    if mask_mod_args:
        raise ValueError("create_block_mask: mask_mod_args is for a mask function of the "
                         "kernel library, named by a str")

    if callable(mask) and not isinstance(mask, torch.Tensor):
        if Q_LEN is None or KV_LEN is None:
            raise ValueError("create_block_mask: a mask function needs Q_LEN and KV_LEN")
        if rows_per_chunk <= 0 or rows_per_chunk % BLOCK_SIZE:
            raise ValueError(f"create_block_mask: rows_per_chunk must be a positive multiple of "
                             f"{BLOCK_SIZE}, got {rows_per_chunk}")
        batch, heads = B or 1, H or 1
        b = torch.arange(batch, device=device).view(batch, 1, 1, 1)
        h = torch.arange(heads, device=device).view(1, heads, 1, 1)
        kv_idx = torch.arange(KV_LEN, device=device).view(1, 1, 1, KV_LEN)
        somes, fulls = [], []
        for start in range(0, Q_LEN, rows_per_chunk):
            rows = min(rows_per_chunk, Q_LEN - start)
            q_idx = torch.arange(start, start + rows, device=device).view(1, 1, rows, 1)
            chunk = mask(b, h, q_idx, kv_idx)
            if not isinstance(chunk, torch.Tensor) or chunk.dtype != torch.bool:
                raise ValueError("create_block_mask: the mask function must give a torch.bool "
                                 f"tensor, got {getattr(chunk, 'dtype', type(chunk).__name__)}")
            chunk = chunk.expand(batch, heads, rows, KV_LEN)
            some, full = _classify(torch, chunk, Q_LEN, KV_LEN, rows)
            somes.append(some)
            fulls.append(full)
        some, full = torch.cat(somes, dim=2), torch.cat(fulls, dim=2)
        seq_q, seq_k = Q_LEN, KV_LEN
    else:
        if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.dim() != 4:
            raise ValueError("create_block_mask: mask must be a torch.bool tensor "
                             f"[B|1, H|1, S_q, S_k] or a mask function, got "
                             f"{getattr(mask, 'dtype', type(mask).__name__)} of shape "
                             f"{tuple(getattr(mask, 'shape', ()))}")
        seq_q, seq_k = mask.shape[2:]
        if (Q_LEN is not None and Q_LEN != seq_q) or (KV_LEN is not None and KV_LEN != seq_k):
            raise ValueError(f"create_block_mask: mask is {seq_q}x{seq_k}, Q_LEN and KV_LEN "
                             f"say {Q_LEN}x{KV_LEN}")
        some, full = _classify(torch, mask, seq_q, seq_k, seq_q)
    counts, indices = _lists(torch, some & ~full)
    full_counts, full_indices = _lists(torch, full)
    return BlockMask(counts, indices, full_counts, full_indices, (seq_q, seq_k))


def _classify_by_kernel(torch: Any, name: str, batch: int, heads: int, seq_q: int,
                        seq_k: int, device: Any, mask_mod_args: Sequence[Any],
                        library: Any) -> Tuple[Any, Any]:
    """Per block of library mask function `name`'s [batch, heads, seq_q,
    seq_k] mask: whether some element is visible, and whether all are, from
    the library's block mask kernel of the function."""
    from ctypes import addressof

    from .errors import NoKernelError
    from .functions import capture_array
    from .runtime import TaBlockMaskArgs
    from .sdpa import _current_stream, library_of

    for what, value in (("B", batch), ("H", heads), ("Q_LEN", seq_q), ("KV_LEN", seq_k)):
        least = 0 if what.endswith("LEN") else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"create_block_mask: {what} must be an int of at least {least}, "
                             f"got {value!r}")
    if device.type != "cuda":
        raise ValueError(f"create_block_mask: a library mask function runs on a CUDA device, "
                         f"got device {device}")
    lib = library_of(library)
    kernel = next((k for k in lib.block_masks if k.mask_function == name), None)
    if kernel is None:
        have = sorted({k.mask_function for k in lib.block_masks})
        raise NoKernelError(f"create_block_mask: the kernel library {lib.path} has no block "
                            f"mask kernel of mask function {name!r}; its block mask "
                            f"functions: {', '.join(have) or 'none'}")
    if not isinstance(mask_mod_args, (tuple, list)):
        raise TypeError("mask_mod_args must be a tuple of the function's captured inputs, "
                        f"got {type(mask_mod_args).__name__}")
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    captures, count, keep = capture_array(torch, device, kernel.captures,
                                          (("mask_mod", name, mask_mod_args),))
    n = BLOCK_SIZE
    kinds = torch.empty(batch, heads, -(-seq_q // n), -(-seq_k // n), dtype=torch.int8,
                        device=device)
    args = TaBlockMaskArgs()
    args.mask_function = name.encode()
    args.captures = addressof(captures)
    args.num_captures = count
    args.seq_q, args.seq_k = seq_q, seq_k
    args.block_kinds.data = kinds.data_ptr()
    args.block_kinds.sizes[:] = kinds.shape
    args.block_kinds.strides[:] = kinds.stride()
    if kinds.numel():
        lib.launch_block_mask(args, device.index, _current_stream(torch, device.index))
    del keep  # (PyTorch reuses the memory of a freed clone in stream order)
    return kinds >= 1, kinds == 2


def block_mask_args(torch: Any, block_mask: Any, q: Any, k: Any) -> List[Any]:
    """The four captured inputs of a block-sparse kernel for `block_mask`,
    broadcast to q's batch and heads ([B, H, ...] views, stride 0 where
    the block mask has 1). Raises ValueError naming what is wrong."""
    if not isinstance(block_mask, BlockMask):
        raise TypeError("block_mask must be a tiled_attn.BlockMask (create_block_mask), got "
                        f"{type(block_mask).__name__}")
    batch, heads, seq_q = q.shape[0], q.shape[1], q.shape[2]
    seq_k = k.shape[2]
    n_q, n_k = -(-seq_q // BLOCK_SIZE), -(-seq_k // BLOCK_SIZE)
    out = []
    for name, t in zip(BLOCK_MASK_INPUTS, block_mask.as_tuple()):
        rank = 4 if name.endswith("indices") else 3
        want = (n_q, n_k)[:rank - 2]
        if (not isinstance(t, torch.Tensor) or t.dtype != torch.int32 or t.dim() != rank
                or tuple(t.shape[2:]) != want or t.shape[0] not in (1, batch)
                or t.shape[1] not in (1, heads)):
            raise ValueError(
                f"block_mask.{name} must be a torch.int32 tensor of shape [B|1, H|1, "
                f"{', '.join(map(str, want))}] for B={batch}, H={heads}, S_q={seq_q}, "
                f"S_k={seq_k} ({BLOCK_SIZE}x{BLOCK_SIZE} blocks), got "
                f"{getattr(t, 'dtype', type(t).__name__)} of shape "
                f"{tuple(getattr(t, 'shape', ()))}")
        if t.device != q.device:
            raise ValueError(f"block_mask.{name} must be on {q.device} (with q), got {t.device}")
        out.append(t.expand(batch, heads, *t.shape[2:]))
    return out
