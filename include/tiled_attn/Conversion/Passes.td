//===- Passes.td - Conversions between the levels -----*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_CONVERSION_PASSES_TD
#define TILED_ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileGPUAssignLayoutsPass
    : Pass<"tilegpu-assign-layouts", "::mlir::func::FuncOp"> {
  let summary = "Give every tile its register layout or shared encoding, for the target's family";
  let description = [{
    The first step to the GPU level. Every tile value gets a tensor
    encoding from the module's matrix-unit family (`#tilegpu.target`):
    for `mma_sync`, `tile.mma` fixes its A operand (`#tilegpu.mma_sync<opa>`,
    or a shared tile with `smem-lhs`), its B operand (a shared tile,
    `#tilegpu.shared<pad = 8>`, `transposed` when it is read as Kᵀ) and its
    accumulator (`acc`); row and column reductions and broadcasts give
    `rows` and `cols`; elementwise ops and loop-carried values share their
    operands' encoding. A tile of fewer rows than the warps take (16 a
    warp on mma.sync, 64 a warpgroup on wgmma) has its warps side by side
    on its columns (`column_blocks`), its row and column vectors split
    alike, unless the kernel reduces such a tile along its rows; an mma
    whose accumulator is split so reads its lhs from shared memory (a
    computed lhs through a `tile.convert_layout` to a shared encoding).
    A tile with two encodings, or none, is an error, as
    is a shape the layout cannot take. Expects a decomposed online softmax.

    ```mlir
    // After
    %s = tile.mma %q, %kt, %z : tensor<64x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
        tensor<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
        -> tensor<64x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
    ```
  }];
  let options = [
    Option<"warps", "warps", "int64_t", /*default=*/"4",
           "Warps per CTA; they split the query rows (1, 2, 4 or 8)">,
    Option<"smemLhs", "smem-lhs", "bool", /*default=*/"false",
           "Keep an mma lhs that comes straight from a tile.load (Q) in "
           "shared memory and read it with ldmatrix at every k-step, instead "
           "of holding it in registers across the loop: trades shared-memory "
           "reads for registers (FlashAttention-2's choice for 128-row "
           "blocks)">,
    Option<"tma", "tma", "bool", /*default=*/"false",
           "mma_sync family: keep the tiles the mma reads from shared memory "
           "(K, V, and Q with smem-lhs) in 128-byte swizzled panels, which "
           "convert-tile-to-tilegpu then loads by TMA through mbarriers and "
           "ldmatrix reads with the swizzle undone in its addresses "
           "(FlashAttention-4's and Triton's recipe on consumer Blackwell; "
           "needs a chip with TMA). The wgmma family always does this">,
  ];
  let dependentDialects = ["::tiled_attn::tilegpu::TileGPUDialect"];
}

