//===- Passes.h - Transforms on the tile dialect ----------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILE_TRANSFORMS_PASSES_H
#define TILED_ATTN_DIALECT_TILE_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"

namespace tiled_attn::tile {

#define GEN_PASS_DECL
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"

/// Adds @<f>_grad after the score function `f` (tile-differentiate-score's
/// rule: f's arguments and %grad: f32, returning %grad * df/dscore) and
/// returns it; on a function it cannot differentiate (no rule for an op on
/// the score, an op with regions, not a score function, or a module that
/// has @<f>_grad already) reports the error and adds nothing.
mlir::FailureOr<mlir::func::FuncOp> addScoreGradient(mlir::func::FuncOp f);

} // namespace tiled_attn::tile

#endif // TILED_ATTN_DIALECT_TILE_TRANSFORMS_PASSES_H
