//===- TileGPUOps.td - Ops of the tilegpu dialect ----------*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUOPS_TD
#define TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUOPS_TD

include "tiled_attn/Dialect/TileGPU/IR/TileGPUTypes.td"
include "tiled_attn/Dialect/Tile/IR/TileAttrs.td"
include "tiled_attn/Dialect/Tile/IR/TileTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"

class TileGPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<TileGPU_Dialect, mnemonic, traits>;

/// Shared (and tensor) memory, as a resource of side effects: the ops that
/// read and write buffers say so, and passes that move barriers and waits
/// ask for these effects.
def TileGPU_SharedMemory : Resource<"::tiled_attn::tilegpu::SharedMemoryResource">;

def TileGPU_SharedBuffer : Type<
    CPred<"::llvm::isa<::tiled_attn::tilegpu::BufferType>($_self) && "
          "::llvm::cast<::tiled_attn::tilegpu::BufferType>($_self)"
          ".getMemorySpace() == ::tiled_attn::tilegpu::MemorySpace::Shared">,
    "a buffer in shared memory", "::tiled_attn::tilegpu::BufferType">;
def TileGPU_AnyBuffer : Type<
    CPred<"::llvm::isa<::tiled_attn::tilegpu::BufferType>($_self)">,
    "a buffer", "::tiled_attn::tilegpu::BufferType">;
def TileGPU_TensorMemoryBuffer : Type<
    CPred<"::llvm::isa<::tiled_attn::tilegpu::BufferType>($_self) && "
          "::llvm::cast<::tiled_attn::tilegpu::BufferType>($_self)"
          ".getMemorySpace() == ::tiled_attn::tilegpu::MemorySpace::Tensor">,
    "a buffer in tensor memory", "::tiled_attn::tilegpu::BufferType">;
def TileGPU_RegisterTile : Type<
    CPred<"::llvm::isa<::mlir::RankedTensorType>($_self) && "
          "::llvm::isa_and_nonnull<"
          "::tiled_attn::tilegpu::DistributedLayoutAttrInterface>("
          "::llvm::cast<::mlir::RankedTensorType>($_self).getEncoding())">,
    "a tile in a distributed (register) layout", "::mlir::RankedTensorType">;

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def TileGPU_AllocOp : TileGPU_Op<"alloc",
    [MemoryEffects<[MemAlloc<TileGPU_SharedMemory>]>]> {
  let summary = "A buffer in shared or tensor memory";
  let description = [{
    Reserves a buffer (a tile, a ring of tiles, or mbarriers) in the memory
    its type's encoding names. `offset` (bytes of dynamic shared memory, or
    the first tensor-memory column) is set by `tilegpu-allocate-memory`,
    which overlaps buffers whose lives do not; the GPU lowering needs it.

    Example:

    ```mlir
    %ring = tilegpu.alloc offset(9216) : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
    ```
  }];
  let arguments = (ins OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$offset);
  let results = (outs TileGPU_AnyBuffer:$buffer);
  let assemblyFormat = "(`offset` `(` $offset^ `)`)? attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def TileGPU_SlotOp : TileGPU_Op<"slot", [Pure]> {
  let summary = "One tile of a ring of buffers";
  let description = [{
    Slot `index` (0 <= index < slots) of the ring `ring`, which must come
    straight from a `tilegpu.alloc`: a buffer of one tile at
    `index * getTileSize()` from the ring's start.

    Example:

    ```mlir
    %s = tilegpu.slot %ring[%i] : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
        -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    ```
  }];
  let arguments = (ins TileGPU_AnyBuffer:$ring, Index:$index);
  let results = (outs TileGPU_AnyBuffer:$result);
  let assemblyFormat = [{
    $ring `[` $index `]` attr-dict `:` type($ring) `->` type($result)
  }];
  let builders = [OpBuilder<(ins "::mlir::Value":$ring, "::mlir::Value":$index)>];
  let hasVerifier = 1;
}

