"""``sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
enable_gqa=False, *, causal=None, causal_align="top_left", window_size=(-1, -1), softcap=0.0,
score_mod=None, score_mod_args=(), mask_mod=None, mask_mod_args=(), return_lse=False)``: attention with a library kernel, in the shape of PyTorch's
``F.scaled_dot_product_attention``.

One call is: the torch-level checks (:mod:`.validation`), the output
allocation, a copy of any input whose layout the kernels cannot take, and
one call into the C++ runtime, which checks the shapes, chooses the kernel,
packs its parameters and launches it on the current stream.

``sdpa`` is also the ``torch.library`` custom op ``tiled_attn::sdpa``
(``tiled_attn::sdpa_lse`` with ``return_lse=True``; :mod:`.ops`): under
``torch.compile`` it becomes that op, which has a fake
(meta) implementation, so a compiled graph holds it without a break. In
eager mode the same work runs without the dispatcher's round trip.

Gradients (issue 39): where one is needed (grad mode on, q, k or v
requiring grad), the eager call takes the op too, whose Autograd kernel
runs ``tiled_attn::sdpa_lse`` and its autograd formula (the backward:
:mod:`tiled_attn.backward`); otherwise it runs the kernel here, as before.
What has no backward (score and mask functions, block masks) is refused at
the call (:class:`~tiled_attn.errors.NoBackwardError`,
:func:`~tiled_attn.validation.needs_backward`: one check for the eager
path and the op).

torch is imported inside the functions only, so that the rest of the
package (and its unit tests) works without it.
"""

from __future__ import annotations

import ctypes
import math
import os
import struct
import threading
import weakref
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Tuple, Union

from .block_mask import block_mask_args
from .errors import NoBackwardError, NotSupportedError
from .functions import NO_FUNCTIONS, function_fields, paged_fields
from .runtime import (_LIBRARIES, DTYPES, KERNELS_ENV_VAR, MASKS, KernelLibrary, TaSdpaArgs,
                      c_string_address, default_library)
from .validation import (ITEMSIZE, TORCH_DTYPES, aligned_rows, attn_mask_as_function,
                         bias_function, check_attention_args, check_gqa, check_inputs,
                         check_return_lse, check_scale, check_softcap, check_tensor,
                         check_window, copy_reason, needs_backward)

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["default_scale", "launch", "library_of", "output_for", "sdpa", "sdpa_eager"]

LibraryArg = Union[None, str, "KernelLibrary"]


