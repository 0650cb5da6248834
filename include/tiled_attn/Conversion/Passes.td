//===- Passes.td - Conversions out of the tile dialect -----*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_CONVERSION_PASSES_TD
#define TILED_ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTileToGPUPass : Pass<"convert-tile-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower layout-annotated tile kernels to a gpu.module of SIMT code";
  let description = [{
    Each `func.func` whose tiles carry `#tile.layout`s becomes a `gpu.func`
    kernel in a `gpu.module`, written per thread with upstream dialects:

    - `!tile.view` arguments become strided memrefs (the kernel ABI is the
      memref descriptor: pointer, pointer, offset, sizes, strides);
    - register tiles become vectors of a lane's elements;
    - loads become cooperative `nvgpu.device_async_copy` into dynamic shared
      memory, then `nvgpu.ldmatrix` for A operands;
    - `tile.mma` becomes `nvgpu.ldmatrix` of B fragments and
      `nvgpu.mma.sync` m16n8k16;
    - row reductions become quad shuffles (`gpu.shuffle xor`);
    - with `skip-unit-row-scales`, the rescale of an accumulator by a row
      vector (`acc * broadcast(alpha)`) sits under a warp vote: a warp whose
      rows all have alpha == 1 skips it;
    - stores go through a shared staging buffer and leave in coalesced
      16-byte row pieces (`staged-stores`, the default), or write each
      lane's pairs directly; both under the view's bounds.

    The kernel records its block size (`known_block_size`) and its shared
    memory bytes (`tile.shared_bytes`).
  }];
  let options = [
    Option<"stagedStores", "staged-stores", "bool", /*default=*/"true",
           "Stage 16-bit tile stores in shared memory and write them out in "
           "16-byte row pieces (rows must be 16-byte aligned, as for loads)">,
    Option<"skipUnitRowScales", "skip-unit-row-scales", "bool",
           /*default=*/"false",
           "Branch around `acc * broadcast(alpha)` in warps whose rows all "
           "have alpha == 1 (exact: x * 1 == x)">,
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

def MergeBarriersPass : Pass<"merge-barriers"> {
  let summary = "Merge CTA barriers that no shared-memory access separates";
  let description = [{
    Within a block of the GPU-level kernel, a `gpu.barrier` B1 whose
    previous barrier B0 is separated from it only by async-copy issues
    (`nvgpu.device_async_copy`, `nvgpu.device_async_create_group`), waits
    for copy groups and ops without memory effects (warp shuffles and
    votes included) is merged into B0: the waits move to just before B0,
    and B1 goes.

    This is sound: no thread touched shared memory between B0 and B1, so
    B0 orders every access that B1 ordered; a wait moved before B0 lowers
    its count of groups allowed in flight by the groups committed between
    its two places, so that it waits for the same copies. A wait for a
    group committed after B0 cannot move, and then B1 stays.

    This is how FlashAttention-2's loop gets by with two barriers per
    K/V block: the barrier that frees a buffer for its refill is the one
    that publishes the other stream's landed copy (`tile-prefetch{streams=1
    refill-after-use}` then `merge-barriers`).
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
  ];
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
