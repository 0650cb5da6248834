//===- TileToTileGPU.h - From tile IR to the GPU level ----------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What tilegpu-assign-layouts and convert-tile-to-tilegpu both need to know
// of tile IR.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_CONVERSION_TILETOTILEGPU_TILETOTILEGPU_H
#define TILED_ATTN_CONVERSION_TILETOTILEGPU_TILETOTILEGPU_H

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tiled_attn {

/// The load that stages `value` in shared memory: its definition, or, for a
/// value a loop carries (software pipelining) or leaves (to the next loop of
/// the same pipeline), the load that starts it, and for a branch's result
/// that of its then side; null for anything else.
tile::LoadOp stagingLoad(mlir::Value value);

/// The first op, in the block that defines `value`, that holds one of
/// `uses` (all of them in that block or nested in its ops).
mlir::Operation *firstReader(mlir::Value value,
                             llvm::ArrayRef<mlir::OpOperand *> uses);

/// How the mma.sync family keeps a tile in shared memory: rows padded by 8
/// elements, so that ldmatrix reads are free of bank conflicts.
tilegpu::SharedEncodingAttr mmaSyncSharedEncoding(mlir::MLIRContext *ctx,
                                                  bool transposed = false);

/// How a tile that TMA loads is kept in shared memory: 128-byte swizzled
/// panels, as TMA writes them and wgmma descriptors read them (and the
/// mma.sync family's ldmatrix, with `tma`).
tilegpu::SharedEncodingAttr tmaSharedEncoding(mlir::MLIRContext *ctx,
                                              bool transposed = false);

/// The tcgen05 family: tiles with a #tilegpu.tensor_memory encoding become
/// tensor-memory buffers, tile.mma a tilegpu.tmem_mma with its commit and
/// wait, the moves to and from registers tilegpu.tmem_load/tmem_store (see
/// TensorMemory.cpp). The operands the mma reads from shared memory must be
/// buffers already.
/// With `mmaWarp`, one thread issues each product after the group whose
/// rows it computes has arrived on its "ready" mbarrier (see the pass's
/// mma-warp option); with `pOverS`, P's buffer lies over the columns of the
/// S it is computed from (the p-over-s option); with `correction`, each
/// correction of O is handed off through shared memory (the correction
/// option).
mlir::LogicalResult materializeTensorMemory(mlir::func::FuncOp func,
                                            bool mmaWarp, bool pOverS,
                                            bool correction);

} // namespace tiled_attn

#endif // TILED_ATTN_CONVERSION_TILETOTILEGPU_TILETOTILEGPU_H
