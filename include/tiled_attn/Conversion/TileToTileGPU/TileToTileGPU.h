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

/// The load that stages `value` in shared memory and whether `value` is that
/// block transposed: `value` itself (stagingLoad), or a tile.transpose of
/// such a value (a view of the same buffer); a null load for anything else.
std::pair<tile::LoadOp, bool> stagingOf(mlir::Value value);

/// The first op, in the block that defines `value`, that holds one of
/// `uses` (all of them in that block or nested in its ops).
mlir::Operation *firstReader(mlir::Value value,
                             llvm::ArrayRef<mlir::OpOperand *> uses);

/// How the mma.sync family keeps a tile in shared memory: rows padded by 8
/// elements, so that ldmatrix reads are free of bank conflicts.
tilegpu::SharedEncodingAttr mmaSyncSharedEncoding(mlir::MLIRContext *ctx,
                                                  bool transposed = false);

/// The widest swizzle (128, 64 or 32 bytes, at most `maxSwizzle`) that
/// divides a stored row of `rowBytes`, or 0 if none does. D = 64 or 128 of
/// 16-bit elements gives 128; D = 96 (192-byte rows) gives 64, three panels
/// of 32 columns.
int64_t tmaSwizzleBytes(int64_t rowBytes, int64_t maxSwizzle = 128);

/// How a tile of `shape` that TMA loads is kept in shared memory: swizzled
/// panels of the widest swizzle its stored rows allow, as TMA writes them
/// and wgmma and tcgen05 descriptors read them (and the mma.sync family's
/// ldmatrix, with `tma`), no wider than `maxSwizzle` bytes. Null where the
/// rows are not a multiple of 32 bytes.
tilegpu::SharedEncodingAttr tmaSharedEncoding(mlir::MLIRContext *ctx,
                                              llvm::ArrayRef<int64_t> shape,
                                              mlir::Type elementType,
                                              bool transposed = false,
                                              int64_t maxSwizzle = 128);

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