def sdpa(
    query: "torch.Tensor",
    key: "torch.Tensor",
    value: "torch.Tensor",
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: Optional[float] = None,
    enable_gqa: bool = False,
    *,
    causal: Optional[bool] = None,
    causal_align: str = "top_left",
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
    score_mod: Optional[str] = None,
    score_mod_args: Sequence[Any] = (),
    mask_mod: Optional[str] = None,
    mask_mod_args: Sequence[Any] = (),
    block_mask: Any = None,
    return_lse: bool = False,
    library: LibraryArg = None,
    kernel: Optional[str] = None,
    out: Optional["torch.Tensor"] = None,
) -> "Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]":
    """Scaled dot-product attention, ``softmax(cap(scale * q @ k^T) [+ mask]) @ v``.

    The arguments up to ``enable_gqa`` are PyTorch's
    ``F.scaled_dot_product_attention``'s, in its order (the 4th positional
    argument is ``attn_mask``, no longer ``causal``: a bool there is refused).

    Args:
        query: ``[B, H, S_q, D]`` CUDA tensor, float16 or bfloat16 (the
            messages call it q, and key and value k and v).
        key, value: ``[B, H_kv, S_k, D]`` tensors of q's device and dtype, ``S_k >= 1``;
            ``H_kv == H`` unless ``enable_gqa``. v may have a head dim of its
            own, ``D_v`` (DeepSeek's MLA: ``D = 192``, ``D_v = 128``), which
            the output has; the library needs a kernel of the pair.
        attn_mask: PyTorch's: a bool (True: the query sees the key) or
            float (added to the scaled scores) tensor that broadcasts to
            ``[B, H, S_q, S_k]``: a bool tensor runs on the library's
            ``mask`` kernels (one byte per element), a float one on its
            ``bias`` kernels
            (:func:`~tiled_attn.validation.attn_mask_as_function`). A bool
            (not a tensor) is refused with a TypeError that points to ``is_causal`` (the old
            signature's 4th positional argument was ``causal``).
        dropout_p: must be 0 (NotSupportedError otherwise): the kernels are
            inference kernels, with no dropout.
        is_causal: a causal mask: query ``i`` sees keys ``j <= i + shift``, with
            ``shift`` 0 (PyTorch's ``is_causal``) or ``S_k - S_q``
            (FlashAttention's ``causal``), as ``causal_align`` says.
        causal: keyword-only alias of ``is_causal`` (None: not given); with
            ``is_causal=True``, ``causal=False`` is a ValueError.
        scale: the softmax scale, a finite positive float; ``1/sqrt(D)`` when None.
        enable_gqa: PyTorch's meaning: K and V may have fewer heads than Q,
            ``H_kv`` dividing ``H`` (grouped-query attention; MQA with
            ``H_kv = 1``); query head ``h`` attends with K/V head
            ``h // (H // H_kv)``, read in place (no copy of K or V).
        causal_align: ``"top_left"`` (``shift = 0``, PyTorch's alignment) or
            ``"bottom_right"`` (``shift = S_k - S_q``, FlashAttention's: the
            last query sees the last key, as for queries that follow a KV
            cache). It aligns the causal diagonal and the window alike; with
            ``S_q == S_k`` both are the same.
        window_size: FlashAttention's sliding window ``(left, right)``: query
            ``i`` sees keys ``i + shift - left <= j <= i + shift + right``,
            ``-1`` meaning no bound on that side (``(-1, -1)``, the default,
            is no window). With ``causal`` it is intersected with the causal
            mask, so ``(w, w)`` and ``(w, 0)`` both see the ``w + 1`` keys
            ``i + shift - w .. i + shift`` (FlashAttention's and transformers'
            convention: a ``sliding_window`` of ``w + 1``). A query that sees
            no key gives zeros. Needs a kernel of the band's mask or a
            ``window`` kernel in the library.
        softcap: logit soft-capping, FlashAttention's ``softcap`` (Gemma 2's
            ``attn_logit_softcapping``): with ``softcap > 0`` each score
            ``s = scale * q.k`` becomes ``softcap * tanh(s / softcap)``, before
            the mask and the softmax (``cap`` above); ``0.0``, the default, is
            off. A finite real number ``>= 0``. Needs a kernel compiled with
            softcap in the library (the compiler builds them as ``window``
            kernels, which compute every mask, no mask included).
        score_mod: a score function of the library, by name (``"alibi"``):
            FlexAttention's ``score_mod``, applied to each scaled (and
            capped) score with its batch entry, head, query and key index,
            before the masks. The library's kernels are compiled with it
            (:mod:`tiled_attn.functions`; ``kernels/functions/<name>.mlir``).
        score_mod_args: its captured inputs, in the order the function
            declares them: tensors on q's device of the dtype and rank it
            declares (ALiBi: ``slopes``, ``[H]`` float32), or numbers.
        mask_mod: a mask function of the library, by name
            (``"document"``): FlexAttention's ``mask_mod``; a query sees a
            key only where it gives true (and the causal mask and window
            allow). A row that sees no key gives zeros.
        block_mask: a :class:`tiled_attn.BlockMask` (``create_block_mask``):
            visit only the key blocks it lists, the full ones without any
            mask (FlexAttention's block-sparse iteration), on a block-sparse
            kernel of the same functions (``none_sparse+document``); not
            with a causal mask or window.
        mask_mod_args: its captured inputs, likewise (document masking:
            ``document_ids``, ``[B, S]`` int32).
        return_lse: also return each query row's log-sum-exp, FlashAttention's
            ``softmax_lse``: a new contiguous ``[B, H, S_q]`` float32 tensor
            holding ``log(sum_j exp(s_j))`` (natural log) over the scores
            ``s_j`` (scaled, capped) of the keys the row sees, ``-inf`` for a
            row that sees none. Partial outputs over disjoint key ranges
            (split-KV decoding, ring attention) merge with it. Needs a kernel
            compiled with it in the library (the compiler builds them as
            ``window`` kernels, which compute every mask).
        library: the kernel library (a :class:`KernelLibrary` or a folder);
            the default one when None (see :mod:`tiled_attn.runtime`).
        kernel: the name of the manifest entry to use, for comparing
            schedules; the best fit for the device when None.
        out: where to write the result, a ``[B, H, S_q, D_v]`` tensor of q's
            dtype and device with any 16-byte aligned strides and a unit
            last one (for example ``o.transpose(1, 2)`` of an ``o`` of shape
            ``[B, S_q, H, D]``, which saves a copy where the caller wants
            that layout); a new contiguous tensor when None.

    Returns:
        ``out``, or a new contiguous ``[B, H, S_q, D]`` tensor, computed on
        the current torch stream; with ``return_lse``, the pair ``(out, lse)``.
        Differentiable: with grad mode on and q, k or v requiring grad, the
        output tracks its gradient (through the op ``tiled_attn::sdpa_lse``;
        ``out`` gets the result by a differentiable copy) and ``backward()``
        runs the library's backward kernels (docs/python.md, "Training");
        the log-sum-exps get no gradient (a loss that uses them is refused
        at ``backward()``).

    Any strides are taken as they are if the last dimension's is 1 and the
    data pointer and the other strides are multiples of the kernel's
    alignment (16 bytes); otherwise that input is first copied into a
    contiguous tensor.

    Raises:
        TypeError, ValueError: bad arguments; the message names the problem.
        TiledAttnError: no kernel library, no kernel for this device, dtype,
            head dim and mask (and window, and softcap), or a CUDA driver error.
        NoBackwardError: grad mode is on, q, k, v or a captured input
            requires grad, and the call has what the backward does not
            compute: score or mask functions, an ``attn_mask`` tensor, a
            block mask (a TiledAttnError and a NotImplementedError; the
            message names the inputs and what is missing). Under
            ``torch.compile`` the op raises it while Dynamo traces (with
            ``fullgraph=True``, inside Dynamo's ``Unsupported`` error;
            :mod:`tiled_attn.ops`).
        NotSupportedError: ``attn_mask`` a tensor or ``dropout_p != 0`` (a
            TiledAttnError and a NotImplementedError).
    """
    import torch

    q, k, v = query, key, value
    # PyTorch's arguments: a few comparisons when they are the defaults (and
    # for causal= alone); anything else is check_attention_args's.
    if (attn_mask is not None or dropout_p != 0.0
            or (is_causal is not False and (is_causal is not True or causal is not None))):
        causal = check_attention_args(attn_mask, dropout_p, is_causal, causal)
        if attn_mask is not None:
            # PyTorch's mask: the library's mask function (bool) or bias
            # score function (float), kernels/functions/{mask,bias}.mlir.
            # A mask of q's 16-bit dtype stays 16-bit here; sdpa_eager (the
            # op's implementation under torch.compile too) runs it on a
            # bias_bf16/bias_f16 kernel, or on a float32 copy where the
            # library has none, so compiled and eager calls agree.
            function, view = attn_mask_as_function(torch, attn_mask, q, k, score_mod,
                                                   mask_mod, bias_16bit=True)
            if function == "mask":
                mask_mod, mask_mod_args = function, (view,)
            else:
                score_mod, score_mod_args = function, (view,)
    elif causal is None:
        causal = is_causal
    if block_mask is not None and (causal or tuple(window_size) != (-1, -1)):
        raise ValueError("block_mask takes no causal mask nor window: a block-sparse kernel "
                         "sees the keys its block mask and mask function say")
    # Through the op under torch.compile (a node of the graph) and where a
    # gradient is needed (its autograd formula); else straight to the kernel.
    if torch.compiler.is_compiling() or needs_backward(
            torch, "tiled_attn.sdpa", q, k, v, score_mod, score_mod_args, mask_mod,
            mask_mod_args, block_mask, None if attn_mask is None else function):
        if (score_mod is not None or mask_mod is not None) and not torch.compiler.is_compiling():
            check_backward_functions(library_of(library), score_mod, mask_mod, "tiled_attn.sdpa")
        from . import ops  # noqa: F401  (registers tiled_attn::sdpa)

        _, left, right = check_window(causal_align, window_size)
        softcap = check_softcap(softcap)
        return_lse = check_return_lse(return_lse)
        path = str(library.path) if isinstance(library, KernelLibrary) else library
        functions = (score_mod, list(score_mod_args) or None, mask_mod,
                     list(mask_mod_args) or None,
                     None if block_mask is None else block_mask_args(torch, block_mask, q, k))
        if not torch.compiler.is_compiling():
            check_for_op(torch, "sdpa_lse", q, k, v, causal, scale)
            if out is not None:
                check_out(torch, out, q, v)
        if return_lse:
            result, lse = torch.ops.tiled_attn.sdpa_lse(q, k, v, causal, scale, kernel, path,
                                                        enable_gqa, causal_align,
                                                        [left, right], softcap, *functions)
            return (result if out is None else out.copy_(result)), lse
        result = torch.ops.tiled_attn.sdpa(q, k, v, causal, scale, kernel, path, enable_gqa,
                                           causal_align, [left, right], softcap, *functions)
        return result if out is None else out.copy_(result)
    return sdpa_eager(q, k, v, causal, scale, library, kernel, out, enable_gqa, causal_align,
                      window_size, softcap, return_lse, score_mod, score_mod_args, mask_mod,
                      mask_mod_args,
                      () if block_mask is None else block_mask_args(torch, block_mask, q, k))