def ConvertTileToTileGPUPass
    : Pass<"convert-tile-to-tilegpu", "::mlir::func::FuncOp"> {
  let summary = "Make shared memory explicit: buffers, asynchronous copies, waits and barriers";
  let description = [{
    After `tilegpu-assign-layouts`, tiles that live in shared memory become
    `!tilegpu.buffer`s:

    - a `tile.load` of a shared tile becomes a `tilegpu.async_copy` into a
      buffer; the loads of one view and block shape that a loop streams (K,
      V) share a ring of buffers, as many as the pipelined loops need (the
      blocks a loop carries, plus the refill unless it is issued after the
      last read of the block it replaces), block j in slot j mod slots;
      other loads get a buffer of their own. These `tilegpu.alloc`s go at
      the top of the kernel, a staging buffer's just before its store (so
      that `tilegpu-allocate-memory` may overlap it with the others);
    - loop-carried shared tiles become loop-carried buffers with their
      copies in flight;
    - the first reader of a buffer in a block is preceded by a
      `tilegpu.async_wait` and a `gpu.barrier`; every copy by a
      `gpu.barrier` (nobody may still read the buffer);
    - a `tile.load` of a register tile becomes copy, wait, barrier and
      `tilegpu.local_load`; `tile.mma` with a shared operand becomes
      `tilegpu.mma`;
    - with `staged-stores`, a store of a 16-bit tile whose layout allows it
      goes through a staging buffer (`tilegpu.staged_store`), after every
      copy has landed (`tilegpu.async_wait_all`) and every thread is done
      with the buffers it may overlap;
    - with `tma-reduce`, an adding store of an f32 wgmma accumulator into a
      kernel argument (not a slice of one) is written into a swizzled
      buffer of its own (`tilegpu.local_store`, between barriers, after
      `tilegpu.tma_reduce_wait {read}` of the previous one) and added to
      the block by `tilegpu.tma_reduce`; after the loop that holds the
      store, `tilegpu.tma_reduce_wait` of the buffer waits for the last one
      (so that the epilogue's buffers may reuse its memory).

    Tiles in 128-byte swizzled panels (the wgmma family's) arrive by TMA
    instead (`tilegpu.tma_load`), each signalling its slot's mbarrier, and
    readers wait on that mbarrier's phase. With `empty-barriers`, each slot
    of a TMA ring also gets an "empty" mbarrier: the readers of a block
    release its slot (`tilegpu.mbarrier_arrive`, after the wait of an
    asynchronous reader) and each refill waits for that release instead of
    a CTA barrier, which is what `tilegpu-warp-specialize` needs to hand
    the refills to a producer warp.

    tcgen05 products (`tilegpu.tmem_mma`) start after a barrier of the
    threads (of each group of warps that owns a block of 128 rows) and are
    waited for through an mma mbarrier per group. With `mma-warp`, each
    group's warps instead arrive on a "ready" mbarrier of their group and
    one thread issues: it waits for group r's readiness, issues row block r
    (`row_block = r`) and commits it to group r's mma mbarrier, group after
    group; each group waits on its own mma mbarrier. Run by all warps this
    is correct as it stands; `tilegpu-warp-specialize` with `mma-warp`
    moves the issue to an MMA warp (FlashAttention-4's).

    With `correction` (and `mma-warp`), each in-place correction of O
    (`tilegpu.tmem_scale_rows`) becomes a hand-off through shared memory:
    the group's warps write the row factors (`tilegpu.local_store`) and
    arrive on the group's "factors" mbarrier; then, as the correction
    warps will, wait for its phase (the hand-offs are counted through
    loops as the products are), read the factors back and scale O. Run by
    all warps this is correct as it stands (each thread reads back the
    row it wrote); `tilegpu-warp-specialize` with `correction` moves the
    second half to correction warps.

    Redundant barriers are left to `tilegpu-merge-barriers`, the counts of
    the waits to `tilegpu-resolve-async-waits`, offsets to
    `tilegpu-allocate-memory`.
  }];
  let options = [
    Option<"stagedStores", "staged-stores", "bool", /*default=*/"true",
           "Stage 16-bit tile stores in shared memory and write them out in "
           "16-byte row pieces (rows must be 16-byte aligned, as for loads)">,
    Option<"tmaReduce", "tma-reduce", "bool", /*default=*/"false",
           "wgmma: an adding store of an f32 accumulator into a kernel "
           "argument goes through a swizzled shared buffer and one TMA "
           "reduction (tilegpu.tma_reduce) instead of an atomic addition "
           "per element (FlashAttention-3's dQ)">,
    Option<"mergeBarriers", "merge-barriers", "bool", /*default=*/"false",
           "Leave out the barriers that another already provides: a TMA "
           "reduction's wait goes before an earlier barrier of its block, "
           "and a transpose's first barrier before its loop where its "
           "readers are waited for before a later barrier of the body">,
    Option<"shareTransposes", "share-transposes", "bool", /*default=*/"false",
           "Transposes of one type go through one shared buffer (the "
           "backward's dSt in each loop of the mask split) instead of one "
           "each: its first barrier orders every earlier reader, as it does "
           "from one iteration to the next">,
    Option<"emptyBarriers", "empty-barriers", "bool", /*default=*/"false",
           "Pace TMA refills with one 'empty' mbarrier per ring slot, which "
           "the slot's readers release, instead of a CTA barrier before "
           "each refill">,
    Option<"ringSlots", "ring-slots", "int64_t", /*default=*/"0",
           "With empty-barriers: slots per TMA ring (0: as many as the "
           "pipelined loops need when every warp runs them). Fewer than "
           "that is only for a kernel whose refills tilegpu-warp-specialize "
           "then hands to a producer warp, which waits for free slots on "
           "its own; the warps that read would otherwise wait on a refill "
           "that waits on them">,
    Option<"pOverS", "p-over-s", "bool", /*default=*/"false",
           "tcgen05: P (the packed lhs of P.V) takes no tensor memory of its "
           "own but the first columns of each row block of the S it is "
           "computed from (tilegpu.tmem_alias), FlashAttention-4's layout "
           "that fits D=128 with 128-key blocks in 512 columns; refused "
           "where S is read again after P is stored or written before P.V">,
    Option<"mmaWarp", "mma-warp", "bool", /*default=*/"false",
           "tcgen05: hand each product to one issuing thread through a "
           "'ready' mbarrier per group of warps (each group's warps arrive "
           "when its tensor memory is ready; the issuer waits, issues that "
           "group's row block and commits it to the group's mbarrier) "
           "instead of a barrier of the group, so that "
           "tilegpu-warp-specialize with mma-warp can move the issue to an "
           "MMA warp of its own (FlashAttention-4)">,
    Option<"correction", "correction", "bool", /*default=*/"false",
           "tcgen05, with mma-warp: hand each correction of O to the "
           "threads that will apply it through shared memory (the softmax "
           "writes its row factors, tilegpu.local_store, and arrives on a "
           "'factors' mbarrier of its group; the correction waits on it, "
           "reads them back and scales O in tensor memory), so that "
           "tilegpu-warp-specialize with correction can move the scaling "
           "to correction warps of their own (FlashAttention-4)">,
  ];
  let dependentDialects = [
    "::tiled_attn::tilegpu::TileGPUDialect",
    "::mlir::gpu::GPUDialect",
  ];
}

def ConvertTileGPUToNVVMPass
    : Pass<"convert-tilegpu-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lower GPU-level kernels to a gpu.module of per-thread gpu/nvgpu/nvvm code";
  let description = [{
    Each kernel `func.func` becomes a `gpu.func` in a `gpu.module`, written
    per thread with upstream dialects, by the patterns of the module's
    matrix-unit family plus the family-independent ones:

    - memory (all families): `!tile.view`s become strided memrefs (the
      kernel ABI is the memref descriptor), buffers views of dynamic shared
      memory at their offsets, `tilegpu.async_copy` 16-byte
      `nvgpu.device_async_copy`s (zero fill outside the view), waits
      `cp.async.wait_group`;
    - mma.sync: register tiles become vectors of a lane's registers;
      `tilegpu.local_load` and the B operands of `tilegpu.mma` are
      `ldmatrix`, the products `mma.sync` m16n8k16; row reductions quad
      shuffles; staged stores per-warp 16-byte row pieces;
    - elementwise math on the registers as they are; with
      `skip-unit-row-scales`, `acc * broadcast(alpha)` in a loop sits under
      a warp vote, and a warp whose rows all have alpha == 1 skips it;
      exp2 is one `ex2.approx.ftz.f32` per register (the MUFU unit), or,
      with `exp2-poly-every=N`, for every N-th register of a thread a
      polynomial on the FMA units (FlashAttention-4's exp2 emulation):
      2^x = 2^floor(x) * p(x - floor(x)), p of degree 3 (relative error
      below 9e-5; results below 2^-126 flushed to zero, as ftz does).

    The kernel records its block size (`known_block_size`) and keeps its
    `tilegpu.shared_bytes`.
  }];
  let options = [
    Option<"skipUnitRowScales", "skip-unit-row-scales", "bool",
           /*default=*/"false",
           "Branch around `acc * broadcast(alpha)` in warps whose rows all "
           "have alpha == 1 (exact: x * 1 == x)">,
    Option<"uniformWarpgroup", "uniform-warpgroup", "bool",
           /*default=*/"false",
           "wgmma: compute each product's warpgroup offsets and shared "
           "descriptors from a warpgroup index broadcast by shfl.sync, "
           "where the product is issued: ptxas keeps them in uniform "
           "registers instead of LLVM hoisting them out of the loop into "
           "the threads' registers">,
    Option<"exp2PolyEvery", "exp2-poly-every", "int64_t", /*default=*/"0",
           "Compute exp2 of every N-th register of a thread by a polynomial "
           "on the FMA units instead of the MUFU unit (0: none; 1: all)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def TileGPUTensorMapParamsPass
    : Pass<"tilegpu-tensor-map-params", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Pass tensor maps by value, as grid-constant kernel parameters";
  let description = [{
    After `convert-gpu-to-nvvm`, each kernel parameter that the kernel's
    `tilegpu.params` list (set by `convert-tilegpu-to-nvvm`, one
    `#tilegpu.param` per parameter) calls a `tensor_map` (an `!llvm.ptr`)
    becomes the 128-byte
    CUDA tensor map itself, passed by value: `llvm.byval =
    !llvm.array<128 x i8>`, `llvm.align = 64` and `nvvm.grid_constant`, so
    that the PTX parameter is `.param .align 64 .b8 [128]` and TMA reads the
    descriptor at its address in parameter space. (`nvvm.grid_constant` is
    refused on a `gpu.func`, so this waits for the `llvm.func`.)

    ```mlir
    llvm.func @k(%map: !llvm.ptr) attributes {nvvm.kernel,
        tilegpu.params = [#tilegpu.param<tensor_map, "k" : !tilegpu.tensor_map<128x64xf16, swizzle = 128>>]}
    // becomes
    llvm.func @k(%map: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>,
                                  nvvm.grid_constant}) attributes {...}
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"];
}

def TileGPURetargetFamilyPass
    : Pass<"tilegpu-retarget-family", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Emit a module verified for an arch-specific chip for its family target";
  let description = [{
    LLVM 22's NVVM dialect accepts tcgen05 ops under an `sm_100a` target
    only, while its NVPTX backend also selects them for the family target
    `sm_100f` (PTX that runs on compute capability 10.0 and 10.3, B200 and
    B300). A module for `sm_100f` is therefore lowered and verified as
    `sm_100a`; just before `gpu-module-to-binary`, this pass replaces the
    chip and the PTX features of the module's `#nvvm.target` with `chip`
    and `features`, with the SM check of its ops off (`verifyTarget =
    false`): they were checked under `verified-as`, which the module's
    target must name.

    ```mlir
    gpu.module @k [#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx88">]
    // becomes
    gpu.module @k [#nvvm.target<O = 3, chip = "sm_100f", features = "+ptx88", verifyTarget = false>]
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "The family target to emit PTX for (e.g. sm_100f)">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "Its PTX features (e.g. +ptx88)">,
    Option<"verifiedAs", "verified-as", "std::string", /*default=*/"\"\"",
           "The chip the module was lowered and verified for (e.g. sm_100a)">,
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def ConvertNVGPUToNVVMWithIndexBitwidthPass
    : Pass<"convert-nvgpu-to-nvvm-index-bitwidth"> {
  let summary = "Upstream's nvgpu-to-nvvm patterns with a chosen index bit width";
  let description = [{
    Upstream `convert-nvgpu-to-nvvm` converts the memrefs that nvgpu ops
    read and write with 64-bit indices, whatever `gpu-lower-to-nvvm-pipeline`
    is asked for; with `index-bitwidth=32` the kernel's memref descriptors
    then meet in casts that nothing reconciles. This pass applies the same
    patterns with an LLVM type converter of the given index width, before
    the upstream pipeline runs (which then finds no nvgpu op left).
  }];
  let options = [
    Option<"indexBitwidth", "index-bitwidth", "unsigned", /*default=*/"64",
           "Bit width of index values (32 or 64)">,
  ];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
  ];
}

#endif // TILED_ATTN_CONVERSION_PASSES_TD
