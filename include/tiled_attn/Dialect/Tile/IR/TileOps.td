//===- TileOps.td - Operations of the tile dialect ---------*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILE_IR_TILEOPS_TD
#define TILED_ATTN_DIALECT_TILE_IR_TILEOPS_TD

include "tiled_attn/Dialect/Tile/IR/TileDialect.td"
include "tiled_attn/Dialect/Tile/IR/TileAttrs.td"
include "tiled_attn/Dialect/Tile/IR/TileTypes.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

/// A tile: a ranked tensor whose shape is static, every size a power of two
/// or a multiple of 16, with at most 65536 elements (kMaxTileElements).
class Tile_TileOf<list<Type> allowedTypes, string what>
    : Type<And<[TensorOf<allowedTypes>.predicate,
                CPred<"::tiled_attn::tile::isTileShape("
                      "::llvm::cast<::mlir::ShapedType>($_self))">]>,
           what # " tile (static shape of 2^k or 16k sizes, at most 65536 elements)",
           "::mlir::RankedTensorType">;

/// A tile of one rank: the rank is part of the operand's type constraint.
class Tile_RankedTileOf<list<Type> allowedTypes, int rank, string what>
    : Type<And<[Tile_TileOf<allowedTypes, what>.predicate,
                HasAnyRankOfPred<[rank]>]>,
           "rank-" # rank # " " # what # " tile (static shape of 2^k or 16k sizes, at most 65536 elements)",
           "::mlir::RankedTensorType">;

def Tile_AnyTile : Tile_TileOf<[AnyType], "any">;
def Tile_FloatTile : Tile_TileOf<[F16, BF16, F32], "f16, bf16 or f32">;
def Tile_MmaInputTile : Tile_TileOf<[F16, BF16], "f16 or bf16">;
def Tile_F32Tile : Tile_TileOf<[F32], "f32">;
def Tile_MaskTile : Tile_TileOf<[I1], "i1">;
def Tile_IntTile : Tile_TileOf<[I32, I64], "i32 or i64">;
def Tile_PositionTile : Tile_TileOf<[I32, I64, F32], "i32, i64 or f32">;
def Tile_MmaInputTile2D : Tile_RankedTileOf<[F16, BF16], 2, "f16 or bf16">;
def Tile_F32Tile2D : Tile_RankedTileOf<[F32], 2, "f32">;
def Tile_IntTile1D : Tile_RankedTileOf<[I32, I64], 1, "i32 or i64">;

//===----------------------------------------------------------------------===//
// Base class
//===----------------------------------------------------------------------===//

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Program ids and views
//===----------------------------------------------------------------------===//