def TileGPU_TransposeViewOp : TileGPU_Op<"transpose_view", [Pure]> {
  let summary = "The transpose of a shared tile, read from the same bytes";
  let description = [{
    The tile `source` holds, transposed: the same shared memory (its stored
    rows unchanged), its shape swapped and its encoding's `transposed` flag
    flipped, so that both name the same stored shape. No data moves: an mma
    that reads the result reads the source's rows the other way. A block
    that a kernel needs both ways (the backward's Q for Sᵀ = K Qᵀ and
    dK += dSᵀ Q) is copied once.
    `tilegpu-allocate-memory` sees its uses as the source's. Padded
    buffers (mma.sync: ldmatrix with or without `.trans`) and swizzled
    panels (wgmma: the same panels through a K-major descriptor one way and
    an N-major one the other); pad and swizzle are kept.

    Example:

    ```mlir
    %qt = tilegpu.transpose_view %q : !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8>>
        -> !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
    ```
  }];
  let arguments = (ins TileGPU_SharedBuffer:$source);
  let results = (outs TileGPU_SharedBuffer:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def TileGPU_AsyncCopyOp : TileGPU_Op<"async_copy", [AttrSizedOperandSegments,
    TypesMatchWith<"the result is the destination buffer", "dst", "result", "$_self">,
    MemoryEffects<[MemRead, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Copy a block of a view into a shared buffer, asynchronously";
  let description = [{
    Every thread of the CTA issues its share of the copy of the block at
    tile indices `indices` of `view` (the block has the buffer's stored
    shape: a `transposed` buffer holds the block Kᵀ is read from) into
    `dst`, as one cp.async group; elements outside the view read as zero,
    unless `in_bounds` promises that the block lies inside it. Nobody waits
    here: the result is the buffer with its copy in flight, and readers wait
    for it with `tilegpu.async_wait`.

    With `gather`, the block's stored rows come in as many equal groups as
    there are gather indices, group g read with the first index replaced by
    gather index g and the row index counting groups (tile.load's gather).

    Example:

    ```mlir
    %k = tilegpu.async_copy %kview[%b, %h, %j, %c0] into %slot in_bounds
        : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
    ```
  }];
  let arguments = (ins Tile_ViewType:$view, Variadic<Index>:$indices,
                       Variadic<Index>:$gather,
                       TileGPU_SharedBuffer:$dst, UnitAttr:$in_bounds);
  let results = (outs TileGPU_SharedBuffer:$result);
  let assemblyFormat = [{
    $view `[` $indices `]` (`gather` `(` $gather^ `)`)? `into` $dst
    (`in_bounds` $in_bounds^)? attr-dict `:` type($view) `,` type($dst)
  }];
  let hasVerifier = 1;
}

def TileGPU_AsyncWaitOp : TileGPU_Op<"async_wait", [
    TypesMatchWith<"the result is the awaited buffer", "copy", "result", "$_self">,
    MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Wait until this thread's copy into a buffer has landed";
  let description = [{
    Waits for this thread's part of the copy that produced `copy` (traced
    through loops to every `tilegpu.async_copy` it may come from); the
    result is the same buffer, ready for this thread (a `gpu.barrier` makes
    every thread's part visible to all). `pending`, set by
    `tilegpu-resolve-async-waits`, is the number of copy groups issued
    after that copy which may stay in flight (cp.async.wait_group's
    operand); the lowering needs it.

    Example:

    ```mlir
    %kr = tilegpu.async_wait %k pending(1) : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    ```
  }];
  let arguments = (ins TileGPU_SharedBuffer:$copy,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$pending);
  let results = (outs TileGPU_SharedBuffer:$result);
  let assemblyFormat = [{
    $copy (`pending` `(` $pending^ `)`)? attr-dict `:` type($copy)
  }];
}

def TileGPU_AsyncWaitAllOp : TileGPU_Op<"async_wait_all", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Wait until every copy this thread issued has landed";
  let description = [{
    Before a buffer is reused while copies nobody waits for may still write
    into it (a pipelined loop's last refills; a staging buffer over the
    loads' buffers).

    Example:

    ```mlir
    tilegpu.async_wait_all
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def TileGPU_LocalLoadOp : TileGPU_Op<"local_load",
    [MemoryEffects<[MemRead<TileGPU_SharedMemory>]>]> {
  let summary = "Read a shared tile into registers, in a distributed layout";
  let description = [{
    Each thread reads the elements the result's layout gives it (for
    `#tilegpu.mma_sync<opa>`, ldmatrix.x4 per 16x16 piece; for a
    `#tilegpu.tmem_lanes<rows>` vector, its row's element).

    Example:

    ```mlir
    %q = tilegpu.local_load %qbuf : !tilegpu.buffer<128x128xf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x128xf16, #tilegpu.mma_sync<opa, warps = 4>>
    %alpha = tilegpu.local_load %factors : !tilegpu.buffer<256xf32, #tilegpu.shared<>>
        -> tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>
    ```
  }];
  let arguments = (ins TileGPU_SharedBuffer:$buffer);
  let results = (outs TileGPU_RegisterTile:$result);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer) `->` type($result)";
  let hasVerifier = 1;
}

def TileGPU_LocalStoreOp : TileGPU_Op<"local_store",
    [MemoryEffects<[MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Write a register tile into a shared buffer, in a distributed layout";
  let description = [{
    The inverse of `tilegpu.local_load`: each thread writes the elements
    its layout gives it; an element that several threads hold is written
    by one of them. The layouts: `#tilegpu.tmem_lanes<rows>` vectors into
    a one-dimensional buffer (row r's element at r: the row factors that
    the softmax warps of a tcgen05 kernel hand to its correction warps),
    and accumulators (quad fragments of mma.sync and wgmma, or
    `#tilegpu.tmem_lanes<acc>`, which takes swizzled panels only) into a
    two-dimensional buffer as its stored matrix: the tile, or with a
    transposed encoding the tile's transpose (the backward's dSᵀ, written
    as its rows for a product that reads dS). Other threads may read the
    buffer only after synchronizing with the writers (a barrier, or an
    mbarrier they arrive on after the store).

    Example:

    ```mlir
    tilegpu.local_store %alpha, %factors : tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>,
        !tilegpu.buffer<256xf32, #tilegpu.shared<>>
    ```
  }];
  let arguments = (ins TileGPU_RegisterTile:$value, TileGPU_SharedBuffer:$buffer);
  let assemblyFormat = "$value `,` $buffer attr-dict `:` type($value) `,` type($buffer)";
  let hasVerifier = 1;
}

def TileGPU_MmaOp : TileGPU_Op<"mma", [AllTypesMatch<["acc", "result"]>,
    MemoryEffects<[MemRead<TileGPU_SharedMemory>]>]> {
  let summary = "acc + lhs · rhs on the matrix units, operands in registers or shared memory";
  let description = [{
    `lhs` (M x K) is a register tile in the family's A-operand layout or a
    shared buffer; `rhs` (K x N) is a shared buffer (a `transposed` one
    holds rhsᵀ, as K does for Kᵀ); `acc` (M x N, f32) is in the family's
    accumulator layout. The layout of `acc` names the family, whose
    patterns lower it (mma.sync: ldmatrix of the B fragments and one
    m16n8k16 per m- and n-tile).

    On the wgmma family the product is asynchronous: the op issues it and
    commits it as one group, and its result may be read only through a
    `tilegpu.mma_wait`.

    Example:

    ```mlir
    %s = tilegpu.mma %q, %k, %zero
        : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
          !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
          -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
    ```
  }];
  let arguments = (ins AnyTypeOf<[TileGPU_RegisterTile, TileGPU_SharedBuffer]>:$lhs,
                       TileGPU_SharedBuffer:$rhs, TileGPU_RegisterTile:$acc);
  let results = (outs TileGPU_RegisterTile:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileGPU_MmaWaitOp : TileGPU_Op<"mma_wait", [
    AllTypesMatch<["acc", "result"]>,
    MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Wait until an asynchronous mma has finished";
  let description = [{
    A wgmma `tilegpu.mma` runs while the threads go on: its accumulator,
    the registers of a register A operand and its shared operands stay in
    use until this op, whose result is the finished accumulator.
    `convert-tile-to-tilegpu` places it before the first op that reads the
    result, or earlier where a value that takes an operand's place on the
    loop's back edge is defined. `pending`, set by
    `tilegpu-resolve-async-waits`, is the number of mma groups issued after
    this one that may stay in flight (`wgmma.wait_group`'s operand); the
    lowering needs it.

    Example:

    ```mlir
    %s = tilegpu.mma %q, %k, %zero : ... -> tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
    %o = tilegpu.mma %p, %v, %o0 : ... -> tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
    %sr = tilegpu.mma_wait %s pending(1) : tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
    ```
  }];
  let arguments = (ins TileGPU_RegisterTile:$acc,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$pending);
  let results = (outs TileGPU_RegisterTile:$result);
  let assemblyFormat = [{
    $acc (`pending` `(` $pending^ `)`)? attr-dict `:` type($acc)
  }];
  let hasVerifier = 1;
}

def TileGPU_StagedStoreOp : TileGPU_Op<"staged_store", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>, MemWrite]>]> {
  let summary = "Store a register tile through a shared staging buffer";
  let description = [{
    Each thread writes its elements of `value` into `staging`, then the
    threads copy rows out to the block at `indices` of `view` in 16-byte
    pieces, each within the view's bounds: coalesced 128-bit stores instead
    of one narrow store per register pair. The value's layout says which
    threads read back which rows (for mma.sync, each warp its own, so a
    warp barrier orders the two phases). The caller orders the staging
    buffer against its other users (`tilegpu.async_wait_all`,
    `gpu.barrier`).

    Example:

    ```mlir
    tilegpu.staged_store %o, %oview[%b, %h, %i, %c0] through %stage
        : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>, !tile.view<?x?x?x64xf16>,
          !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
    ```
  }];
  let arguments = (ins TileGPU_RegisterTile:$value, Tile_ViewType:$view,
                       Variadic<Index>:$indices, TileGPU_SharedBuffer:$staging);
  let assemblyFormat = [{
    $value `,` $view `[` $indices `]` `through` $staging attr-dict `:`
    type($value) `,` type($view) `,` type($staging)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions across the program
//===----------------------------------------------------------------------===//

def TileGPU_CtaReduceOp : TileGPU_Op<"cta_reduce", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Reduce a register tile to one value every thread holds";
  let description = [{
    Combines every element of `input` with `max`, `min` or `sum` (`tile.reduce`
    of a rank-1 tile to a scalar, at the GPU level). The input's layout says
    who holds what (`getReductionSpread`): each thread combines its own
    registers, the lanes of a warp that hold different elements combine by
    xor shuffles (lanes that hold copies are left out, so a sum counts each
    element once), and warps that hold different elements combine through
    `scratch`, one element per warp, written between two barriers of the
    threads that run the op and read back by every thread in warp order. A
    layout whose warps all hold the same elements needs no `scratch`; one
    whose warps hold different ones must have it. Every thread that runs the
    op must reach it (its barriers are the program's, or its warp role's).

    Example:

    ```mlir
    %any = tilegpu.cta_reduce max %rows through %scratch
        : tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>,
          !tilegpu.buffer<1x8xf32, #tilegpu.shared<>> -> f32
    ```
  }];
  let arguments = (ins TileGPU_RegisterTile:$input, Tile_ReduceKind:$kind,
                       Optional<TileGPU_SharedBuffer>:$scratch);
  let results = (outs F32:$result);
  let assemblyFormat = [{
    $kind $input (`through` $scratch^)? attr-dict `:` type($input)
    (`,` type($scratch)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// mbarriers (TMA pipelines)
//===----------------------------------------------------------------------===//

def TileGPU_MBarrierInitOp : TileGPU_Op<"mbarrier_init",
    [MemoryEffects<[MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Initialize mbarrier `index` of a group to expect `count` arrivals";
  let description = [{
    Example:

    ```mlir
    tilegpu.mbarrier_init %bars[%c0], count(1) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    ```
  }];
  let arguments = (ins TileGPU_SharedBuffer:$barriers, Index:$index,
                       ConfinedAttr<I64Attr, [IntPositive]>:$count);
  let assemblyFormat = [{
    $barriers `[` $index `]` `,` `count` `(` $count `)` attr-dict `:` type($barriers)
  }];
  let hasVerifier = 1;
}

def TileGPU_MBarrierArriveExpectTxOp : TileGPU_Op<"mbarrier_arrive_expect_tx",
    [MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Arrive on an mbarrier and expect `bytes` of TMA transactions";
  let description = [{
    The phase completes when every expected arrival has come and `bytes`
    bytes of the asynchronous copies that signal it have landed.

    Example:

    ```mlir
    tilegpu.mbarrier_arrive_expect_tx %bars[%s], bytes(16384) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    ```
  }];
  let arguments = (ins TileGPU_SharedBuffer:$barriers, Index:$index,
                       ConfinedAttr<I64Attr, [IntPositive]>:$bytes);
  let assemblyFormat = [{
    $barriers `[` $index `]` `,` `bytes` `(` $bytes `)` attr-dict `:` type($barriers)
  }];
  let hasVerifier = 1;
}

def TileGPU_MBarrierWaitOp : TileGPU_Op<"mbarrier_wait",
    [MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Wait until the phase `phase` (0 or 1) of an mbarrier has completed";
  let description = [{
    Example:

    ```mlir
    tilegpu.mbarrier_wait %bars[%s], phase(%p) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    ```
  }];
  let arguments = (ins TileGPU_SharedBuffer:$barriers, Index:$index, I1:$phase);
  let assemblyFormat = [{
    $barriers `[` $index `]` `,` `phase` `(` $phase `)` attr-dict `:` type($barriers)
  }];
  let hasVerifier = 1;
}

def TileGPU_MBarrierArriveOp : TileGPU_Op<"mbarrier_arrive",
    [MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Each warp arrives once on an mbarrier: it is done with a buffer";
  let description = [{
    Releases a buffer the warps have read: each warp, once its threads are
    all here, arrives once on mbarrier `index` of `barriers` (with release
    semantics, so that its reads are ordered before whatever the waiter
    does next). Asynchronous readers must have been waited for first (a
    wgmma's `tilegpu.mma_wait`). The "empty" mbarrier of a TMA ring's slot
    expects one arrival per warp that reads the slot; the producer waits on
    it before refilling the slot.

    Each warp's first lane arrives, after the warp's threads sync. With
    `predicated`, that lane's arrive is one instruction predicated on the
    lane, not a branch around it: the block goes on unsplit, which gave the
    sm_90a plain kernels 3-6% (K's and V's releases after their wgmmas,
    H100, 2026-12-06); after a read into registers (a bias block's) it cost
    18%, and convert-tile-to-tilegpu keeps the branch there.

    Example:

    ```mlir
    tilegpu.mbarrier_arrive %empty[%s] : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_arrive %empty[%s] predicated : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    ```
  }];
  let arguments = (ins TileGPU_SharedBuffer:$barriers, Index:$index,
                       UnitAttr:$predicated);
  let assemblyFormat = [{
    $barriers `[` $index `]` (`predicated` $predicated^)? attr-dict `:` type($barriers)
  }];
  let hasVerifier = 1;
}

def TileGPU_TmaLoadOp : TileGPU_Op<"tma_load", [AttrSizedOperandSegments,
    TypesMatchWith<"the result is the destination buffer", "dst", "result", "$_self">,
    MemoryEffects<[MemRead, MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Copy a block of a view into a swizzled shared buffer with TMA";
  let description = [{
    One thread of the CTA arrives on mbarrier `index` of `barriers`,
    expecting the bytes of the whole tile, and issues one TMA copy per
    panel of `dst` through the tensor map `map`: the block at tile indices
    `indices` of the view the map describes (indices of a rank-4 view
    [B, H, S, D]; the last two count blocks of the tile's stored rows and
    columns). The copies complete the mbarrier's phase when their bytes
    have landed; what lies outside the view reads as zero. Nobody waits
    here: readers wait with `tilegpu.mbarrier_wait` on the same mbarrier.

    With `offset`, the block's rows start that many rows further into the
    view (a `tile.slice` of its sequence dimension, one sequence of a packed
    batch): rows past the slice are read from the view as they are, and
    its users mask them.

    With `gather`, the tile's stored rows come in as many equal groups as
    there are gather indices (a multiple of 8 rows each, so that each lands
    on whole swizzle atoms), and the map's box is one group's rows of a
    panel: group g is copied with the first index replaced by gather index
    g and the row index counting groups (tile.load's gather), one copy per
    group and panel.

    Example:

    ```mlir
    %k = tilegpu.tma_load %kmap[%b, %h, %j, %c0] into %slot, %bars[%s]
        : !tilegpu.tensor_map<128x64xf16, swizzle = 128>,
          !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
          !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    ```
  }];
  let arguments = (ins TileGPU_TensorMapType:$map, Variadic<Index>:$indices,
                       Variadic<Index>:$gather,
                       Optional<Index>:$row_offset,
                       TileGPU_SharedBuffer:$dst, TileGPU_SharedBuffer:$barriers,
                       Index:$index);
  let results = (outs TileGPU_SharedBuffer:$result);
  let assemblyFormat = [{
    $map `[` $indices `]` (`gather` `(` $gather^ `)`)? (`offset` `(` $row_offset^ `)`)?
    `into` $dst `,` $barriers `[` $index `]` attr-dict
    `:` type($map) `,` type($dst) `,` type($barriers)
  }];
  let hasVerifier = 1;
}

def TileGPU_TmaReduceOp : TileGPU_Op<"tma_reduce", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemRead, MemWrite]>]> {
  let summary = "Add a swizzled shared buffer's tile into a block of a view with TMA";
  let description = [{
    The first thread of the threads that run the op issues one
    `cp.reduce.async.bulk.tensor` add per panel of `src` through the
    tensor map `map` (the block at tile indices `indices` of the rank-4
    view [B, H, S, D] the map describes) and commits them as one bulk
    group: each element of the block becomes itself plus the buffer's, an
    atomic addition of the whole tile that other CTAs may make to the same
    block at the same time. What lies outside the view is not written.
    The threads must have written `src` and made the writes visible to the
    async proxy (`fence.proxy.async.shared::cta`, which a
    `tilegpu.local_store` into swizzled panels ends with) and synchronized
    first; nobody may write `src` again, nor may its memory be reused,
    before a `tilegpu.tma_reduce_wait` of it by the issuing thread says the
    reduction has read it.

    Example:

    ```mlir
    tilegpu.tma_reduce %dq into %map[%b, %h, %i, %c0]
        : !tilegpu.buffer<64x128xf32, #tilegpu.shared<swizzle = 128>>,
          !tilegpu.tensor_map<64x32xf32, swizzle = 128>
    ```
  }];
  let arguments = (ins TileGPU_SharedBuffer:$src, TileGPU_TensorMapType:$map,
                       Variadic<Index>:$indices);
  let assemblyFormat = [{
    $src `into` $map `[` $indices `]` attr-dict `:` type($src) `,` type($map)
  }];
  let hasVerifier = 1;
}

def TileGPU_TmaReduceWaitOp : TileGPU_Op<"tma_reduce_wait", [
    MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Wait for the issuing thread's TMA reductions from a buffer";
  let description = [{
    The thread that issues the `tilegpu.tma_reduce`s of the threads that
    run the op (their first) waits until every reduction it committed has
    read its shared buffer (`read`: `src` may be written again once the
    threads have synchronized after this op), or has completed. The other
    threads go on. `src` is the buffer the reductions read: it stays
    allocated (`tilegpu-allocate-memory` overlaps no other buffer with it)
    up to this op, which must come before any other use of its memory.

    Example:

    ```mlir
    tilegpu.tma_reduce_wait %dq {read} : !tilegpu.buffer<64x128xf32, #tilegpu.shared<swizzle = 128>>
    gpu.barrier
    ```
  }];
  let arguments = (ins TileGPU_SharedBuffer:$src, UnitAttr:$read);
  let assemblyFormat = "$src attr-dict `:` type($src)";
}

def TileGPU_TmemMmaOp : TileGPU_Op<"tmem_mma",
    [MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "acc (in tensor memory) = lhs · rhs (+ acc), issued by one thread";
  let description = [{
    One tcgen05.mma .kind::f16 per k-step of 16: `lhs` (M x K, f16 or bf16)
    is a shared buffer in 128-byte swizzled panels, stored as it is
    (K-major), or `transposed` (M-major: the backward's dS, written as
    dSᵀ's rows; one block of 128 rows), or a `packed` tensor-memory buffer
    (P written back over S, FlashAttention-4's P·V); `rhs` (K x N) is a shared buffer in 128-byte swizzled panels (a
    `transposed` one holds rhsᵀ, as K does for Kᵀ: K-major; otherwise it is
    N-major, as V); `acc` (M x N, f32) is a tensor-memory buffer. The first
    k-step adds to `acc` when `accumulate` is true and overwrites it
    otherwise. M is 128 (one row per tensor-memory lane) or 128 x R (R
    blocks of 128 rows, laid out side by side in tensor memory), N a
    multiple of 16 in [16, 256], K a multiple of 16.

    The first thread of the threads that run the op (of its warp role, or
    of the kernel) issues it, after a `tcgen05.fence::after_thread_sync`
    that orders it after what the threads synchronized with before (an
    mbarrier wait, a CTA barrier). With R row blocks, the threads split
    into R groups of consecutive warps, and the first thread of group r
    issues the product of row block r alone: lhs rows 128 r to 128 r + 127
    into acc's row block r (FlashAttention-4's two Q tiles, each group
    with its own). With `row_block` = r, the first thread alone issues the
    product of row block r and nothing else: FlashAttention-4's single MMA
    warp issues each Q tile's products as soon as that tile's softmax
    warpgroup is ready. The product runs asynchronously: nobody may read `acc`,
    or write the operands, until a `tilegpu.mma_commit` issued after it
    has completed its mbarrier's phase.

    Example:

    ```mlir
    tilegpu.tmem_mma %q, %k, %s, accumulate(%false)
        : !tilegpu.buffer<128x128xf16, #tilegpu.shared<swizzle = 128>>,
          !tilegpu.buffer<128x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
          !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
    tilegpu.tmem_mma %q2, %k, %s2, accumulate(%false) {row_block = 1 : i64}
        : !tilegpu.buffer<256x128xf16, #tilegpu.shared<swizzle = 128>>,
          !tilegpu.buffer<128x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
          !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
    ```
  }];
  let arguments = (ins AnyTypeOf<[TileGPU_SharedBuffer, TileGPU_TensorMemoryBuffer]>:$lhs,
                       TileGPU_SharedBuffer:$rhs, TileGPU_TensorMemoryBuffer:$acc,
                       I1:$accumulate,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$row_block);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc `,` `accumulate` `(` $accumulate `)` attr-dict `:`
    type($lhs) `,` type($rhs) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def TileGPU_MmaCommitOp : TileGPU_Op<"mma_commit",
    [MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Make an mbarrier track the completion of the issued tcgen05 products";
  let description = [{
    The thread that issues `tilegpu.tmem_mma` (the first of the threads that
    run this op) commits every tcgen05 product it issued before: when they
    have all completed, they arrive once on mbarrier `index` of `barriers`
    (tcgen05.commit), which should expect that one arrival. Readers of the
    accumulators wait on it with `tilegpu.mbarrier_wait`; a producer that
    refills the operands' buffers waits on it too. With `groups` = R, the
    threads split into R groups of consecutive warps as for a
    `tilegpu.tmem_mma` of R row blocks, and the first thread of group g
    commits the products it issued to mbarrier `index` + g. With `joint`,
    they all commit to mbarrier `index`, which should expect R arrivals:
    the release of a buffer that every group's products read (a K/V slot
    that the issuers of two Q tiles' products share).

    Example:

    ```mlir
    tilegpu.mma_commit %done[%c0] : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    tilegpu.mma_commit %done[%c0] {groups = 2} : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    tilegpu.mma_commit %empty[%slot] {groups = 2, joint} : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
    ```
  }];
  let arguments = (ins TileGPU_SharedBuffer:$barriers, Index:$index,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>, "1">:$groups,
                       UnitAttr:$joint);
  let assemblyFormat = [{
    $barriers `[` $index `]` attr-dict `:` type($barriers)
  }];
  let hasVerifier = 1;
}

def TileGPU_TmemLoadOp : TileGPU_Op<"tmem_load",
    [MemoryEffects<[MemRead<TileGPU_SharedMemory>]>]> {
  let summary = "Read a tensor-memory tile into registers, one row per thread";
  let description = [{
    Each warp reads its quadrant of lanes (`#tilegpu.tmem_lanes`: row
    32 x (warp mod 4) + lane) with tcgen05.ld .32x32b, 16 columns at a
    time, and waits for its loads (tcgen05.wait::ld) before the op ends, so
    that a later write of the buffer, once the threads have synchronized,
    cannot overtake them. It starts with a tcgen05.fence::after_thread_sync,
    which orders it after the mbarrier wait or barrier that made the
    buffer's contents visible. The result has the buffer's shape and
    element type (f32, not packed).

    Example:

    ```mlir
    %s = tilegpu.tmem_load %sbuf : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
        -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    ```
  }];
  let arguments = (ins TileGPU_TensorMemoryBuffer:$buffer);
  let results = (outs TileGPU_RegisterTile:$result);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer) `->` type($result)";
  let hasVerifier = 1;
}

def TileGPU_TmemAliasOp : TileGPU_Op<"tmem_alias", [Pure]> {
  let summary = "A tensor-memory buffer over the first columns of another's row blocks";
  let description = [{
    The result names columns of `source`: its row block r starts where the
    source's row block r starts (the two take the same rows, and with more
    than one block the same step from block to block, `block_columns`), and
    takes at most the columns of a source block. FlashAttention-4 writes P
    (packed 16-bit) over S (f32) once every thread has read its row of S,
    and the next S is issued after P·V has read P: the two buffers share
    columns, and `tilegpu-allocate-memory` places only the source (the
    alias lives as long as it). Ordering the accesses through the two is
    up to whoever writes them (convert-tile-to-tilegpu checks it for the P
    it places over S).

    Example:

    ```mlir
    %p = tilegpu.tmem_alias %s : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
        -> !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true, block_columns = 128>>
    ```
  }];
  let arguments = (ins TileGPU_TensorMemoryBuffer:$source);
  let results = (outs TileGPU_TensorMemoryBuffer:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def TileGPU_TmemStoreOp : TileGPU_Op<"tmem_store",
    [MemoryEffects<[MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Write a register tile into tensor memory, one row per thread";
  let description = [{
    The inverse of `tilegpu.tmem_load` (tcgen05.st .32x32b), for a tile in
    `#tilegpu.tmem_lanes`: f32 into an unpacked buffer, or 16-bit elements
    two to a column into a `packed` one (P over S). The op waits for its
    stores (tcgen05.wait::st) and ends with a
    tcgen05.fence::before_thread_sync, so that an mbarrier arrival or a
    barrier after it publishes the data to the thread that issues the next
    `tilegpu.tmem_mma`.

    Example:

    ```mlir
    tilegpu.tmem_store %p, %pbuf : tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 4>>,
        !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>
    ```
  }];
  let arguments = (ins TileGPU_RegisterTile:$value, TileGPU_TensorMemoryBuffer:$buffer);
  let assemblyFormat = "$value `,` $buffer attr-dict `:` type($value) `,` type($buffer)";
  let hasVerifier = 1;
}

def TileGPU_TmemScaleRowsOp : TileGPU_Op<"tmem_scale_rows",
    [MemoryEffects<[MemRead<TileGPU_SharedMemory>,
                    MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "Scale the rows of a tensor-memory accumulator in place";
  let description = [{
    The correction of FlashAttention-4: row r of the buffer is multiplied
    by `scale[r]`, which the thread of row r holds (`#tilegpu.tmem_lanes`
    `<rows>`). Each warp reads its quadrant's rows a piece of 16 columns at
    a time (tcgen05.ld), multiplies and writes them back (tcgen05.st), so
    that a piece's registers are all the op keeps live; it ends as
    `tilegpu.tmem_store` does (tcgen05.wait::st, then
    tcgen05.fence::before_thread_sync). With `convert-tilegpu-to-nvvm`'s
    `skip-unit-row-scales`, a warp whose rows all scale by exactly 1 (the
    lazy rescale's common case) skips the op: its rows are unchanged.

    Example:

    ```mlir
    tilegpu.tmem_scale_rows %o, %alpha : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>,
        tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
    ```
  }];
  let arguments = (ins TileGPU_TensorMemoryBuffer:$buffer, TileGPU_RegisterTile:$scale);
  let assemblyFormat = "$buffer `,` $scale attr-dict `:` type($buffer) `,` type($scale)";
  let hasVerifier = 1;
}

def TileGPU_TmemScaleStoreOp : TileGPU_Op<"tmem_scale_store",
    [MemoryEffects<[MemRead<TileGPU_SharedMemory>]>]> {
  let summary = "Scale the rows of a tensor-memory accumulator and store them into a view";
  let description = [{
    The epilogue of FlashAttention-4's correction warps: row r of the
    buffer (f32) is multiplied by `scale[r]`, which the thread of row r
    holds (`#tilegpu.tmem_lanes<rows>`), converted to the view's element
    type and stored as `tile.store` stores a tile at `indices` (in tiles of
    the buffer's shape; elements past the view's run-time sizes are not
    written). Each warp reads its quadrant's rows 16 columns at a time
    (tcgen05.ld), so that a piece's registers are all the op keeps live:
    no thread ever holds its whole row, which lets threads with few
    registers (the correction warps) store O.

    Example:

    ```mlir
    tilegpu.tmem_scale_store %o, %inv_l to %out[%b, %h, %m, %c0]
        : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
          tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>,
          !tile.view<?x?x?x64xbf16>
    ```
  }];
  let arguments = (ins TileGPU_TensorMemoryBuffer:$buffer,
                       TileGPU_RegisterTile:$scale,
                       Arg<Tile_ViewType, "the view to write", [MemWrite]>:$view,
                       Variadic<Index>:$indices);
  let assemblyFormat = [{
    $buffer `,` $scale `to` $view `[` $indices `]` attr-dict `:`
    type($buffer) `,` type($scale) `,` type($view)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Warp specialization
//===----------------------------------------------------------------------===//

def TileGPU_WarpSpecializeOp : TileGPU_Op<"warp_specialize", [
    RecursiveMemoryEffects, SingleBlock, NoTerminator]> {
  let summary = "Regions run by disjoint groups of warps, with register budgets";
  let description = [{
    The CTA's warps split into `roles`, in order: role i runs region i on
    its `warps` consecutive warps, first moving to its register budget
    (`setmaxnreg`, when the role gives one). The roles' warps add up to the
    kernel's; budgets apply to whole warpgroups, so a role with a budget
    has a multiple of four warps. The regions communicate through shared
    memory and mbarriers only.

    Example (FlashAttention-3's roles):

    ```mlir
    tilegpu.warp_specialize [#tilegpu.role<"producer", warps = 4, registers = 24>,
                             #tilegpu.role<"consumer", warps = 8, registers = 240>] {
      ...
    }, {
      ...
    }
    ```
  }];
  let arguments = (ins TypedArrayAttrBase<TileGPU_RoleAttr, "warp roles">:$roles);
  let regions = (region VariadicRegion<SizedRegion<1>>:$bodies);
  let assemblyFormat = "$roles $bodies attr-dict";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Groups of warps inside the threads that run an op
//===----------------------------------------------------------------------===//

def TileGPU_GroupIdOp : TileGPU_Op<"group_id", [Pure]> {
  let summary = "Which of `groups` groups of consecutive warps this thread is in";
  let description = [{
    The threads that run the op (those of its warp role, or the kernel's)
    split into `groups` groups of as many consecutive warps each; the
    result is this thread's group, from 0. The row blocks of a tcgen05
    kernel with two Q tiles per CTA are such groups: each waits on its own
    mma mbarrier.

    Example:

    ```mlir
    %g = tilegpu.group_id {groups = 2}
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntPositive]>:$groups);
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

def TileGPU_GroupBarrierOp : TileGPU_Op<"group_barrier",
    [MemoryEffects<[MemRead<TileGPU_SharedMemory>, MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = "A barrier of this thread's group of warps";
  let description = [{
    As `gpu.barrier`, for the threads of this thread's group only (the
    groups of `tilegpu.group_id`): each group has a named barrier of its
    own, after those of the warp roles, so that one group's barrier does
    not wait for the others. With one group it is the threads' barrier.

    Example:

    ```mlir
    tilegpu.group_barrier {groups = 2}
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntPositive]>:$groups);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Warpgroups taking turns (ping-pong)
//===----------------------------------------------------------------------===//

class TileGPU_TurnOp<string mnemonic, string summaryText, string descriptionText>
    : TileGPU_Op<mnemonic, [MemoryEffects<[MemRead<TileGPU_SharedMemory>,
                                           MemWrite<TileGPU_SharedMemory>]>]> {
  let summary = summaryText;
  let description = descriptionText # [{

    The warpgroups of the threads that run the op (those of its warp role,
    or the kernel's) take turns in a cycle, 0, 1, ..., N-1, 0, ...:
    FlashAttention-3's ping-pong, where one warpgroup's wgmma products run
    while the other's softmax does. `tilegpu.turn_start` lets warpgroup 0
    take the first turn, `tilegpu.turn_take` waits for this warpgroup's
    turn and `tilegpu.turn_pass` hands the turn on. Every warpgroup must
    take and pass as often as the others. With one warpgroup they do
    nothing. The lowering uses named barriers (one per warpgroup, after
    those of the warp roles).

    Example:

    ```mlir
    tilegpu.turn_start
    ...
    tilegpu.turn_take
    %s = tilegpu.mma %q, %k, %zero : ...
    %o = tilegpu.mma %p, %v, %acc : ...
    tilegpu.turn_pass
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def TileGPU_TurnStartOp : TileGPU_TurnOp<"turn_start",
    "Let the first warpgroup take the first turn",
    "The last warpgroup passes the turn once, to the first.">;
def TileGPU_TurnTakeOp : TileGPU_TurnOp<"turn_take",
    "Wait for this warpgroup's turn",
    "Waits until the previous warpgroup in the cycle has passed the turn.">;
def TileGPU_TurnPassOp : TileGPU_TurnOp<"turn_pass",
    "Hand the turn to the next warpgroup",
    "Signals the next warpgroup in the cycle, without waiting.">;

#endif // TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUOPS_TD
