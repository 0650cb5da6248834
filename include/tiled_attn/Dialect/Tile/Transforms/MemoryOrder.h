//===- MemoryOrder.h - What a read may move above --------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The schedule passes that issue an op earlier in its block (tile-early-mmas,
// tile-early-gathers) move a read of memory above other ops only where none
// of them may write: the memory effects of an op and of everything nested in
// it, an op whose effects are unknown counted as a write.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILE_TRANSFORMS_MEMORYORDER_H
#define TILED_ATTN_DIALECT_TILE_TRANSFORMS_MEMORYORDER_H

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace tiled_attn::tile {

/// Whether `op` (with what it nests) only reads memory or has no effects.
inline bool onlyReadsMemory(mlir::Operation *op) {
  std::optional<llvm::SmallVector<mlir::MemoryEffects::EffectInstance>>
      effects = mlir::getEffectsRecursively(op);
  if (!effects)
    return false;
  return llvm::all_of(*effects, [](const auto &e) {
    return llvm::isa<mlir::MemoryEffects::Read>(e.getEffect());
  });
}

/// Whether an op after `from` and before `to` (in their block) may write
/// memory: a read does not move above it.
inline bool writesBetween(mlir::Operation *from, mlir::Operation *to) {
  for (mlir::Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode())
    if (!onlyReadsMemory(op))
      return true;
  return false;
}

} // namespace tiled_attn::tile

#endif // TILED_ATTN_DIALECT_TILE_TRANSFORMS_MEMORYORDER_H
