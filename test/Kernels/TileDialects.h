//===- TileDialects.h - A tile program's dialects, for tests -*- C++ -*-===//
//-*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The dialects of a tile-level program (the kernel builders' output and the
// library's function files), loaded into a test's context.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_TEST_KERNELS_TILEDIALECTS_H
#define TILED_ATTN_TEST_KERNELS_TILEDIALECTS_H

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"

namespace tiled_attn::test {

inline void loadTileDialects(mlir::MLIRContext &context) {
  context.loadDialect<tile::TileDialect, mlir::arith::ArithDialect,
                      mlir::func::FuncDialect, mlir::math::MathDialect,
                      mlir::scf::SCFDialect, mlir::tensor::TensorDialect>();
}

} // namespace tiled_attn::test

#endif // TILED_ATTN_TEST_KERNELS_TILEDIALECTS_H
