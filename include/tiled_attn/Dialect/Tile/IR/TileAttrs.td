//===- TileAttrs.td - Attributes of the tile dialect -------*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILE_IR_TILEATTRS_TD
#define TILED_ATTN_DIALECT_TILE_IR_TILEATTRS_TD

include "tiled_attn/Dialect/Tile/IR/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tile_Dim : I32EnumAttr<"Dim", "a dimension of the launch grid", [
    I32EnumAttrCase<"X", 0, "x">,
    I32EnumAttrCase<"Y", 1, "y">,
    I32EnumAttrCase<"Z", 2, "z">
  ]> {
  let cppNamespace = "::tiled_attn::tile";
}

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "a reduction combiner", [
    I32EnumAttrCase<"Max", 0, "max">,
    I32EnumAttrCase<"Sum", 1, "sum">,
    I32EnumAttrCase<"Min", 2, "min">
  ]> {
  let cppNamespace = "::tiled_attn::tile";
}

def Tile_CausalMode : I32EnumAttr<"CausalMode",
    "which keys a query sees: all, a causal mask, or a window", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"TopLeft", 1, "top_left">,
    I32EnumAttrCase<"BottomRight", 2, "bottom_right">,
    I32EnumAttrCase<"Window", 3, "window">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tiled_attn::tile";
}

def Tile_ArgRole : I32EnumAttr<"ArgRole",
    "what a kernel argument is to the kernel's caller", [
    I32EnumAttrCase<"Q", 0, "q">,
    I32EnumAttrCase<"K", 1, "k">,
    I32EnumAttrCase<"V", 2, "v">,
    I32EnumAttrCase<"O", 3, "o">,
    I32EnumAttrCase<"Scale", 4, "scale">,
    I32EnumAttrCase<"WindowLo", 5, "window_lo">,
    I32EnumAttrCase<"WindowHi", 6, "window_hi">,
    I32EnumAttrCase<"WindowAlign", 7, "window_align">,
    I32EnumAttrCase<"Softcap", 8, "softcap">,
    I32EnumAttrCase<"Lse", 9, "lse">,
    I32EnumAttrCase<"CuSeqlensQ", 10, "cu_seqlens_q">,
    I32EnumAttrCase<"CuSeqlensK", 11, "cu_seqlens_k">,
    I32EnumAttrCase<"Captured", 12, "captured">,
    I32EnumAttrCase<"SeqQ", 13, "seq_q">,
    I32EnumAttrCase<"SeqK", 14, "seq_k">,
    I32EnumAttrCase<"BlockKinds", 15, "block_kinds">,
    I32EnumAttrCase<"NumSplits", 16, "num_splits">,
    I32EnumAttrCase<"OPartial", 17, "o_partial">,
    I32EnumAttrCase<"LsePartial", 18, "lse_partial">,
    I32EnumAttrCase<"SeqUsedK", 19, "seqused_k">,
    I32EnumAttrCase<"DOut", 20, "do">,
    I32EnumAttrCase<"DQ", 21, "dq">,
    I32EnumAttrCase<"DK", 22, "dk">,
    I32EnumAttrCase<"DV", 23, "dv">,
    I32EnumAttrCase<"Delta", 24, "delta">,
    I32EnumAttrCase<"DQAccum", 25, "dq_accum">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tiled_attn::tile";
}

def Tile_ArgAttr : AttrDef<Tile_Dialect, "Arg"> {
  let mnemonic = "arg";
  let summary = "The role of a kernel argument, as the argument attribute `tile.arg`";
  let description = [{
    Every argument of a `tile.sdpa` kernel carries, as its `tile.arg`
    argument attribute, what it is to the caller: the tensors `q`, `k`, `v`,
    `o`, the scalars and views its variant adds (`scale`, `window_lo`,
    `window_hi`, `window_align`, `softcap`, `lse`, `cu_seqlens_q`,
    `cu_seqlens_k`), or a `captured` input of a score or mask function,
    with its name. A block-mask kernel (tile-generate-block-mask) takes the
    problem's lengths `seq_q` and `seq_k` and writes the kinds of its blocks
    to `block_kinds`; a split-KV merge kernel (tile-generate-split-merge)
    reads a split kernel's `o_partial` and `lse_partial` (its `o` and `lse`)
    with `num_splits` and writes `o` and `lse`. The backward pass's
    kernels (tile-generate-sdpa-backward) take the output's gradient `do`,
    the rows' `delta` = rowsum(dO * O), an f32 `dq_accum` that the main
    kernel adds dQ into, and write the gradients `dq`, `dk` and `dv`. Passes find arguments by role, never by position; the
    kernel ABI names each kernel parameter after its argument's role (a
    captured input after its name), and the runtime binds its arguments by
    these names.

    Example:

    ```mlir
    func.func @k(%q: !tile.view<?x?x?x64xf16> {tile.arg = #tile.arg<q>},
                 ...,
                 %slopes: !tile.view<?xf32> {tile.arg = #tile.arg<captured, "slopes">})
    ```
  }];
  let parameters = (ins EnumParameter<Tile_ArgRole>:$role,
                        OptionalParameter<"::mlir::StringAttr">:$name);
  let assemblyFormat = "`<` $role (`,` $name^)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The name the caller knows the argument by: the role's, or a captured
    /// input's own.
    ::llvm::StringRef getArgumentName() const;
  }];
}

