//===- Passes.td - Transforms on the tile dialect ----------*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILE_TRANSFORMS_PASSES_TD
#define TILED_ATTN_DIALECT_TILE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileMaskSplitPass : Pass<"tile-mask-split", "::mlir::func::FuncOp"> {
  let summary = "Split a K/V loop into unmasked, masked and skipped blocks";
  let description = [{
    Splits each K/V loop of an SDPA kernel that holds a mask depending on
    the loop (the keys' bounds mask, and a causal or a window mask) into:

    - blocks that need no mask: inside S_k and, with a causal or window
      mask, seen entirely by every query row of the program: a loop with no
      mask;
    - blocks on the diagonal or across S_k: a loop that keeps the masks;
    - with a causal mask, blocks no query row of the program can see: not
      visited at all; with a window mask (`tile.window_mask`, diagonals
      [lo, hi] known at run time), neither the blocks right of the band nor
      those left of it, so that a sliding window's cost grows with its
      width, not with S_k.

    A window mask has a masked loop on each side of the unmasked one:
    `[n_first, n_lo)` (the band's left edge), `[n_lo, n_full)` unmasked,
    `[n_full, n_visible)` (its right edge and S_k).

    Without a causal mask only the last, partial key block stays masked.
    Top-left and bottom-right alignment are both handled (the bound uses the
    same row offset as the `tile.causal_mask`). The unmasked loop also stays
    below floor(S / rows) of every view it loads whole row blocks of at the
    loop's block index (K and V); with `in-bounds-loads` those loads are
    marked `in_bounds`, so that the GPU lowering checks no bounds for them.
    Results are bitwise identical. Sets `mask_split = true` in `tile.sdpa`.

    Before: `scf.for %j = 0 to ceil(S_k / BN)` with the masks.
    After:  `scf.for %j = 0 to %n_full` (no mask), then
            `scf.for %j = %n_full to %n_visible` (masked).

    With `masked-first`, the masked loop runs first and the unmasked one
    after it (the online softmax takes key blocks in any order), as
    FlashAttention-2 does by walking the blocks backwards:
            `scf.for %j = %n_full to %n_visible` (masked), then
            `scf.for %j = 0 to %n_full` (no mask).
    Every block the unmasked loop loads ahead of use (`tile-prefetch`) then
    lies inside the views too, so its prefetches need no bounds checks
    either. The results match the default order to rounding.

    With `guard`, the loop is not split: it runs over [0, %n_visible), and
    each select that applies the masks (with the masks, broadcasts and
    `andi`s that compute its condition) moves under
    `scf.if %j >= %n_full`, whose else branch yields the unmasked scores.
    The loop body is not duplicated (less code, fewer registers live), but
    its K/V loads keep their bounds checks.
  }];
  let options = [
    Option<"inBoundsLoads", "in-bounds-loads", "bool", /*default=*/"true",
           "Mark the unmasked loop's K/V loads in_bounds">,
    Option<"guard", "guard", "bool", /*default=*/"false",
           "Keep one loop; apply the masks under scf.if j >= n_full">,
    Option<"maskedFirst", "masked-first", "bool", /*default=*/"false",
           "Run the masked loop before the unmasked one">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileDecomposeOnlineSoftmaxPass
    : Pass<"tile-decompose-online-softmax", "::mlir::func::FuncOp"> {
  let summary = "Rewrite tile.online_softmax into reductions and elementwise math";
  let description = [{
    Expands each `tile.online_softmax` into the primitives a GPU lowering
    handles: a row max (`tile.reduce max`), broadcasts, `math.exp`, a row sum,
    and the guard that keeps rows with no visible key free of NaN.

    Before:

    ```mlir
    %m1, %l1, %p, %a = tile.online_softmax %s, %m0, %l0 scale(%scale)
        : tensor<16x16xf32>, tensor<16xf32>
    ```

    After (abridged):

    ```mlir
    %x    = arith.mulf %s, %scale_splat : tensor<16x16xf32>
    %rmax = tile.reduce max %x along 1 : tensor<16x16xf32> -> tensor<16xf32>
    %m1   = arith.maximumf %m0, %rmax : tensor<16xf32>
    %ref  = arith.select %is_neg_inf, %zero, %m1 : tensor<16xi1>, tensor<16xf32>
    %p    = math.exp (%x - broadcast(%ref))
    %a    = math.exp (%m0 - %ref)
    %l1   = %l0 * %a + tile.reduce sum %p
    ```

    A `tile.log_sum_exp` becomes `max + math.log(sum)` (with `exp2`,
    `max * scale + math.log(sum)`).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def TileVectorizeApplyPass : Pass<"tile-vectorize-apply", "::mlir::ModuleOp"> {
  let summary = "Inline the scalar score and mask functions of tile.apply, written on tiles";
  let description = [{
    Replaces each `tile.apply` by its function's body written on tiles, and
    then erases the functions no `tile.apply` calls any more. Each value of
    the body becomes what it varies with: a scalar where it depends on
    neither position (the batch, the head, a captured scalar, a per-head
    slope read with `tile.read`), a vector of the block's rows (`tensor<BM>`)
    where it depends on the query only, a vector of its keys (`tensor<BN>`)
    where on the key only, and a whole score block (`tensor<BMxBN>`) where on
    both or on the score. Positions are i32 (`tile.iota` from the block's
    first query and key); `index` arithmetic on them is done in i32. A
    `tile.read` at positions becomes a `tile.gather` of the vector or block
    it varies over (reading 0 outside the view); vectors meet as late as
    possible, through `tile.broadcast`, so that a per-token lookup costs one
    read per row or key, not one per score.

    ```mlir
    // Before
    func.func @document(%b: index, %h: index, %q: index, %kv: index,
                        %doc: !tile.view<?x?xi32>) -> i1 {
      %dq = tile.read %doc[%b, %q] : !tile.view<?x?xi32> -> i32
      %dk = tile.read %doc[%b, %kv] : !tile.view<?x?xi32> -> i32
      %same = arith.cmpi eq, %dq, %dk : i32
      return %same : i1
    }
    %keep = tile.apply @document at(%b, %h, %q0, %k0)
        captures(%doc : !tile.view<?x?xi32>) : tensor<128x64xi1>
    // After
    %q = tile.iota offset(%q0) : tensor<128xi32>
    %kv = tile.iota offset(%k0) : tensor<64xi32>
    %dq = tile.gather %doc[%b, %q] pad(0.0) : ..., tensor<128xi32> -> tensor<128xi32>
    %dk = tile.gather %doc[%b, %kv] pad(0.0) : ..., tensor<64xi32> -> tensor<64xi32>
    %dq2 = tile.broadcast %dq along 1 : tensor<128xi32> -> tensor<128x64xi32>
    %dk2 = tile.broadcast %dk along 0 : tensor<64xi32> -> tensor<128x64xi32>
    %keep = arith.cmpi eq, %dq2, %dk2 : tensor<128x64xi32>
    ```

    A function may use `arith` and `math` ops on scalars, `tile.read` and
    `tile.dim`; anything else (regions, calls) is an error naming the op.

    With `block-loads`, a read of 32-bit or one-byte elements at
    `(..., q_idx, kv_idx)` whose other indices vary with neither position (a
    bias or a boolean mask of `[B, H, S_q, S_k]`) becomes a `tile.load` of
    the score's block, as K's block is loaded: block indices `q_start / BM` and `kv_start / BN`
    (when the block's first query and key are multiples of the block
    shape, as the generator's are; otherwise a gather), 0 outside the
    view. The GPU then copies the block into shared memory (cp.async or
    TMA) and reads it in the scores' layout, instead of loading each
    element from global memory in that layout.

    ```mlir
    // %bias read at (b, h, q_idx, kv_idx), block %j of 64 keys
    %x = tile.load %bias[%b, %h, %i, %j] pad(0.0)
        : !tile.view<?x?x?x?xf32> -> tensor<128x64xf32>
    ```
  }];
  let options = [
    Option<"blockLoads", "block-loads", "bool", /*default=*/"false",
           "Read a tensor at every (query, key) as a tile.load of the "
           "score's block">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TileEarlyMmasPass : Pass<"tile-early-mmas", "::mlir::func::FuncOp"> {
  let summary = "Issue a loop body's independent products with its first";
  let description = [{
    Moves each `tile.mma` of a loop body after the body's first one, with
    the ops of the body it needs, to just after the first (after those moved
    before it, in their order), when nothing it needs reads another
    product's result, has regions or writes memory, and no write lies
    between where a load it needs was and where it goes.
    On wgmma the moved products run while the warpgroup computes on the
    first one's result (the waits leave them in flight). Nothing else moves.
    Both results are live at once: registers.

    Before (the backward's step):

    ```mlir
    %st = tile.mma %k, %qt, %zero : ...
    %p = math.exp %x : tensor<128x64xf32>        // from %st
    %dv = tile.mma %pt, %do, %dv0 : ...
    %dot = tile.transpose %do : tensor<64x128xbf16> -> tensor<128x64xbf16>
    %dpt = tile.mma %v, %dot, %zero : ...
    ```

    After: `%dot` and `%dpt` come right after `%st`.
  }];
}

def TileEarlyGathersPass : Pass<"tile-early-gathers", "::mlir::func::FuncOp"> {
  let summary = "Issue a loop's gathers before its mmas";
  let description = [{
    Moves each `tile.gather` of a loop body that comes after the body's first
    `tile.mma` (a score or mask function reading a tensor at every query and
    key: a bias, a boolean mask, key ids), with the pure ops of the body it
    depends on, to just before that mma, so that its loads are in flight
    while the matrix unit works. A gather that needs an mma's result, an op
    with effects or regions, or a view the function writes stays where it
    is. The gathered block is live through the mmas.

    Before (one step of the loop, after `tile-defer-pv`):

    ```mlir
    %s = tile.mma %q, %k, %zero : ...
    %o = tile.mma %p, %v, %acc : ...
    %k0 = arith.muli %j, %c64 : index
    %cols = tile.iota offset(%k0) : tensor<64xi32>
    %at = tile.broadcast %cols along 0 : tensor<64xi32> -> tensor<128x64xi32>
    %bias = tile.gather %b[%bi, %h, %rows, %at] pad(0.0) : ...
    ```

    After: the last four ops come first.
  }];
}

def TileExp2Pass : Pass<"tile-exp2", "::mlir::func::FuncOp"> {
  let summary = "Use exp2 with the softmax scale folded into one multiply-add";
  let description = [{
    Marks every `tile.online_softmax` as `exp2`: the running max is taken on
    the unscaled scores and `scale * log2(e)` is folded into the exponent, so
    that each probability costs one fused multiply-add and one `exp2`
    (`ex2.approx` on NVIDIA GPUs) instead of a multiply, a subtract and an
    `exp`. Valid for `scale > 0`. Sets `exp2 = true` in `tile.sdpa`. A
    `tile.log_sum_exp` of the chain is marked too, so that it reads the
    max in its new units; any other use of a running max is an error.

    A plain `math.exp(x - tile.broadcast(v))` of f32 tiles (the backward's
    probabilities from the forward's log-sum-exps, `exp(scale s - lse)`)
    becomes `math.exp2(math.fma(x, log2(e), tile.broadcast(-log2(e) v)))`:
    the vector is scaled once before its broadcast, and where `x` is a
    product with a splat (`s * scale`) log2(e) folds into that splat, so
    each element costs one FMA and one exp2. Equal up to rounding.

    ```mlir
    // Before
    %m1, %l1, %p, %a = tile.online_softmax %s, %m0, %l0 scale(%c) : ...
    // After
    %m1, %l1, %p, %a = tile.online_softmax %s, %m0, %l0 scale(%c) exp2 : ...
    ```
  }];
}

def TileDifferentiateScorePass
    : Pass<"tile-differentiate-score", "::mlir::ModuleOp"> {
  let summary = "Derive a score function's gradient from its body (the chain rule)";
  let description = [{
    For the score function `function` (`@f(%score: f32, %b, %h, %q_idx,
    %kv_idx, captures...) -> f32`, functions.md), adds `@f_grad`: the same
    arguments and one more, `%grad: f32`, the gradient of the loss with
    respect to f's result, and returns `%grad * df/dscore`, what the
    backward pass needs to take dS of the modified scores back to the raw
    ones. The derivative is forward-mode over f's body, op by op: addf,
    subf, mulf, divf, negf, maximumf, minimumf, select, extf, truncf,
    math.exp, exp2, log, sqrt, tanh; what does not depend on the score
    (positions, captured inputs read by tile.read, constants) has none.
    Any other op on a value that depends on the score is an error naming
    it: such a function declares its gradient beside it instead. No GPU:
    the result is a function of the tile dialect like the one it came from.

    ```mlir
    // tanh soft-capping: d(cap tanh(s / cap))/ds = 1 - tanh(s / cap)^2
    func.func @tanh_softcap_grad(%score: f32, ..., %cap: f32, %grad: f32) -> f32
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The score function to differentiate (a func.func of the module)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def TileGenerateSdpaPass : Pass<"tile-generate-sdpa", "::mlir::ModuleOp"> {
  let summary = "Add an SDPA forward kernel, built from a configuration, to the module";
  let description = [{
    Appends a FlashAttention-style forward kernel in tile IR: one program per
    `block-m` query rows of one (batch, head), streaming K and V in blocks of
    `block-n` with an online softmax. Any sequence length works: tails are
    padded on load, masked in the scores and masked on store.

    ```
    tiled-attn-opt --tile-generate-sdpa="head-dim=128 dtype=bf16 variant=top_left block-m=128 block-n=64" empty.mlir
    ```

    The kernel carries a `tile.sdpa` attribute recording its configuration.
  }];
  let options = [
    Option<"headDim", "head-dim", "int64_t", /*default=*/"64",
           "Head dimension D (a multiple of 16 in [16, 256])">,
    Option<"headDimV", "head-dim-v", "int64_t", /*default=*/"0",
           "Head dimension of V and O where it differs from D (DeepSeek's "
           "MLA: head-dim=192 head-dim-v=128); 0 is D">,
    Option<"dtype", "dtype", "std::string", /*default=*/"\"f16\"",
           "Element type of Q, K, V and O: f16 or bf16">,
    Option<"variant", "variant", "std::string", /*default=*/"\"none\"",
           "What the kernel computes, as the library spec and the kernels' "
           "names say it (the grammar of KernelVariant.def, "
           "docs/library.md): a mask (none; top_left, PyTorch's is_causal; "
           "bottom_right, FlashAttention's causal; window, a band of "
           "diagonals given at run time), its features (each _<name>, in "
           "the .def's order, adding the arguments the .def lists), and "
           "score and mask functions of the module by name (+alibi, "
           "+document): window_softcap_lse, top_left+alibi+document">,
    Option<"blockM", "block-m", "int64_t", /*default=*/"64",
           "Query rows per program (multiple of 16 in [16, 256])">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"64",
           "Keys per inner-loop step (multiple of 16 in [16, 256])">,
    Option<"pageSize", "page-size", "int64_t", /*default=*/"0",
           "A paged kernel's page size when smaller than block-n (each key "
           "block gathered from block-n / page-size pages); 0: pages of "
           "any multiple of block-n">,
    Option<"kernelName", "name", "std::string", /*default=*/"\"sdpa_fwd\"",
           "Symbol name of the generated kernel">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::tiled_attn::tile::TileDialect",
  ];
}

def TileGenerateBlockMaskPass : Pass<"tile-generate-block-mask", "::mlir::ModuleOp"> {
  let summary = "Add the kernel that builds a block mask from a mask function";
  let description = [{
    Appends a kernel that classifies the 128x128 blocks of the mask a mask
    function of the module gives (FlexAttention's `create_block_mask`, on
    the GPU): program (m, h, b) evaluates the function over query block m
    and each key block, reduces each block to whether some element is
    visible and whether all are, and writes 0 (empty), 1 (partial) or 2
    (full) to `block_kinds[b, h, m, j]`. Rows past `seq_q` count as visible
    and keys past `seq_k` as hidden, so that a full block needs no bounds
    check. Its arguments: the function's captured inputs, `seq_q`, `seq_k`
    and `block_kinds`.

    ```
    tiled-attn-opt --tile-generate-block-mask="mask-function=document" kernels/functions/document.mlir
    ```
  }];
  let options = [
    Option<"maskFunction", "mask-function", "std::string", /*default=*/"\"\"",
           "The mask function of the module, by name">,
    Option<"kernelName", "name", "std::string", /*default=*/"\"block_mask\"",
           "Symbol name of the generated kernel">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::tiled_attn::tile::TileDialect",
  ];
}

def TileGenerateSplitMergePass : Pass<"tile-generate-split-merge", "::mlir::ModuleOp"> {
  let summary = "Add the kernel that merges split-KV partial results";
  let description = [{
    Appends the kernel that merges what a split-KV kernel
    (`tile-generate-sdpa{variant=none_lse_split}`) writes: program (m, h, b)
    reads the `num_splits` chunks' log-sum-exps and f32 outputs of
    `block-m` query rows from `lse_partial` and `o_partial` (head index h *
    num_splits + s) and writes `o` (weights exp(lse_s - lse), `block-d`
    columns at a time) and `lse`; the loop over the chunks takes
    `chunks-per-step` of them a step, their reads issued together.

    ```
    tiled-attn-opt --tile-generate-split-merge="head-dim-v=128 dtype=bf16" empty.mlir
    ```
  }];
  let options = [
    Option<"headDimV", "head-dim-v", "int64_t", /*default=*/"128",
           "Head dimension of V and O">,
    Option<"dtype", "dtype", "std::string", /*default=*/"\"f16\"",
           "Element type of O: f16 or bf16">,
    Option<"blockM", "block-m", "int64_t", /*default=*/"16",
           "Query rows per program (a multiple of 16)">,
    Option<"blockD", "block-d", "int64_t", /*default=*/"64",
           "Columns per step (a multiple of 8 dividing head-dim-v)">,
    Option<"chunksPerStep", "chunks-per-step", "int64_t", /*default=*/"0",
           "Chunks whose reads a step of the loop issues together (1-16; "
           "0: as many as 64 registers of a warp hold, at most 8)">,
    Option<"kernelName", "name", "std::string", /*default=*/"\"split_merge\"",
           "Symbol name of the generated kernel">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::tiled_attn::tile::TileDialect",
  ];
}

def TileGenerateSdpaBackwardPass
    : Pass<"tile-generate-sdpa-backward", "::mlir::ModuleOp"> {
  let summary = "Add the kernels of the SDPA backward pass";
  let description = [{
    Appends FlashAttention-2's backward pass, with FlashAttention-3's
    transposed scores, as four kernels (`lib/Kernels/SdpaBackwardKernel.cpp`):
    `<name>_preprocess` (per `block-m` query rows: delta = rowsum(dO * O),
    dQ's f32 accumulator zeroed), `<name>` (per `block-n` keys of a K/V
    head: Sᵀ = K Qᵀ, Pᵀ from the forward's log-sum-exps, dV += Pᵀ dO, dSᵀ =
    Pᵀ (V dOᵀ - delta), dK += dSᵀ Q, and dS K added into the accumulator by
    an adding `tile.store`, over every query block that sees the keys and
    every query head of the K/V head's group), `<name>_postprocess` (dQ
    = scale * accumulator) and `<name>_dq`, the deterministic mode's dQ (per
    query block over the key blocks it sees, dQ in registers, written once). Masks none, top_left, bottom_right and sliding
    windows, with or without a softcap, and the forward's score and mask
    functions (`functions`: func.funcs of the module; a score function's
    gradient @<f>_grad is derived from its body, as
    tile-differentiate-score does, unless the module declares it). Lowered
    on the mma.sync and wgmma families.

    ```
    tiled-attn-opt --tile-generate-sdpa-backward="head-dim=64 dtype=bf16 causal=top_left" empty.mlir
    tiled-attn-opt kernels/functions/alibi.mlir --tile-generate-sdpa-backward="head-dim=64 functions=alibi"
    ```
  }];
  let options = [
    Option<"headDim", "head-dim", "int64_t", /*default=*/"64",
           "Head dimension of Q and K">,
    Option<"headDimV", "head-dim-v", "int64_t", /*default=*/"0",
           "Head dimension of V, O and dO (0: head-dim)">,
    Option<"dtype", "dtype", "std::string", /*default=*/"\"f16\"",
           "Element type of the tensors and gradients: f16 or bf16">,
    Option<"causal", "causal", "std::string", /*default=*/"\"none\"",
           "The forward's mask: none, top_left, bottom_right or window (two "
           "more index arguments, window_lo and window_hi: the band of "
           "diagonals lo <= j - i <= hi)">,
    Option<"softcap", "softcap", "bool", /*default=*/"false",
           "The forward's softcap: one more f32 argument, softcap; the "
           "chain rule's 1 - tanh^2 on dS">,
    Option<"varlen", "varlen", "bool", /*default=*/"false",
           "Variable-length batches: packed [1, H, total, D] tensors and "
           "the sequences' offsets (cu_seqlens_q; the main and dq kernels "
           "also cu_seqlens_k and, with a window, window_align)">,
    Option<"blockM", "block-m", "int64_t", /*default=*/"64",
           "Query rows per block (a multiple of 16)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"64",
           "Keys per program of the main kernel (a multiple of 16)">,
    Option<"kernelName", "name", "std::string", /*default=*/"\"sdpa_bwd\"",
           "Symbol name of the main kernel (the others add _preprocess and "
           "_postprocess)">,
    ListOption<"functions", "functions", "std::string",
           "The forward's score and mask functions, by name (at most one of "
           "each): func.funcs of the module">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::tiled_attn::tile::TileDialect",
  ];
}

def TileHeavyFirstPass : Pass<"tile-heavy-first", "::mlir::func::FuncOp"> {
  let summary = "Start the causal programs with the most work first";
  let description = [{
    In a causal SDPA kernel the program for query block m visits about m + 1
    K/V blocks. The GPU starts programs in the order of their linear id
    L = x + nq * (y + H * z) over the grid (nq, H, B), nq = ceil(S_q /
    BLOCK_M), so by default the longest programs of the last heads start
    last and the grid ends on a long tail. This pass renumbers the programs
    so that L counts the query blocks downwards with the heads innermost
    (m = nq - 1 - L / (H * B), head L mod (H * B)): longest-processing-time-
    first order over the whole grid. With `head-group=G > 0` the heads are
    ordered G at a time (the last group may be smaller), which keeps the K/V
    that the running programs read small enough for L2.

    The grid is unchanged (the runtime contract), and every (m, h, b) is
    reached once: a permutation of the programs, bitwise identical. Kernels
    without a causal mask are left alone, unless `all-masks`: then their
    query blocks count upwards, the heads innermost as well (m = L / (H *
    B)), so that the programs of one query block of every head run
    together; a tensor broadcast over the heads (PyTorch's attn_mask
    [B, 1, S_q, S_k]) is then read by them from L2 rather than once per
    head from memory.
  }];
  let options = [
    Option<"headGroup", "head-group", "int64_t", /*default=*/"0",
           "Heads (of the B * H) whose programs are ordered together; 0: all">,
    Option<"allMasks", "all-masks", "bool", /*default=*/"false",
           "Kernels without a causal mask too: query blocks upwards, heads "
           "innermost">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TileFoldScoreTermsPass
    : Pass<"tile-fold-score-terms", "::mlir::func::FuncOp"> {
  let summary = "Fold a score function's row terms and the scale out of the scores";
  let description = [{
    A score function written on tiles (after `tile-vectorize-apply`) adds
    terms to the scaled scores that the softmax of a K/V loop sees:
    `x = s * c + t_1 - t_2 ...`, each term a broadcast of a vector of the
    rows (`along 1`), of the keys (`along 0`), or anything else. The
    online softmax is invariant to a per-row constant, so:

    - with `row-terms`, a row term that does not change across the loop
      (ALiBi's `slope * q_idx`) is dropped from every score; the rows'
      log-sum-exps (`tile.log_sum_exp` of the loop's results) get it back,
      computed once after the loop;
    - with `scale`, when the softmax takes the scores as they are (scale
      1) and every remaining term is a row or key vector, the scale moves
      into the softmax: `x = s + (t_1 - ...) / c` with the vectors divided
      once per block and the softmax's (and the log-sum-exps') scale `c`,
      which `tile-exp2` then folds into exp2's multiply-add. The scale is
      finite and positive (the runtime's rule);
    - with `float-positions` (on by default), i32 positions converted to
      f32
      (`arith.sitofp` of a `tile.iota`, ALiBi's `kv_idx` as a float) become
      f32 positions (`tile.iota : tensor<..xf32>`), which a GPU computes as
      the block's first position, converted once, plus each register's
      constant: one f32 add per key instead of an integer add and a
      conversion. Equal below 2^24 (16M) positions. f32 positions times a
      scalar then become positions with that step (`tile.iota ...
      step(%a)`, one multiply-add per key).
    - with `contract` (on by default), where the scale stays in the scores
      (a term that is a whole tile, such as a bias tensor's block, or
      `scale=0`), the scaled score and the first term added to it (the
      first of the sum's added terms, a tile or a vector) become one
      `math.fma(s, c, t)` (the lowering writes `mul.rn` and `add.rn`,
      which ptxas never fuses).

    ```mlir
    // before
    %k = tile.iota offset(%j0) : tensor<128xi32>
    %kf = arith.sitofp %k : tensor<128xi32> to tensor<128xf32>
    // after
    %kf = tile.iota offset(%j0) : tensor<128xf32>
    ```

    A score then costs one addition per key term instead of a multiply
    and an addition or subtraction per term (the library's Hopper ALiBi
    kernels: 1-6% faster in an interleaved A/B on an H200). Kernels with more than one
    online softmax (a block-sparse kernel's two loops), or whose loop
    statistics feed anything but the output's normalization and
    `tile.log_sum_exp`, are left alone.
  }];
  let options = [
    Option<"rowTerms", "row-terms", "bool", /*default=*/"true",
           "Drop the loop-invariant row terms (restored in log-sum-exps)">,
    Option<"scale", "scale", "bool", /*default=*/"true",
           "Move the scale from the scores into the softmax">,
    Option<"floatPositions", "float-positions", "bool", /*default=*/"true",
           "Read i32 positions converted to f32 as f32 positions">,
    Option<"contract", "contract", "bool", /*default=*/"true",
           "Where the scale stays in the scores, fuse `s * c + t` into one "
           "math.fma">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TileHoistInvariantsPass
    : Pass<"tile-hoist-invariants", "::mlir::func::FuncOp"> {
  let summary = "Hoist loop-invariant tile ops and loads of read-only views";
  let description = [{
    Moves out of `scf.for` loops every pure op whose operands are defined
    outside the loop (constants, splats, broadcasts, masks, index math), and
    every `tile.load` whose indices are loop-invariant and whose view is never
    stored to in the function. Then folds what became constant (broadcasts of
    splats, masks with constant operands, selects with constant masks).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TileLazyRescalePass : Pass<"tile-lazy-rescale", "::mlir::func::FuncOp"> {
  let summary = "Skip the accumulator rescale while the running max barely grows";
  let description = [{
    FlashAttention-4's conditional rescaling. Each `tile.online_softmax`
    keeps a row's running max until the new block would make a probability
    exceed `2^threshold`, so that `alpha` is mostly 1; the accumulator update
    `acc * broadcast(alpha)` is then wrapped in an `scf.if` that runs only
    when some row's alpha is below 1. The final `acc / l` is unchanged up to
    rounding. Sets `rescale_threshold` in `tile.sdpa`.

    With `guard=0` the multiply is left alone: the GPU lowering
    (`convert-tilegpu-to-nvvm{skip-unit-row-scales}`) skips it per warp, which
    needs no CTA-wide reduction.

    ```mlir
    // After
    %m1, %l1, %p, %a = tile.online_softmax %s, %m0, %l0 scale(%c)
        lazy_rescale(8.0) : ...
    %min = tile.reduce min %a along 0 : tensor<64xf32> -> f32
    %need = arith.cmpf ult, %min, %one : f32
    %acc1 = scf.if %need -> (tensor<64x64xf32>) { ... arith.mulf ... }
            else { scf.yield %acc0 : tensor<64x64xf32> }
    ```
  }];
  let options = [
    Option<"threshold", "threshold", "int64_t", /*default=*/"8",
           "log2 of the largest factor a probability may reach (1 to 16)">,
    Option<"guard", "guard", "bool", /*default=*/"true",
           "Wrap the accumulator rescale in an scf.if on min(alpha) < 1">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TilePrefetchPass : Pass<"tile-prefetch", "::mlir::func::FuncOp"> {
  let summary = "Software-pipeline the K/V loads of a loop across iterations";
  let description = [{
    The loads that iteration j of an `scf.for` makes at tile index j (the
    K and V blocks) are issued `stages - 1` iterations ahead: a prologue
    loads blocks lb .. lb + stages - 2, iteration j loads block j + stages - 1
    and uses the block loaded earlier, carried in `iter_args`. Loads past the
    end read padding and are never used, so loops shorter than the pipeline,
    including empty ones, stay correct. Results are bitwise identical. Sets
    `stages` in `tile.sdpa`.

    With `refill-after-use`, each refill moves to just after the last op
    of the body that reads the block it replaces (after Q·Kᵀ for K, after
    P·V for V), so the copy overlaps the rest of the iteration and writes
    into the buffer the old block leaves free.

    A loop that writes memory is pipelined only where no write can reach
    the blocks it loads: every write goes to a kernel argument (or a slice
    of one) other than the views the loads read. A kernel's written
    arguments share no memory with its other arguments (the kernel ABI:
    the runtime refuses calls where they would), so the backward's loop
    over query blocks streams Q and dO while it adds into dQ's accumulator.

    `streams` limits the pipelining to the loop's first loads, in body
    order (the K block comes first, then V). FlashAttention-2 prefetches K
    only: with `streams=1 refill-after-use`, V is copied at the top of its
    iteration, overlapping Q·Kᵀ, and the next K overlapping the softmax and
    P·V; after `merge-barriers` the loop needs two CTA barriers per block.
  }];
  let options = [
    Option<"stages", "stages", "int64_t", /*default=*/"2",
           "Blocks in flight per load (1 = no prefetch; at most 4)">,
    Option<"streams", "streams", "int64_t", /*default=*/"0",
           "Pipeline only the first `streams` block loads of a loop, in body "
           "order (0 = all)">,
    Option<"refillAfterUse", "refill-after-use", "bool", /*default=*/"false",
           "Issue each refill right after the last read of the block it "
           "replaces, instead of where the load was: the refill may then "
           "reuse that block's shared buffer, so a stream needs stages - 1 "
           "buffers (stages=2: one K and one V buffer, FlashAttention-2's "
           "schedule)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileDeferPvPass : Pass<"tile-defer-pv", "::mlir::func::FuncOp"> {
  let summary = "Run each K/V block's P.V one iteration later, after the next block's Q.K^T";
  let description = [{
    FlashAttention-3's intra-warpgroup overlap. In each innermost loop that
    yields `O = mma(P, V, O * alpha)`, the chain from the O iteration
    argument to that mma (the rescale and P.V, with any broadcast only it
    reads) moves to the next iteration, right after its first other mma
    (Q.K^T). The loop carries P, V and alpha one iteration; a prologue runs
    the first block without the chain and an epilogue runs the last chain,
    all under an `scf.if` on the loop running at all.

    On the wgmma family the softmax of block j then overlaps the tensor
    cores' P_{j-1}.V_{j-1}: `convert-tile-to-tilegpu` waits for each mma
    only where its result is first read. The arithmetic is unchanged, op
    for op, so the output is bitwise the same. Sets `defer_pv` in
    `tile.sdpa` when a loop was rotated.

    ```mlir
    // Before
    scf.for %j = %lb to %ub step %c1 iter_args(%m = .., %l = .., %o = ..) {
      %s = tile.mma %q, %k, %zero ...
      ... softmax: %p, %alpha ...
      %a = tile.broadcast %alpha along 1 ...
      %o1 = arith.mulf %o, %a ...
      %o2 = tile.mma %p, %v, %o1 ...
      scf.yield %m1, %l1, %o2
    }
    // After
    scf.if %lb < %ub {
      ... block %lb without the P.V chain ...
      %r:6 = scf.for %j = %lb + 1 to %ub ... iter_args(.., %o = .., %pp = %p0, %vp = %v0, %ap = %alpha0) {
        %s = tile.mma %q, %k, %zero ...
        %a = tile.broadcast %ap along 1 ...
        %o1 = arith.mulf %o, %a ...
        %o2 = tile.mma %pp, %vp, %o1 ...
        ... softmax: %p, %alpha ...
        scf.yield %m1, %l1, %o2, %p, %v, %alpha
      }
      ... the P.V chain on %r#3, %r#4, %r#5 ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileRetilePass : Pass<"tile-retile", "::mlir::func::FuncOp"> {
  let summary = "Change the block sizes (BLOCK_M, BLOCK_N) of an SDPA kernel";
  let description = [{
    Rewrites an SDPA kernel in the form `tile-generate-sdpa` produces (before
    other schedule transforms) to new block sizes: every tile dimension that
    stands for the query block (BLOCK_M) or the key block (BLOCK_N) is
    resized, and the index arithmetic that turns block indices into element
    offsets and counts blocks is rescaled. The roles are found by a dataflow
    analysis seeded at the loads and stores of Q, K, V and O; a use it does
    not understand is an error, never a silent change. Updates `block_m` and
    `block_n` in `tile.sdpa`.
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", /*default=*/"0",
           "New BLOCK_M (a multiple of 16 in [16, 256]; 0 keeps it)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"0",
           "New BLOCK_N (a multiple of 16 in [16, 256]; 0 keeps it)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // TILED_ATTN_DIALECT_TILE_TRANSFORMS_PASSES_TD