def sdpa_eager(
    q: "torch.Tensor",
    k: "torch.Tensor",
    v: "torch.Tensor",
    causal: bool = False,
    scale: Optional[float] = None,
    library: LibraryArg = None,
    kernel: Optional[str] = None,
    out: Optional["torch.Tensor"] = None,
    enable_gqa: bool = False,
    causal_align: str = "top_left",
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
    return_lse: bool = False,
    score_mod: Optional[str] = None,
    score_mod_args: Sequence[Any] = (),
    mask_mod: Optional[str] = None,
    mask_mod_args: Sequence[Any] = (),
    block_mask: Sequence[Any] = (),
    num_splits: int = 0,
    seqused_k: Optional["torch.Tensor"] = None,
    block_table: Optional["torch.Tensor"] = None,
) -> "Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]":
    """:func:`sdpa`'s work, and the CUDA implementation of ``tiled_attn::sdpa``
    (and, with ``return_lse``, of ``tiled_attn::sdpa_lse``).

    The common case (valid inputs the kernels take as they are) runs a fast
    path: a few attribute reads, one ``torch.empty``, the arguments packed
    with one ``struct.pack_into`` and one call into the runtime. Anything
    unusual falls back to :func:`check_inputs` (which raises the precise
    error) and to copies of inputs the kernels cannot take.
    """
    import torch

    if not _DTYPES:
        _init_dtypes()
    if score_mod in _BIAS_16BIT_FUNCTIONS and len(score_mod_args) == 1:
        score_mod, score_mod_args = bias_16bit_or_float32(torch, q, score_mod_args[0], library,
                                                          kernel, score_mod)
    if return_lse is not False:
        return_lse = check_return_lse(return_lse)
    library, views, dtype, mask, scale, window, softcap, keep_inputs = checked_call(
        torch, q, k, v, causal, scale, library, enable_gqa, causal_align, window_size, softcap)
    device = q.device
    out = output_for(torch, q, v, out)
    lse = None
    if return_lse:
        lse = torch.empty(q.shape[:3], dtype=torch.float32, device=device)
    functions, keep = (NO_FUNCTIONS, None) if (score_mod is None and mask_mod is None
                                               and not score_mod_args and not mask_mod_args
                                               and not block_mask) else \
        function_fields(torch, library, device, score_mod, score_mod_args, mask_mod,
                        mask_mod_args, block_mask)
    keys = k.shape[2]
    if block_table is not None:
        # A paged cache (k, v: [num_pages, H_kv, page_size, D]): the table
        # is the paged kernels' captured input.
        if functions is not NO_FUNCTIONS:
            raise NotSupportedError("a paged KV cache (block_table) with score or mask "
                                    "functions or a block mask is not supported")
        functions, keep = paged_fields(torch, library, device, block_table)
        keys *= block_table.shape[1]
    # Split-KV (decode: few query rows against many keys) where the runtime
    # chooses it: asked only of calls whose grid may leave SMs idle.
    if type(num_splits) is not int or num_splits != 0:
        num_splits = check_num_splits(num_splits)
    seqused = 0 if seqused_k is None else seqused_k.data_ptr()
    splits = (num_splits, 0, 0) if (num_splits == 1 or keys < _SPLIT_MIN_KEYS
                                    or q.shape[0] * q.shape[1] * q.shape[2] > _SPLIT_MAX_ROWS
                                    or kernel is not None) else None
    fields = args_fields(views, (out.data_ptr(), *out.shape, *out.stride()), dtype, mask, scale,
                         0 if kernel is None else _kernel_name_address(kernel), window, softcap,
                         0 if lse is None else lse.data_ptr(), _VARLEN_OFF, functions)
    workspace = None
    if splits is None:
        splits, workspace = split_workspace(torch, library, device, fields, num_splits, seqused)
    launch(torch, library, device.index, *fields, *splits, seqused)
    del keep, keep_inputs, workspace  # alive through the launch
    return out if lse is None else (out, lse)


