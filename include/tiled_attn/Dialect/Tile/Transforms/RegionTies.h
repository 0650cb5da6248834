//===- RegionTies.h - Values that structured control flow ties --*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The dataflow analyses of the tile level (retiling, layout assignment) treat
// the values that scf.for and scf.if pass along as one: a loop's start
// value, region argument, yielded value and result; an if's results and the
// values its branches yield.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILE_TRANSFORMS_REGIONTIES_H
#define TILED_ATTN_DIALECT_TILE_TRANSFORMS_REGIONTIES_H

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace tiled_attn::tile {

/// Calls `tie(a, b)` for every pair of values that `op` (an scf.for or an
/// scf.if) requires to be the same tile; returns false for other ops.
inline bool
forEachRegionTie(mlir::Operation *op,
                 llvm::function_ref<void(mlir::Value, mlir::Value)> tie) {
  if (auto loop = llvm::dyn_cast<mlir::scf::ForOp>(op)) {
    for (auto [init, arg, result, yielded] :
         llvm::zip_equal(loop.getInitArgs(), loop.getRegionIterArgs(),
                         loop.getResults(), loop.getYieldedValues())) {
      tie(init, arg);
      tie(arg, result);
      tie(result, yielded);
    }
    return true;
  }
  if (auto ifOp = llvm::dyn_cast<mlir::scf::IfOp>(op)) {
    for (auto [i, result] : llvm::enumerate(ifOp.getResults())) {
      tie(result, ifOp.thenYield().getOperand(i));
      if (!ifOp.getElseRegion().empty())
        tie(result, ifOp.elseYield().getOperand(i));
    }
    return true;
  }
  return false;
}

} // namespace tiled_attn::tile

#endif // TILED_ATTN_DIALECT_TILE_TRANSFORMS_REGIONTIES_H
