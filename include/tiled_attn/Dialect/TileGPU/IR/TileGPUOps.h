//===- TileGPUOps.h - Operations of the tilegpu dialect ---------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUOPS_H
#define TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUOPS_H

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h.inc"

namespace tiled_attn::tilegpu {

/// Who holds what of a tile in a register layout, for a reduction of the
/// whole tile (tilegpu.cta_reduce), read off the layout's
/// getElementCoordinates: the lane xor masks across which lanes hold
/// different elements (the others hold copies), and one warp of each set of
/// warps that hold the same elements (more than one: they combine through
/// shared memory).
struct ReductionSpread {
  llvm::SmallVector<int64_t> laneMasks;
  llvm::SmallVector<int64_t> warps;
};

/// The spread of a tile of `shape` in `layout`, or an error through
/// `emitError` where lanes or warps hold partly overlapping elements (no
/// butterfly counts each element once).
mlir::FailureOr<ReductionSpread>
getReductionSpread(DistributedLayoutAttrInterface layout,
                   llvm::ArrayRef<int64_t> shape,
                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

} // namespace tiled_attn::tilegpu

#endif // TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUOPS_H