def checked_call(torch: Any, q: "torch.Tensor", k: "torch.Tensor", v: "torch.Tensor",
                 causal: Any, scale: Any, library: LibraryArg, enable_gqa: Any,
                 causal_align: Any, window_size: Any, softcap: Any) -> tuple:
    """The checks and copies of an attention call on ``[B, H, S, D]`` tensors,
    shared by the forward (:func:`sdpa_eager`) and the backward
    (:func:`tiled_attn.backward.sdpa_backward_eager`), which must describe
    the same call to the runtime.

    Returns ``(library, views, dtype, mask, scale, window, softcap, inputs)``:
    the opened library; the ta_tensor fields (data, sizes, strides) of q, k
    and v, each copied to a contiguous tensor first where the kernels cannot
    take its layout; ta_sdpa_args' dtype, mask, scale (``1/sqrt(D)`` for
    None), ta_window fields and softcap; and the (copied) q, k and v, to be
    kept alive through the launch.

    The common case (valid inputs the kernels take as they are) runs a fast
    path of a few attribute reads; anything unusual falls back to
    :func:`check_inputs` (which raises the precise error) and to copies of
    the inputs the kernels cannot take.
    """
    if not _DTYPES:
        _init_dtypes()
    try:
        device = q.device
        dtype = _DTYPES.get(q.dtype)
        usual = not (dtype is None or k.dtype is not q.dtype or v.dtype is not q.dtype
                     or device.type != "cuda" or k.device != device or v.device != device
                     or q.dim() != 4 or k.dim() != 4 or v.dim() != 4
                     or (causal is not True and causal is not False)
                     or (scale is not None and (type(scale) is not float
                                                or not _SCALE_FAST[0] <= scale <= _SCALE_FAST[1])))
    except AttributeError:  # Not a tensor: check_inputs says which.
        usual = False
    if not usual:
        dtype = DTYPES[check_inputs(q, k, v, causal, scale)]
        if scale is not None:
            scale = check_scale(scale)
    check_gqa(enable_gqa, q.shape[1], (k.shape[1], v.shape[1]))
    if causal_align == "top_left" and type(window_size) is tuple and window_size == _NO_WINDOW:
        mask, window = (_CAUSAL if causal else _NO_MASK), _WINDOW_OFF
    else:
        mask, window = _mask_and_window(causal, causal_align, window_size)
    if type(softcap) is not float or (softcap != 0.0 and not
                                      _SOFTCAP_FAST[0] <= softcap <= _SOFTCAP_FAST[1]):
        softcap = check_softcap(softcap)
    if not isinstance(library, KernelLibrary):
        library = library_of(library)
    if scale is None:
        scale = default_scale(q.shape[-1])
    align = library.align_bytes
    amask, smask = align - 1, align // ITEMSIZE - 1
    qs, ks, vs = q.stride(), k.stride(), v.stride()
    qp, kp, vp = q.data_ptr(), k.data_ptr(), v.data_ptr()
    # A fast, stricter test of the kernels' layout rule (every stride
    # aligned); copy_reason has the exact one (size-1 dimensions exempt).
    if (qs[3] != 1 or qp & amask or (qs[0] | qs[1] | qs[2]) & smask) and copy_reason(q, align):
        q = q.clone(memory_format=torch.contiguous_format)
        qs, qp = q.stride(), q.data_ptr()
    if (ks[3] != 1 or kp & amask or (ks[0] | ks[1] | ks[2]) & smask) and copy_reason(k, align):
        k = k.clone(memory_format=torch.contiguous_format)
        ks, kp = k.stride(), k.data_ptr()
    if (vs[3] != 1 or vp & amask or (vs[0] | vs[1] | vs[2]) & smask) and copy_reason(v, align):
        v = v.clone(memory_format=torch.contiguous_format)
        vs, vp = v.stride(), v.data_ptr()
    views = (qp, *q.shape, *qs, kp, *k.shape, *ks, vp, *v.shape, *vs)
    return library, views, dtype, mask, scale, window, softcap, (q, k, v)