// A kernel's features, KernelVariant.def's (softcap, lse, varlen, sparse,
// split, ...), as one parameter: the declaration there is the only list, and
// `#tile.sdpa` spells them as it does (`features = [softcap, lse]`).
def Tile_KernelFeaturesParameter
    : AttrParameter<"::tiled_attn::KernelFeatures",
                    "the kernel's features (KernelVariant.def)"> {
  let parser = "::tiled_attn::tile::parseKernelFeatures($_parser)";
  let printer = "::tiled_attn::tile::printKernelFeatures($_printer, $_self)";
  let defaultValue = "::tiled_attn::KernelFeatures()";
}

def Tile_SdpaAttr : AttrDef<Tile_Dialect, "Sdpa"> {
  let mnemonic = "sdpa";
  let summary = "What an SDPA kernel computes and the schedule it carries";
  let description = [{
    Attached to a kernel function as `tile.sdpa`. It records the semantics
    that a caller and the host reference need (head dim, element type,
    causal alignment) and the schedule that produced the body (block sizes).
    Schedule transforms keep it up to date, so that printing the kernel shows
    its schedule.

    - `top_left` causal is PyTorch's `is_causal`: query i sees keys j <= i.
    - `bottom_right` aligns the last query with the last key: query i sees
      keys j <= i + (S_k - S_q).
    - `window` takes the band of diagonals at run time: query i sees keys j
      with `window_lo <= j - i <= window_hi`, two index arguments after the
      scale. Both causal alignments, a sliding window (FlashAttention's
      `window_size`) and their intersection are such bands; the caller
      works out the diagonals (the runtime does, from `window_size` and
      `causal_align`).

    A query row that sees no key at all has an output of zero.

    `head_dim_v` is the head dim of V and O where it differs from Q's and
    K's (DeepSeek's MLA: 192 for Q and K, 128 for V and O); it is omitted
    (0) when they share `head_dim`.

    `features` lists the kernel's features (KernelVariant.def: the one
    declaration of them, whose names these are, in its order), each adding
    the arguments the declaration names:

    `softcap` (Gemma 2's logit cap, FlashAttention's `softcap`): the kernel
    takes one more f32 argument, `softcap`, after the others, and the
    scores become `softcap * tanh(scale * s / softcap)` before the mask and
    the softmax.

    `varlen` (variable-length batches, FlashAttention's
    `flash_attn_varlen_func`): q, k, v and o are packed tensors seen as
    `[1, H, total, D]` (total rows of all sequences), the kernel takes two
    rank-1 i32 views after the others, `cu_seqlens_q` and `cu_seqlens_k`
    (the sequences' first rows, with the totals last), and program
    `(m, h, b)` computes block m of sequence b, which attends only within
    itself. A `window` kernel then takes a third index argument after the
    diagonals, `window_align`: 0 gives the band as it is, 1 shifts both
    diagonals by each sequence's `S_k - S_q` (bottom-right alignment,
    which differs from sequence to sequence).

    `split` (split-KV, for decoding: few queries, many keys): the kernel
    takes one more index argument, `num_splits`, program `(m, y, b)`
    computes query head `h = y / num_splits` against the `s = y %
    num_splits`-th of `num_splits` chunks of the keys (whole key blocks),
    and o and lse are the partial results, `[B, H * num_splits, S_q, D_v]`
    in f32 and `[B, H * num_splits, S_q]`, at head index y: each chunk's
    output normalized by its own sum and that sum's log-sum-exp, which a
    combine step merges (`exp(lse_s - lse)` weights). It needs `lse`, no
    causal mask or window, no varlen and no functions.

    `sparse` (a block mask's blocks, FlexAttention's `BlockMask`): the
    kernel takes the block mask's four captured i32 views and visits only
    the blocks it lists.

    `seqused` (a KV cache's filled lengths, FlashAttention's `seqused_k`,
    vLLM's): the kernel takes a rank-1 i32 view `seqused_k`, and batch
    entry (or, with `varlen`, sequence) b attends to its first
    `min(seqused_k[b], S_k)` keys: k and v are sliced to them before
    anything else, so that the causal alignment, the key bounds and
    split-KV's chunks are that length's.

    `paged` (a paged KV cache, vLLM's and FlashAttention's `block_table`):
    k and v are pages, `[num_pages, H_kv, page_size, D]`, and the kernel
    takes a captured rank-2 i32 view `block_table`: batch entry b's keys
    `i * page_size` to `(i + 1) * page_size - 1` lie in page
    `block_table[b, i]`. Each key block is read from its page (page_size a
    multiple of block_n: the caller's contract, which the runtime checks);
    the keys are the first `min(seqused_k[b], max_pages * page_size)`, so
    it needs `seqused`, and takes no block mask. With `varlen`, q, o and
    lse are packed and sequence b's keys are row b's pages (cu_seqlens_k
    is not read).

    The schedule knobs after the block sizes are set by the passes that
    apply them and are omitted from the printout while at their defaults:
    `stages` and `refill_after_use` (K/V blocks in flight and where their
    refills go, `tile-prefetch`), `mask_split`
    (`tile-mask-split`), `exp2` (`tile-exp2`), `rescale_threshold`
    (`tile-lazy-rescale`; 0 means off) and `defer_pv` (`tile-defer-pv`).

    Example:

    ```mlir
    #tile.sdpa<head_dim = 128, element_type = bf16, causal = top_left,
               block_m = 128, block_n = 64>
    #tile.sdpa<head_dim = 128, element_type = bf16, causal = none,
               block_m = 64, block_n = 128, features = [lse, split]>
    ```
  }];
  let parameters = (ins
    "int64_t":$head_dim,
    DefaultValuedParameter<"int64_t", "0">:$head_dim_v,
    "::mlir::Type":$element_type,
    EnumParameter<Tile_CausalMode>:$causal,
    "int64_t":$block_m,
    "int64_t":$block_n,
    DefaultValuedParameter<"int64_t", "1">:$stages,
    DefaultValuedParameter<"bool", "false">:$refill_after_use,
    DefaultValuedParameter<"bool", "false">:$mask_split,
    DefaultValuedParameter<"bool", "false">:$exp2,
    DefaultValuedParameter<"int64_t", "0">:$rescale_threshold,
    DefaultValuedParameter<"bool", "false">:$defer_pv,
    Tile_KernelFeaturesParameter:$features
  );

  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The same kernel with one schedule knob changed: what a schedule pass
    /// records after applying it.
    SdpaAttr withBlocks(int64_t blockM, int64_t blockN) const;
    SdpaAttr withStages(int64_t stages, bool refillAfterUse = false) const;
    SdpaAttr withMaskSplit() const;
    SdpaAttr withExp2() const;
    SdpaAttr withRescaleThreshold(int64_t threshold) const;
    SdpaAttr withDeferPv() const;
    /// The roles of the arguments this kernel takes besides its captured
    /// inputs, in the generator's order: q, k, v, o, scale, for a `window`
    /// kernel window_lo, window_hi (and with `varlen` window_align), then
    /// each feature's arguments that are roles (KernelVariant.def's
    /// "arguments", in its order: softcap, lse, cu_seqlens_q and
    /// cu_seqlens_k, num_splits; a block mask's are captured inputs). Each
    /// appears once among the kernel's `tile.arg`s.
    ::llvm::SmallVector<ArgRole> getArgumentRoles() const;
    /// The head dim of V and O: head_dim_v, or head_dim where it is 0.
    int64_t getValueHeadDim() const {
      return getHeadDimV() ? getHeadDimV() : getHeadDim();
    }
  }];
}

#endif // TILED_ATTN_DIALECT_TILE_IR_TILEATTRS_TD
