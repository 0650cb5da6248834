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
:func:`create_block_mask` builds the lists on the GPU from a boolean mask.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

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


def create_block_mask(mask: Any, Q_LEN: Optional[int] = None,
                      KV_LEN: Optional[int] = None) -> BlockMask:
    """A block mask from a boolean mask ``[B|1, H|1, S_q, S_k]`` (True: the
    query sees the key), on its device: a block whose every element is True
    (and inside ``S_k``) is full, one with some True partial, one with none
    left out. The kernel still applies its mask function to the partial
    blocks: pass the same mask to it (a mask function, or ``attn_mask``) or
    the partial blocks count as fully visible but for ``S_k``."""
    import torch

    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.dim() != 4:
        raise ValueError("create_block_mask: mask must be a torch.bool tensor "
                         f"[B|1, H|1, S_q, S_k], got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)} of shape "
                         f"{tuple(getattr(mask, 'shape', ()))}")
    batch, heads, seq_q, seq_k = mask.shape
    if (Q_LEN is not None and Q_LEN != seq_q) or (KV_LEN is not None and KV_LEN != seq_k):
        raise ValueError(f"create_block_mask: mask is {seq_q}x{seq_k}, Q_LEN and KV_LEN say "
                         f"{Q_LEN}x{KV_LEN}")
    n = BLOCK_SIZE
    n_q, n_k = -(-seq_q // n), -(-seq_k // n)
    # Keys past S_k are never seen (a block across S_k is never full); rows
    # past S_q are not stored (they keep a block full).
    pad = (0, n_k * n - seq_k, 0, n_q * n - seq_q)
    seen = torch.nn.functional.pad(mask, pad, value=False)
    every = torch.nn.functional.pad(mask, (0, n_k * n - seq_k), value=False)
    every = torch.nn.functional.pad(every, (0, 0, 0, n_q * n - seq_q), value=True)
    shape = (batch, heads, n_q, n, n_k, n)
    some = seen.reshape(shape).any(dim=5).any(dim=3)
    full = every.reshape(shape).all(dim=5).all(dim=3)
    counts, indices = _lists(torch, some & ~full)
    full_counts, full_indices = _lists(torch, full)
    return BlockMask(counts, indices, full_counts, full_indices, (seq_q, seq_k))


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