def args_fields(views: Sequence[Any], out: Sequence[Any], dtype: int, mask: int, scale: float,
                kernel: int, window: Sequence[Any], softcap: float, lse: int,
                varlen: Sequence[Any], functions: Sequence[Any]) -> tuple:
    """ta_sdpa_args' fields (:data:`_ARGS_LAYOUT`) up to the functions' (the
    split's and seqused_k's come after): the views of q, k, v (``views``) and
    o (``out``), the dtype, mask, scale, the kernel name's address (0: the
    best fit), ta_window's fields, the softcap, the log-sum-exps' address (0:
    none), ta_varlen's and the functions' fields. The one place that orders
    them, for the forward and the backward (whose ta_sdpa_backward_args
    starts with the forward call's ta_sdpa_args)."""
    return (*views, *out, dtype, mask, scale, kernel, *window, softcap, lse, *varlen,
            *functions)


def takes_16bit_bias(torch: Any, q: "torch.Tensor", attn_mask: Any,
                     library: LibraryArg, kernel: Optional[str] = None) -> bool:
    """Whether a float ``attn_mask`` of q's 16-bit dtype runs as it is, on a
    ``bias_bf16`` or ``bias_f16`` kernel (half the bytes of float32, no
    float32 copy): eager calls whose library has such a kernel at q's head
    dim for q's device, or that name such a kernel. Asked by sdpa_eager,
    so under torch.compile when the op runs (the library is not opened
    while tracing), and compiled calls run the kernel eager ones do."""
    dtype = TORCH_DTYPES.get(str(q.dtype))
    if (torch.compiler.is_compiling() or attn_mask.dtype is not q.dtype or dtype is None
            or not q.is_cuda):
        return False
    if kernel is not None:
        return kernel.endswith("_" + bias_function(dtype))
    lib = library_of(library)
    capability = torch.cuda.get_device_capability(q.device)
    answers = _BIAS_16BIT.setdefault(lib, {})
    key = (dtype, q.shape[-1], capability)
    if key not in answers:
        answers[key] = any(
            k.score_function == bias_function(dtype) and k.dtype == dtype
            and k.head_dim == q.shape[-1] and lib.runs_on(k, capability, functions=True)
            for k in lib.kernels)
    return answers[key]