def Tile_BlockIdOp : Tile_Op<"block_id", [Pure]> {
  let summary = "The index of this program instance in the launch grid";
  let description = [{
    Returns the block index of the running program along one grid dimension.
    An SDPA kernel is launched on the grid `(ceil(S_q / block_m), H, B)`.

    Example:

    ```mlir
    %m = tile.block_id x
    ```
  }];
  let arguments = (ins Tile_Dim:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
}

def Tile_DimOp : Tile_Op<"dim", [Pure]> {
  let summary = "The run-time size of one dimension of a view";
  let description = [{
    Example:

    ```mlir
    %seq_q = tile.dim %q[2] : !tile.view<?x?x?x64xf16>
    ```
  }];
  let arguments = (ins Tile_ViewType:$view,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$index);
  let results = (outs Index:$result);
  let assemblyFormat = "$view `[` $index `]` attr-dict `:` type($view)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_SliceOp : Tile_Op<"slice", [Pure,
                                     AllTypesMatch<["view", "result"]>]> {
  let summary = "The elements [offset, offset + size) of one dimension of a view";
  let description = [{
    A view of the same tensor that starts `offset` elements into dimension
    `dim` and has `size` elements there; the other dimensions are the
    view's. Loads and stores through it index from the slice's start and
    see its size as their bound, so a packed tensor of sequences of
    different lengths is read one sequence at a time (variable-length
    batches). The slice must lie inside the view: the host executor reports
    one that does not; on the GPU it is undefined.

    Example:

    ```mlir
    // The keys of one sequence of a packed [1, H, total_k, 64] tensor.
    %k_b = tile.slice %k[2] offset(%start) size(%len) : !tile.view<?x?x?x64xf16>
    ```
  }];
  let arguments = (ins Tile_ViewType:$view,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       Index:$offset, Index:$size);
  let results = (outs Tile_ViewType:$result);
  let assemblyFormat = [{
    $view `[` $dim `]` `offset` `(` $offset `)` `size` `(` $size `)` attr-dict
    `:` type($view)
  }];
  let hasVerifier = 1;
}

def Tile_ReadOp : Tile_Op<"read"> {
  let summary = "Read one element of a view";
  let description = [{
    Reads the element at `indices` (one per dimension, in elements) as a
    scalar of the view's element type: how a program reads the offsets of
    its sequence (`cu_seqlens`). The element must lie inside the view: the
    host executor reports one that does not; on the GPU it is undefined.

    Example:

    ```mlir
    %start = tile.read %cu_seqlens_q[%b] : !tile.view<?xi32> -> i32
    ```
  }];
  let arguments = (ins Arg<Tile_ViewType, "the view to read", [MemRead]>:$view,
                       Variadic<Index>:$indices);
  let results = (outs AnyTypeOf<[I32, I8, F16, BF16, F32]>:$result);
  let assemblyFormat = [{
    $view `[` $indices `]` attr-dict `:` type($view) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_WriteOp : Tile_Op<"write"> {
  let summary = "Write one element of a view";
  let description = [{
    The counterpart of `tile.read`: writes `value` (a scalar of the view's
    element type) at `indices` (one per dimension, in elements). An element
    outside the view's run-time sizes is not written. The value is the
    program's, not a thread's: on the GPU one thread of the program writes
    it, so it must be the same in every thread (a `tile.reduce` to a scalar,
    a `tile.read`, arithmetic on block ids and arguments).

    Example:

    ```mlir
    tile.write %kind, %kinds[%b, %h, %qb, %j] : i8, !tile.view<?x?x?x?xi8>
    ```
  }];
  let arguments = (ins AnyTypeOf<[I32, I8, F16, BF16, F32]>:$value,
                       Arg<Tile_ViewType, "the view to write", [MemWrite]>:$view,
                       Variadic<Index>:$indices);
  let assemblyFormat = [{
    $value `,` $view `[` $indices `]` attr-dict `:` type($value) `,` type($view)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Grids on one stream
//===----------------------------------------------------------------------===//

def Tile_WaitPriorGridsOp : Tile_Op<"wait_prior_grids"> {
  let summary = "Wait until the grid launched before this one has finished";
  let description = [{
    A program that reads what the kernel launched before it on its stream
    wrote (a split-KV merge reading the partial outputs) may be launched as
    that kernel's dependent (programmatic dependent launch, sm_90 and
    later): it then starts before the earlier grid has finished, and this
    op waits until that grid has ended and its writes are visible. Nothing
    that reads the earlier grid's results, or writes what it reads, may
    come before it. A kernel that has it is launched so by the runtime (the
    manifest's `waits_prior_grids`); launched as usual, or on a chip
    without grid dependency control (sm_80), it does nothing.

    Example:

    ```mlir
    tile.wait_prior_grids
    %lse = tile.gather %lse_partial[%b, %at, %rows] ...
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Tile_LaunchDependentGridsOp : Tile_Op<"launch_dependent_grids"> {
  let summary = "Let the grid launched after this one start";
  let description = [{
    Once every program of this grid has run this op (or ended), the kernel
    launched after it as its dependent may start, its programs taking free
    SMs while this grid finishes; they wait in `tile.wait_prior_grids`
    before they read this grid's results. It says nothing about this
    program's own writes and may come anywhere; early is best where the
    dependent is small (a split-KV kernel lets its merge start). On a chip
    without grid dependency control it does nothing.

    Example:

    ```mlir
    tile.launch_dependent_grids
    ```
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def Tile_LoadOp : Tile_Op<"load", [AttrSizedOperandSegments]> {
  let summary = "Load a tile from a view, padding what lies outside it";
  let description = [{
    Reads the block of a view at the given indices. A view of rank R and a
    tile of rank r take R indices: the first R - r index elements of the
    leading dimensions; the last r are tile indices, in units of the block
    shape, so that index `i` starts at element `i * block_size`. Elements
    past the view's run-time sizes read as `pad`.

    With `transpose`, the block in memory has the tile's shape reversed and
    is transposed on the way in (rank-2 tiles only): a K block of `64x128`
    elements loads as a `128x64` tile of Kᵀ.

    `in_bounds` promises that the whole block lies inside the view's
    run-time sizes, so nothing is padded and the GPU lowering checks no
    bounds. The schedule pass that proves it sets it (`tile-mask-split`);
    the host executor reports a load that breaks the promise as an error.

    With `gather(%e0, ..., %eG-1)`, the block's rows (as it lies in memory:
    the tile's columns with `transpose`) come in G equal groups read from
    different places: group g is the load of a block of rows / G rows at
    the same indices, but with the first index replaced by `%eg` (and the
    row index counting blocks of rows / G). A paged KV cache
    [num_pages, H, page_size, D] with pages smaller than a key block reads
    one block from G pages this way, each `%eg` a page from the block table.

    Example:

    ```mlir
    // Block %j of 64 keys of batch %b and head %h, as Kᵀ.
    %kt = tile.load %k[%b, %h, %j, %c0] pad(0.0) transpose
        : !tile.view<?x?x?x128xf16> -> tensor<128x64xf16>
    // 64 keys from four pages of 16.
    %kp = tile.load %pages[%c0, %h, %c0, %c0] gather(%p0, %p1, %p2, %p3)
        pad(0.0) transpose : !tile.view<?x?x16x128xf16> -> tensor<128x64xf16>
    ```
  }];
  let arguments = (ins
    Arg<Tile_ViewType, "the view to read", [MemRead]>:$view,
    Variadic<Index>:$indices,
    Variadic<Index>:$gather,
    DefaultValuedAttr<F64Attr, "0.0">:$pad,
    UnitAttr:$transpose,
    UnitAttr:$in_bounds
  );
  let results = (outs Tile_AnyTile:$result);
  let assemblyFormat = [{
    $view `[` $indices `]` (`gather` `(` $gather^ `)`)? `pad` `(` $pad `)`
    (`transpose` $transpose^)? (`in_bounds` $in_bounds^)? attr-dict `:`
    type($view) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape of the block as it lies in memory (the tile's shape, reversed
    /// when transposed).
    ::llvm::SmallVector<int64_t> getBlockShape();
  }];
}

def Tile_StoreOp : Tile_Op<"store", [AttrSizedOperandSegments]> {
  let summary = "Store a tile into a view, writing only in-bounds elements";
  let description = [{
    The indices follow `tile.load`. Elements that fall outside the view's
    run-time sizes are never written. With `mask`, elements whose mask bit is
    false are not written either.

    With `add`, each written element is added to the one in memory instead
    of replacing it, atomically: other programs of the launch may add to the
    same elements in any order (f32 only). The backward pass accumulates
    dQ this way, each key block's programs adding their part.

    Example:

    ```mlir
    tile.store %out, %o[%b, %h, %m, %c0]
        : tensor<128x64xbf16>, !tile.view<?x?x?x64xbf16>
    // This program's part of dQ, added to the f32 accumulator.
    tile.store %dq, %dq_accum[%b, %h, %m, %c0] add
        : tensor<64x128xf32>, !tile.view<?x?x?x128xf32>
    ```
  }];
  let arguments = (ins
    Tile_AnyTile:$value,
    Arg<Tile_ViewType, "the view to write", [MemWrite]>:$view,
    Variadic<Index>:$indices,
    Optional<Tile_MaskTile>:$mask,
    UnitAttr:$add
  );
  let assemblyFormat = [{
    $value `,` $view `[` $indices `]` (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`add` $add^)? attr-dict `:` type($value) `,` type($view)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matrix multiply
//===----------------------------------------------------------------------===//

def Tile_MmaOp : Tile_Op<"mma", [Pure, AllTypesMatch<["acc", "result"]>,
                                 AllElementTypesMatch<["lhs", "rhs"]>]> {
  let summary = "Matrix multiply-accumulate of tiles in f32";
  let description = [{
    `result = lhs * rhs + acc`, with `lhs` of shape MxK and `rhs` of shape
    KxN, both f16 or both bf16, and an f32 accumulator of shape MxN. Products
    and sums are taken in f32, as the matrix units do.

    Example:

    ```mlir
    %s = tile.mma %q, %kt, %zero
        : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Tile_MmaInputTile2D:$lhs, Tile_MmaInputTile2D:$rhs,
                       Tile_F32Tile2D:$acc);
  let results = (outs Tile_F32Tile2D:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions, broadcasts, iota
//===----------------------------------------------------------------------===//

def Tile_ReduceOp : Tile_Op<"reduce", [Pure,
    AllElementTypesMatch<["input", "result"]>]> {
  let summary = "Reduce a tile along one axis";
  let description = [{
    Combines the elements along `axis` with `max`, `min` or `sum`; the result
    has that axis removed. A rank-1 tile reduces to a scalar of its element
    type. A `max` over a row of `-inf` is `-inf`; NaN propagates.

    Example:

    ```mlir
    %row_max = tile.reduce max %s along 1
        : tensor<128x64xf32> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Tile_FloatTile:$input, Tile_ReduceKind:$kind,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs AnyTypeOf<[Tile_FloatTile, F16, BF16, F32]>:$result);
  let assemblyFormat = [{
    $kind $input `along` $axis attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure,
    AllElementTypesMatch<["input", "result"]>]> {
  let summary = "Expand a tile with a new axis, repeating its elements";
  let description = [{
    Inserts dimension `axis` into the shape and copies each element along
    it. This is the inverse shape of `tile.reduce` and is how a per-row value
    meets a whole tile.

    Example:

    ```mlir
    %m_b = tile.broadcast %row_max along 1
        : tensor<128xf32> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Tile_AnyTile:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs Tile_AnyTile:$result);
  let assemblyFormat = [{
    $input `along` $axis attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_IotaOp : Tile_Op<"iota", [Pure, AttrSizedOperandSegments]> {
  let summary = "Positions: an offset plus the index along one dimension";
  let description = [{
    The element at index `(i0, ..., i_{r-1})` of the result is `offset +
    i_dim`: with no `dim` and no `offset`, the sequence 0, 1, ..., N-1 of a
    rank-1 tile. Over a score tile (rank 2), `dim 0` with the block's first
    query as the offset gives each element's query index and `dim 1` with
    the block's first key its key index, in whatever register layout the
    scores take: this is how a score or mask function sees positions
    (ALiBi's `slope * (key - query)`, document and prefix masks). The
    offset is an `index`; integer positions wrap at the element type's
    width (i32 or i64), as a register of that type does. f32 positions are
    the i32 ones as floats, exact below 2^24 (16M): a GPU converts a
    block's first position once and adds each register's constant offset,
    instead of converting every position (`tile-fold-score-terms` with
    `float-positions` turns a score function's `arith.sitofp` of positions
    into them).

    f32 positions may take a `step`: the element is then the position times
    the step, within an ulp of the product (the host rounds it as
    `fma(i_dim, step, offset * step)`). A GPU multiplies a thread's first
    position by the step once and does one multiply-add per register, where
    a product of positions and a scalar took an add and a multiply
    (`tile-fold-score-terms` with `float-positions` turns ALiBi's `slope *
    kv_idx` into one).

    ```mlir
    %cols = tile.iota : tensor<64xi32>
    // The query and key index of every element of a 64x32 score block.
    %q_idx = tile.iota dim 0 offset(%q_row0) : tensor<64x32xi32>
    %kv_idx = tile.iota dim 1 offset(%k_col0) : tensor<64x32xi32>
    %kv_pos = tile.iota offset(%k_col0) : tensor<32xf32>
    // slope * kv_idx of each key of the block.
    %kv_term = tile.iota offset(%k_col0) step(%slope) : tensor<32xf32>
    ```
  }];
  let arguments = (ins Optional<Index>:$offset,
                       DefaultValuedAttr<I64Attr, "0">:$dim,
                       Optional<F32>:$step);
  let results = (outs Tile_PositionTile:$result);
  let assemblyFormat = [{
    (`dim` $dim^)? (`offset` `(` $offset^ `)`)? (`step` `(` $step^ `)`)?
    attr-dict `:` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$type, "::mlir::Value":$offset,
                   "::mlir::IntegerAttr":$dim), [{
      build($_builder, $_state, type, offset, dim, ::mlir::Value());
    }]>,
    OpBuilder<(ins "::mlir::Type":$type, "::mlir::Value":$offset,
                   "int64_t":$dim), [{
      build($_builder, $_state, type, offset,
            $_builder.getI64IntegerAttr(dim), ::mlir::Value());
    }]>,
  ];
  let hasVerifier = 1;
}

def Tile_GatherOp : Tile_Op<"gather"> {
  let summary = "Read a view at the positions a tile of indices gives";
  let description = [{
    Element `e` of the result is the view's element at `(i_0[e], ...,
    i_{R-1}[e])`, one index per dimension of the view: an `index` (the same
    for every element) or an i32 tile of the result's shape (an index per
    element). An element whose indices fall outside the view's run-time
    sizes reads as `pad`. This is how a score or mask function reads its
    captured inputs at a block's positions: a per-token vector at the
    block's rows or keys, a bias tensor at every (query, key), a table at
    a relative position.

    `in_bounds` promises that every element's indices lie inside the view's
    run-time sizes, so nothing is padded and the GPU lowering checks no
    bounds (the backward's unmasked steps read their rows' log-sum-exps
    this way); the host executor reports a gather that breaks the promise
    as an error.

    Example:

    ```mlir
    // The document id of each of the 64 keys of block %j of batch %b.
    %kv = tile.iota offset(%k_col0) : tensor<64xi32>
    %doc_k = tile.gather %doc_ids[%b, %kv] pad(-1.0)
        : !tile.view<?x?xi32>, index, tensor<64xi32> -> tensor<64xi32>
    ```
  }];
  let arguments = (ins
    Arg<Tile_ViewType, "the view to read", [MemRead]>:$view,
    Variadic<AnyTypeOf<[Index, Tile_TileOf<[I32], "i32">]>>:$indices,
    DefaultValuedAttr<F64Attr, "0.0">:$pad,
    UnitAttr:$in_bounds
  );
  let results = (outs Tile_TileOf<[I32, I8, F16, BF16, F32], "i32, i8, f16, bf16 or f32">:$result);
  let assemblyFormat = [{
    $view `[` $indices `]` `pad` `(` $pad `)` (`in_bounds` $in_bounds^)?
    attr-dict `:` type($view) `,`
    type($indices) `->` type($result)
  }];
  let builders = [
    // A gather that checks its bounds.
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$view,
                   "::mlir::ValueRange":$indices, "::mlir::FloatAttr":$pad), [{
      build($_builder, $_state, result, view, indices, pad,
            ::mlir::UnitAttr());
    }]>
  ];
  let hasVerifier = 1;
}

def Tile_ApplyOp : Tile_Op<"apply", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A function of (score, batch, head, query, key) over a score block";
  let description = [{
    Applies a scalar function to every element of a `block_m x block_n`
    score block: element `(i, j)` of the result is

    ```
    @f(score[i, j], batch, head, q_start + i, kv_start + j, captures...)
    ```

    a score function (FlexAttention's `score_mod`: an f32 score in, an f32
    score out), or, without `score`, a mask function (`mask_mod`: an i1 out,
    true where the query sees the key). With `transposed`, the block holds
    keys as rows (the backward pass's `Sᵀ`): element `(i, j)` is
    `@f(score[i, j], batch, head, q_start + j, kv_start + i, captures...)`. The function is a `func.func` of the
    module written on scalars: the score an f32, the four positions
    `index`es, the captures as the kernel has them (views read with
    `tile.read`, scalars); its body uses `arith` and `math` ops, `tile.read`
    and `tile.dim`. `tile-vectorize-apply` replaces the op by the function's
    body written on tiles, which every family lowers; the host executor runs
    the op as written, one element at a time.

    Example:

    ```mlir
    // ALiBi: score + slopes[h] * (kv - q).
    %s2 = tile.apply @alibi score(%s : tensor<128x64xf32>) at(%b, %h, %q0, %k0)
        captures(%slopes : !tile.view<?xf32>) : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins
    FlatSymbolRefAttr:$callee,
    Optional<Tile_F32Tile2D>:$score,
    Index:$batch, Index:$head, Index:$q_start, Index:$kv_start,
    Variadic<AnyType>:$captures,
    UnitAttr:$transposed
  );
  let results = (outs Tile_TileOf<[F32, I1], "f32 or i1">:$result);
  let assemblyFormat = [{
    $callee (`score` `(` $score^ `:` type($score) `)`)? `at` `(` $batch `,` $head `,`
    $q_start `,` $kv_start `)` (`captures` `(` $captures^ `:`
    type($captures) `)`)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

def Tile_BoundsMaskOp : Tile_Op<"bounds_mask", [Pure, AttrSizedOperandSegments]> {
  let summary = "Which elements of a tile lie inside given limits";
  let description = [{
    For a tile placed at element `offsets`, element `(i0, i1, ...)` is true
    when `offsets[d] + i_d < limits[d]` in every dimension d.

    Example:

    ```mlir
    // Keys past S_k are out of bounds.
    %in = tile.bounds_mask offsets(%c0, %k0) limits(%big, %seq_k)
        : tensor<128x64xi1>
    ```
  }];
  let arguments = (ins Variadic<Index>:$offsets, Variadic<Index>:$limits);
  let results = (outs Tile_MaskTile:$result);
  let assemblyFormat = [{
    `offsets` `(` $offsets `)` `limits` `(` $limits `)` attr-dict `:`
    type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_CausalMaskOp : Tile_Op<"causal_mask", [Pure]> {
  let summary = "Which scores a causal query may see";
  let description = [{
    For a score tile whose first row is query `row_offset` and whose first
    column is key `col_offset`, element `(i, j)` is true when
    `col_offset + j <= row_offset + i`.

    Top-left alignment (PyTorch's `is_causal`) passes the query's position;
    bottom-right alignment adds `S_k - S_q` to it.

    Example:

    ```mlir
    %vis = tile.causal_mask %q0, %k0 : tensor<128x64xi1>
    ```
  }];
  let arguments = (ins Index:$row_offset, Index:$col_offset);
  let results = (outs Tile_MaskTile:$result);
  let assemblyFormat = [{
    $row_offset `,` $col_offset attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_WindowMaskOp : Tile_Op<"window_mask", [Pure]> {
  let summary = "Which scores lie in a band of diagonals";
  let description = [{
    For a score tile whose first row is query `row_offset` and whose first
    column is key `col_offset`, element `(i, j)` is true when the key's
    diagonal `(col_offset + j) - (row_offset + i)` lies in `[lo, hi]`.

    A sliding window of FlashAttention's `window_size = (left, right)` is
    the band `[-left, right]` (shifted by `S_k - S_q` for bottom-right
    alignment); a causal mask is the band `(-inf, 0]`, which
    `tile.causal_mask` computes with one comparison.

    Example:

    ```mlir
    // Query i sees keys i - 4096 .. i.
    %vis = tile.window_mask %q0, %k0 diagonals(%lo, %hi) : tensor<128x64xi1>
    ```
  }];
  let arguments = (ins Index:$row_offset, Index:$col_offset, Index:$lo,
                       Index:$hi);
  let results = (outs Tile_MaskTile:$result);
  let assemblyFormat = [{
    $row_offset `,` $col_offset `diagonals` `(` $lo `,` $hi `)` attr-dict `:`
    type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Online softmax
//===----------------------------------------------------------------------===//

def Tile_OnlineSoftmaxOp : Tile_Op<"online_softmax", [Pure,
    AllTypesMatch<["scores", "probs"]>,
    AllTypesMatch<["running_max", "running_sum", "new_max", "new_sum",
                   "alpha"]>]> {
  let summary = "One step of the streaming softmax over a block of scores";
  let description = [{
    Folds a new MxN block of raw scores into the running row statistics of
    FlashAttention's online softmax. With `x = scores * scale`:

    - `new_max = max(running_max, rowmax(x))`
    - `probs = exp(x - new_max)` (broadcast along rows)
    - `alpha = exp(running_max - new_max)`: the factor that rescales the
      accumulator and the running sum
    - `new_sum = running_sum * alpha + rowsum(probs)`

    Masked scores are `-inf`. A row that has seen only `-inf` keeps
    `new_max = -inf`, and gets `probs = 0` and `alpha = 0`, never NaN.

    Two schedule variants (set by `tile-exp2` and `tile-lazy-rescale`):

    - `exp2`: the maxima are kept on the unscaled scores and, with
      `c = scale * log2(e)`, `probs = exp2(scores * c - new_max * c)` (one
      fused multiply-add) and `alpha = exp2((running_max - new_max) * c)`.
      The results are the same up to rounding, provided `scale > 0`.
    - `lazy_rescale(T)`: a row's max moves only when the new block would
      otherwise make a probability exceed `2^T`; otherwise `new_max =
      running_max` and `alpha = 1`. Probabilities may then reach `2^T`, and
      the final `acc / l` is unchanged up to rounding.

    `tile-decompose-online-softmax` rewrites it into reductions, broadcasts
    and elementwise math.

    Example:

    ```mlir
    %m1, %l1, %p, %alpha = tile.online_softmax %s, %m0, %l0 scale(%scale)
        : tensor<128x64xf32>, tensor<128xf32>
    ```
  }];
  let arguments = (ins Tile_F32Tile:$scores, Tile_F32Tile:$running_max,
                       Tile_F32Tile:$running_sum, F32:$scale, UnitAttr:$exp2,
                       OptionalAttr<F64Attr>:$rescale_threshold);
  let results = (outs Tile_F32Tile:$new_max, Tile_F32Tile:$new_sum,
                      Tile_F32Tile:$probs, Tile_F32Tile:$alpha);
  let assemblyFormat = [{
    $scores `,` $running_max `,` $running_sum `scale` `(` $scale `)`
    (`exp2` $exp2^)? (`lazy_rescale` `(` $rescale_threshold^ `)`)?
    attr-dict `:` type($scores) `,` type($running_max)
  }];
  let hasVerifier = 1;
}

def Tile_LogSumExpOp : Tile_Op<"log_sum_exp", [Pure,
    AllTypesMatch<["max", "sum", "result"]>]> {
  let summary = "The log-sum-exp of rows from an online softmax's final statistics";
  let description = [{
    The natural log of each row's `sum_j exp(scale * s_j)`, from the
    running max and sum that a chain of `tile.online_softmax` steps ends
    with: `max + log(sum)`, or with `exp2` (the chain's maxima kept on
    unscaled scores, set by `tile-exp2` with the chain's steps)
    `max * scale + log(sum)`. Whatever a lazy rescale left the max at, the
    sum is relative to it, so the result is the same. A row that saw no key
    (`max = -inf`, `sum = 0`) gets `-inf`. This is the float32 log-sum-exp
    that split-KV decoding and ring attention merge partial outputs with.
    `tile-decompose-online-softmax` rewrites it into elementwise math.

    Example:

    ```mlir
    %lse = tile.log_sum_exp %m, %l scale(%scale) : tensor<128xf32>
    ```
  }];
  let arguments = (ins Tile_F32Tile:$max, Tile_F32Tile:$sum, F32:$scale,
                       UnitAttr:$exp2);
  let results = (outs Tile_F32Tile:$result);
  let assemblyFormat = [{
    $max `,` $sum `scale` `(` $scale `)` (`exp2` $exp2^)? attr-dict `:`
    type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

def Tile_TransposeOp : Tile_Op<"transpose", [Pure,
    AllElementTypesMatch<["input", "result"]>]> {
  let summary = "Swap the two axes of a rank-2 tile";
  let description = [{
    `result[i, j] = input[j, i]`. The backward pass computes the scores
    transposed (a key block's rows against the query block's columns), so
    that Pᵀ and dSᵀ are the left operands of dV's and dK's products, and
    transposes dSᵀ for dQ = dS K. On a GPU a transpose of registers goes
    through shared memory.

    Example:

    ```mlir
    %ds = tile.transpose %dst : tensor<64x128xbf16> -> tensor<128x64xbf16>
    ```
  }];
  let arguments = (ins Tile_AnyTile:$input);
  let results = (outs Tile_AnyTile:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ConvertLayoutOp : Tile_Op<"convert_layout", [Pure,
    AllShapesMatch<["input", "result"]>,
    AllElementTypesMatch<["input", "result"]>]> {
  let summary = "Move a tile to another thread layout";
  let description = [{
    The same tile, spread over the threads another way (its tensor
    encoding: a register layout of the GPU level, such as
    `#tilegpu.mma_sync`). `tilegpu-assign-layouts` inserts it where a value
    feeds an op that needs a different layout, such as the probabilities P
    going from the accumulator of one `mma` to the A operand of the next;
    lowering turns it into register moves, or nothing when the registers
    already agree.

    Example:

    ```mlir
    %pa = tile.convert_layout %p : tensor<64x64xf16, #tilegpu.mma_sync<acc, warps = 4>>
        -> tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>
    ```
  }];
  let arguments = (ins Tile_AnyTile:$input);
  let results = (outs Tile_AnyTile:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

#endif // TILED_ATTN_DIALECT_TILE_IR_TILEOPS_TD
