//===- TileToGPU.h - Lower layout-annotated tile IR to GPU ops --*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The thread-level meaning of each #tile.layout, shared by the patterns of
// every op family, and the functions that populate those patterns.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_CONVERSION_TILETOGPU_TILETOGPU_H
#define TILED_ATTN_CONVERSION_TILETOGPU_TILETOGPU_H

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/SmallVector.h"

namespace tiled_attn {

/// Where the registers of a tile in a register layout (acc, rows, cols, opa)
/// sit. With g = lane / 4 and t = lane % 4, register `e` of a lane in warp
/// `w` holds element
///   row = w * rowsPerWarp + g + rowOffset[e],  col = 2t + colOffset[e]
/// (a rank-1 layout uses only the coordinate it has: rows for `rows`,
/// columns for `cols`).
struct Fragment {
  tile::LayoutKind kind;
  int64_t warps;
  /// Tiles of the layout: m-tiles, n-tiles (8 wide) or k-steps (16 wide).
  int64_t mTiles = 1, nTiles = 1;
  /// Rows a warp owns (0 when rows are not split over warps).
  int64_t rowsPerWarp = 0;
  llvm::SmallVector<int64_t> rowOffset, colOffset;

  /// The fragment of a tile type in a register layout.
  static Fragment get(mlir::RankedTensorType type);
  int64_t size() const { return std::max(rowOffset.size(), colOffset.size()); }
};

/// Converts tile types to their per-thread form: a register tile becomes a
/// vector of the lane's elements, a shared tile a padded workgroup memref,
/// a view a strided memref.
class TileToGPUTypeConverter : public mlir::TypeConverter {
public:
  TileToGPUTypeConverter();
};

/// The padded shared-memory buffer type of a tile stored as `rows x cols`.
mlir::MemRefType getSharedBufferType(int64_t rows, int64_t cols,
                                     mlir::Type elementType);

/// Whether a store of `type` can go through a staging buffer: a 16-bit
/// accumulator tile whose warps' rows split into 16-byte pieces, a whole
/// number per lane (see StoreToGPU and convert-tile-to-gpu's planner).
bool canStageStore(mlir::RankedTensorType type);

/// The NVVM intrinsic that exp2 of an f32 register tile lowers to (the MUFU
/// instruction alone); merge-barriers knows it touches no memory.
inline constexpr llvm::StringLiteral kExp2Intrinsic =
    "llvm.nvvm.ex2.approx.ftz.f";

/// An `index` constant (the lowering's shorthand for arith.constant).
mlir::Value cIdx(mlir::OpBuilder &b, mlir::Location loc, int64_t v);

/// Per-lane coordinates, computed where they are needed (CSE merges them).
struct LaneCoords {
  mlir::Value tid, lane, warp, g, t;
  LaneCoords(mlir::OpBuilder &b, mlir::Location loc);

  /// `origin` plus the row of the lane's register 0 in `frag`:
  /// origin + warp * rowsPerWarp + g.
  mlir::Value firstRow(mlir::OpBuilder &b, mlir::Location loc,
                       const Fragment &frag, mlir::Value origin) const;
  /// `origin` plus the column of the lane's register 0: origin + 2t.
  mlir::Value firstCol(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value origin) const;
};

/// The lane's eight registers of A-operand piece (mTile, kStep) of `frag`
/// (an `opa` fragment), read from the untransposed shared `buffer` that holds
/// the whole tile with one ldmatrix.x4.
mlir::Value loadOperandA(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value buffer, const Fragment &frag,
                         mlir::Type elementType, int64_t mTile, int64_t kStep);

/// Registers [offset, offset + size) of a lane's vector, and the vector with
/// them replaced by `part`; both are vector.shuffle, which every backend
/// lowers.
mlir::Value extractRegisters(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value vector, int64_t offset, int64_t size);
mlir::Value insertRegisters(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value part, mlir::Value vector,
                            int64_t offset);

/// Pattern sets, one per op family.
void populateTileMemoryToGPUPatterns(TileToGPUTypeConverter &converter,
                                     mlir::RewritePatternSet &patterns);
void populateTileMmaToGPUPatterns(TileToGPUTypeConverter &converter,
                                  mlir::RewritePatternSet &patterns);
void populateTileReduceToGPUPatterns(TileToGPUTypeConverter &converter,
                                     mlir::RewritePatternSet &patterns);
/// With `skipUnitRowScales`, a warp skips `acc * broadcast(rows)` when all
/// its rows scale by exactly 1.
void populateTileElementwiseToGPUPatterns(TileToGPUTypeConverter &converter,
                                          mlir::RewritePatternSet &patterns,
                                          bool skipUnitRowScales);

} // namespace tiled_attn

#endif // TILED_ATTN_CONVERSION_TILETOGPU_TILETOGPU_H