#: The library's score functions of a bias of q's 16-bit dtype
#: (kernels/functions/bias_{bf16,f16}.mlir).
_BIAS_16BIT_FUNCTIONS = tuple(bias_function(d) for d in TORCH_DTYPES.values())


def check_backward_functions(library: "KernelLibrary", score_mod: Optional[str],
                             mask_mod: Optional[str], function: str) -> None:
    """NoBackwardError, at the forward call that will need a gradient, where
    ``library`` has no backward main kernel of its score and mask functions
    (the forward would run and ``backward()`` could not)."""
    score, mask = score_mod or "", mask_mod or ""
    # (A 16-bit bias may run on the float32 bias kernels.)
    scores = {score, "bias"} if score in _BIAS_16BIT_FUNCTIONS else {score}
    mains = [k for k in library.backward_kernels if k.phase == "main"]
    if any(k.score_function in scores and k.mask_function == mask for k in mains):
        return
    have = sorted({"+".join(f for f in (k.score_function, k.mask_function) if f)
                   for k in mains if k.score_function or k.mask_function})
    raise NoBackwardError(
        f"{function}: a gradient is needed, but the kernel library {library.path} has no "
        f"backward kernels of score_mod={score_mod!r} and mask_mod={mask_mod!r} (its "
        f"backward kernels' functions: {', '.join(have) or 'none'}); build them (a backward "
        "configuration with variants such as 'none+alibi', docs/backward.md), or call it "
        "under torch.no_grad()")


def bias_16bit_or_float32(torch: Any, q: "torch.Tensor", bias: Any, library: LibraryArg,
                          kernel: Optional[str], function: str) -> Tuple[str, Tuple[Any]]:
    """A ``[B, H, S_q, S_k]`` bias view of q's 16-bit dtype (attn_mask as
    attn_mask_as_function made it): ``(function, (bias,))`` where the
    library has that 16-bit kernel for the call (takes_16bit_bias), else the
    float32 ``bias`` function on a float32 copy of the view's own elements
    (its broadcast dimensions stay stride-0 views, not copies)."""
    if not hasattr(bias, "dtype") or takes_16bit_bias(torch, q, bias, library, kernel):
        return function, (bias,)
    own = bias
    for dim, stride in enumerate(bias.stride()):
        if stride == 0 and own.shape[dim] > 1:
            own = own.narrow(dim, 0, 1)
    return "bias", (aligned_rows(torch, own.to(torch.float32)).expand(*bias.shape),)


#: takes_16bit_bias's answers of each open library, by (dtype, head dim,
#: capability).
_BIAS_16BIT: Any = weakref.WeakKeyDictionary()


def library_of(library: LibraryArg) -> KernelLibrary:
    """The kernel library ``library`` names: itself, or a folder's (None: the
    default one), opened once."""
    if isinstance(library, KernelLibrary):
        return library
    key = os.environ.get(KERNELS_ENV_VAR) if library is None else library
    return _LIBRARIES.get(key) or default_library(library)


