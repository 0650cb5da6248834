//===- TileGPUDialect.td - The GPU level of tiled-attn -----*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUDIALECT_TD
#define TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUDIALECT_TD

include "mlir/IR/OpBase.td"

def TileGPU_Dialect : Dialect {
  let name = "tilegpu";
  let cppNamespace = "::tiled_attn::tilegpu";
  let summary = "The GPU level of tiled-attn: layouts, memories, async copies";
  let description = [{
    The target-specific level between the `tile` dialect and upstream
    `gpu`/`nvgpu`/`nvvm`. Everything the GPU lowering decides is spelled out
    here, so that it can be printed, verified and tested between small
    passes:

    - how a register tile is spread over warps, lanes and registers (one
      interface, `DistributedLayoutAttrInterface`, with one attribute per
      matrix unit: `#tilegpu.mma_sync`, `#tilegpu.wgmma`,
      `#tilegpu.tmem_lanes`);
    - where a tile lives when it is not in registers: a `!tilegpu.buffer` in
      shared memory (`#tilegpu.shared`: padding or a swizzle mode) or in
      tensor memory (`#tilegpu.tensor_memory`), allocated explicitly, with
      offsets;
    - asynchronous copies and their completion (cp.async groups now;
      mbarriers with phases for TMA), barriers, and warp-specialized
      regions with roles and register budgets;
    - the target chip (`#tilegpu.target`), which chooses the matrix-unit
      family and so the passes and patterns that run.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::tiled_attn::tile::TileDialect",
  ];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Module attribute: the `#tilegpu.target` the module is compiled for.
    static constexpr ::llvm::StringLiteral getTargetAttrName() {
      return "tilegpu.target";
    }
    /// Kernel attribute: the dynamic shared memory of a kernel, in bytes,
    /// set by `tilegpu-allocate-memory`.
    static constexpr ::llvm::StringLiteral getSharedBytesAttrName() {
      return "tilegpu.shared_bytes";
    }
    /// Kernel attribute: the tensor-memory columns a lowered kernel
    /// allocates (tcgen05.alloc), set by `convert-tilegpu-to-nvvm`.
    static constexpr ::llvm::StringLiteral getTmemColumnsAttrName() {
      return "tilegpu.tmem_columns";
    }
    /// Kernel attribute: the number of warps its layouts are spread over.
    static constexpr ::llvm::StringLiteral getWarpsAttrName() {
      return "tilegpu.warps";
    }
    /// Kernel argument attribute: the `#tilegpu.param` the argument carries.
    static constexpr ::llvm::StringLiteral getParamAttrName() {
      return "tilegpu.param";
    }
    /// On a lowered kernel: its parameters' #tilegpu.param, in order (the
    /// lowering to llvm.func keeps function attributes, not argument ones).
    static constexpr ::llvm::StringLiteral getParamsAttrName() {
      return ::llvm::StringLiteral("tilegpu.params");
    }
  }];
}

#endif // TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUDIALECT_TD