def default_scale(head_dim: int) -> float:
    """``1/sqrt(D)``; for ``D = 0``, which the runtime refuses (no library has
    such kernels), 1.0, so that its error is the one raised."""
    return 1.0 / math.sqrt(head_dim) if head_dim > 0 else 1.0


def output_for(torch: Any, q: "torch.Tensor", v: "torch.Tensor",
               out: Optional["torch.Tensor"]) -> "torch.Tensor":
    """``out``, checked (a tensor of q's dtype, device and rank; the runtime
    checks its shape, its strides and that it shares no memory with the
    inputs), or a new tensor of q's shape with v's head dim (D_v)."""
    if out is None:
        if v.shape[-1] == q.shape[-1]:
            return torch.empty(q.shape, dtype=q.dtype, device=q.device)
        return torch.empty((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
    check_tensor("out", out)
    if out.dtype is not q.dtype or out.device != q.device or out.dim() != q.dim():
        raise ValueError(f"out must be a {q.dim()}-d tensor of q's dtype ({q.dtype}) and "
                         f"device ({q.device}), got {out.dtype} on {out.device} of shape "
                         f"{tuple(out.shape)}")
    return out


def check_for_op(torch: Any, op: str, q: Any, k: Any, v: Any, causal: Any, scale: Any,
                 **names: str) -> None:
    """:func:`check_inputs` before an eager call takes the op ``tiled_attn::<op>``
    (a gradient is needed), so that its errors are the eager path's (the
    dispatcher's own, for a CPU tensor or a non-tensor, name no argument);
    skipped for tensors of a device other than CUDA that has a kernel of the
    op (one a test registers, to run the ops without a GPU)."""
    device = getattr(q, "device", None)
    if device is None or device.type == "cuda" or not \
            torch._C._dispatch_has_kernel_for_dispatch_key(f"tiled_attn::{op}",
                                                           device.type.upper()):
        check_inputs(q, k, v, causal, scale, **names)


def check_out(torch: Any, out: Any, q: "torch.Tensor", v: "torch.Tensor") -> None:
    """Check an ``out`` that gets the op's result by ``copy_`` (a gradient is
    needed: the output is the op's, which autograd tracks, copied into
    ``out``): :func:`output_for`'s checks, and the shape, which copy_ would
    broadcast to where the runtime refuses a mismatch."""
    output_for(torch, q, v, out)
    shape = (*q.shape[:-1], v.shape[-1])
    if tuple(out.shape) != shape:
        raise ValueError(f"out must have shape {list(shape)} ([B, H, S_q, D_v]), got "
                         f"{list(out.shape)}")


def launch(torch: Any, library: KernelLibrary, device: Optional[int], *fields: Any) -> None:
    """Packs ``fields`` as ta_sdpa_args (:data:`_ARGS_LAYOUT`) into this thread's
    buffer and launches on the current stream of CUDA device ``device``."""
    args = _thread_args()
    _pack(args, fields)
    library.launch_packed(args.address, device, _current_stream(torch, device))


def split_workspace(torch: Any, library: KernelLibrary, device: Any, fields: Sequence[Any],
                    num_splits: int, seqused: int) -> Tuple[Tuple[int, int, int], Any]:
    """ta_sdpa_args' num_splits, workspace and workspace_bytes for a call of
    ``fields`` (all of ta_sdpa_args' before them) that the runtime may split,
    and the workspace (from PyTorch's allocator, None when the call does
    not split), to be kept alive through the launch."""
    args = _thread_args()
    _pack(args, (*fields, num_splits, 0, 0, seqused))
    size = library.workspace_size(args.address, device.index)
    if not size:
        return (num_splits, 0, 0), None
    workspace = torch.empty(size, dtype=torch.uint8, device=device)
    return (num_splits, workspace.data_ptr(), size), workspace


def _pack(args: Any, fields: Sequence[Any]) -> None:
    try:
        _ARGS_LAYOUT.pack_into(args.buffer, 0, *fields)
    except struct.error:
        raise ValueError(_unpackable(fields)) from None


def check_num_splits(num_splits: Any) -> int:
    """``num_splits`` as ta_sdpa_args takes it: an int >= 0 (0: the runtime
    chooses, 1: no split, n: n chunks of the keys)."""
    if type(num_splits) is not int or num_splits < 0 or num_splits > 2**31 - 1:
        raise ValueError(f"num_splits must be an int >= 0 (0: the runtime chooses, 1: no "
                         f"split), got {num_splits!r}")
    return num_splits


def _unpackable(fields: Sequence[Any]) -> str:
    """Why ``fields`` do not pack as ta_sdpa_args: a view's size or stride past an
    int64 (torch's own tensors never have one)."""
    for index, name in enumerate(("q", "k", "v", "out")):
        base = 9 * index
        data, sizes, strides = fields[base], fields[base + 1:base + 5], fields[base + 5:base + 9]
        if any(not -2**63 <= x < 2**63 for x in (*sizes, *strides)) or not 0 <= data < 2**64:
            return (f"{name} has sizes {tuple(sizes)} and strides {tuple(strides)} at "
                    f"{data:#x}; sizes and strides must fit an int64")
    return "the arguments do not fit the runtime's ta_sdpa_args (int64 sizes and strides)"


#: ta_sdpa_args as packed bytes: four ta_tensor (data, sizes[4], strides[4]),
#: dtype, mask, scale, padding, the kernel name's address, ta_window
#: (enabled, bottom_right, left, right), the softcap, padding, the
#: log-sum-exps' address and ta_varlen (enabled, padding, num_seqs,
#: cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k), then the score and
#: mask functions' names' addresses, the captures' address and count.
_ARGS_LAYOUT = struct.Struct("=" + "Q4q4q" * 4 + "iif4xQ" + "iiqq" + "f4xQ" + "i4xqQQqq"
                             + "QQQi" + "iQQ" + "Q")
assert _ARGS_LAYOUT.size == ctypes.sizeof(TaSdpaArgs)
_NO_MASK, _CAUSAL = MASKS["none"], MASKS["top_left"]
#: Calls that may split their keys (the runtime decides): at least this many
#: keys, and at most this many query rows in all (B * H * S_q).
_SPLIT_MIN_KEYS = 512
_SPLIT_MAX_ROWS = 32768
#: ta_sdpa_args' last fields (num_splits, workspace, workspace_bytes,
#: seqused_k) for a call that does not split (no workspace: never split, as
#: a zero-initialized ta_sdpa_args) and has no per-entry key lengths.
NO_SPLIT = (0, 0, 0, 0)
#: Softcaps that are plainly normal float32 values: taken without check_softcap.
_SOFTCAP_FAST = (1e-30, 1e30)
#: Scales likewise, taken without check_scale.
_SCALE_FAST = _SOFTCAP_FAST
_NO_WINDOW = (-1, -1)
#: ta_window's fields for no window: all zero, as a zero-initialized ta_sdpa_args.
_WINDOW_OFF = (0, 0, 0, 0)
#: ta_varlen's fields for a call that is not variable-length: all zero too.
_VARLEN_OFF = (0, 0, 0, 0, 0, 0)
_DTYPES: Dict[Any, int] = {}
_THREAD = threading.local()


def _mask_and_window(causal: Any, causal_align: Any, window_size: Any) -> tuple:
    """The ta_mask and ta_window fields (enabled, bottom_right, left, right) of
    checked ``causal``, ``causal_align`` and ``window_size``."""
    bottom_right, left, right = check_window(causal_align, window_size)
    mask = MASKS["bottom_right" if bottom_right else "top_left"] if causal else _NO_MASK
    if (left, right) == _NO_WINDOW:
        return mask, _WINDOW_OFF
    return mask, (1, int(bottom_right), left, right)


def _thread_args() -> Any:
    """This thread's ta_sdpa_args buffer (a call fills it, then the runtime reads it)."""
    args = getattr(_THREAD, "args", None)
    if args is None:
        buffer = ctypes.create_string_buffer(_ARGS_LAYOUT.size)
        args = _THREAD.args = SimpleNamespace(buffer=buffer, address=ctypes.addressof(buffer))
    return args


def _kernel_name_address(name: str) -> int:
    """The address of a NUL-terminated copy of ``name``, kept for the process."""
    if type(name) is not str:
        raise TypeError(f"kernel must be a str (a manifest entry's name) or None, got "
                        f"{type(name).__name__} {name!r}")
    if "\0" in name:
        raise ValueError(f"kernel must be a manifest entry's name, got {name!r}, which "
                         "holds a NUL character")
    return c_string_address(name)


def _init_dtypes() -> None:
    import torch

    _DTYPES.update({torch.float16: DTYPES["f16"], torch.bfloat16: DTYPES["bf16"]})


def _current_stream(torch: Any, device: int) -> int:
    """The raw handle of the current torch stream on ``device``."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(device)
    return torch.cuda.current_stream(device).cuda_stream  # pragma: no cover
