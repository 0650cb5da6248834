//===- MmaSyncFragments.cpp - Registers of mma.sync layouts --------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

Fragment Fragment::get(RankedTensorType type) {
  // With column blocks, each warpgroup (wgmma) or warp (mma.sync) holds
  // its block's tile as mma.sync would on the warps of the block.
  auto blocked = [&](auto layout, int64_t warpUnit) {
    SmallVector<int64_t> block = layout.getColumnBlockShape(type.getShape());
    Fragment f = get(layout.getColumnBlockLayout(), block);
    f.columnBlocks = layout.getColumnBlocks();
    f.blockColumns = block.back();
    f.warpUnit = warpUnit;
    return f;
  };
  if (auto wgmma = dyn_cast<WgmmaLayoutAttr>(type.getEncoding());
      wgmma && wgmma.getColumnBlocks() > 1)
    return blocked(wgmma, 4);
  if (auto mma = dyn_cast<MmaSyncLayoutAttr>(type.getEncoding());
      mma && mma.getColumnBlocks() > 1)
    return blocked(mma, 1);
  // wgmma's layouts hold mma.sync's registers (getQuadFragmentLayout).
  return get(getQuadFragmentLayout(type.getEncoding()), type.getShape());
}

bool tiled_attn::hasFragment(Attribute encoding) {
  return isa_and_nonnull<MmaSyncLayoutAttr, WgmmaLayoutAttr>(encoding);
}

Fragment Fragment::get(MmaSyncLayoutAttr layout, ArrayRef<int64_t> shape) {
  Fragment f{layout.getKind(), layout.getWarps()};
  switch (f.kind) {
  case MmaSyncKind::Acc:
    // m16n8 accumulators: (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1).
    f.rowsPerWarp = shape[0] / f.warps;
    f.mTiles = f.rowsPerWarp / 16;
    f.nTiles = shape[1] / 8;
    for (int64_t mt = 0; mt < f.mTiles; ++mt)
      for (int64_t nt = 0; nt < f.nTiles; ++nt)
        for (int64_t r = 0; r < 4; ++r) {
          f.rowOffset.push_back(mt * 16 + 8 * (r / 2));
          f.colOffset.push_back(nt * 8 + r % 2);
        }
    break;
  case MmaSyncKind::Rows:
    f.rowsPerWarp = shape[0] / f.warps;
    f.mTiles = f.rowsPerWarp / 16;
    for (int64_t mt = 0; mt < f.mTiles; ++mt)
      for (int64_t h = 0; h < 2; ++h)
        f.rowOffset.push_back(mt * 16 + 8 * h);
    break;
  case MmaSyncKind::Cols:
    f.nTiles = shape[0] / 8;
    for (int64_t nt = 0; nt < f.nTiles; ++nt)
      for (int64_t c = 0; c < 2; ++c)
        f.colOffset.push_back(nt * 8 + c);
    break;
  case MmaSyncKind::OperandA:
    // m16k16 A operands: a0..a7 = (g, 2t..), (g+8, 2t..), (g, 2t+8..),
    // (g+8, 2t+8..).
    f.rowsPerWarp = shape[0] / f.warps;
    f.mTiles = f.rowsPerWarp / 16;
    f.nTiles = shape[1] / 16;
    for (int64_t mt = 0; mt < f.mTiles; ++mt)
      for (int64_t kt = 0; kt < f.nTiles; ++kt)
        for (int64_t a = 0; a < 8; ++a) {
          f.rowOffset.push_back(mt * 16 + 8 * ((a / 2) % 2));
          f.colOffset.push_back(kt * 16 + 8 * (a / 4) + a % 2);
        }
    break;
  }
  return f;
}

LaneCoords::LaneCoords(OpBuilder &b, Location loc) {
  tid = threadIdInRole(b, loc);
  Value c32 = arith::ConstantIndexOp::create(b, loc, 32);
  Value c4 = arith::ConstantIndexOp::create(b, loc, 4);
  lane = arith::RemUIOp::create(b, loc, tid, c32);
  warp = arith::DivUIOp::create(b, loc, tid, c32);
  g = arith::DivUIOp::create(b, loc, lane, c4);
  t = arith::RemUIOp::create(b, loc, lane, c4);
}

Value LaneCoords::blockWarp(OpBuilder &b, Location loc,
                            const Fragment &frag) const {
  if (frag.columnBlocks == 1)
    return warp;
  // Unit u = w / warpUnit is unit u / columnBlocks of its block's; warp w
  // is w % warpUnit in its unit.
  Value unit = arith::ConstantIndexOp::create(b, loc, frag.warpUnit);
  Value group = frag.warpUnit == 1 ? warp
                                   : arith::DivUIOp::create(b, loc, warp, unit)
                                         .getResult();
  Value blockUnit = arith::DivUIOp::create(
      b, loc, group, arith::ConstantIndexOp::create(b, loc, frag.columnBlocks));
  if (frag.warpUnit == 1)
    return blockUnit;
  return arith::AddIOp::create(b, loc,
                               arith::MulIOp::create(b, loc, blockUnit, unit),
                               arith::RemUIOp::create(b, loc, warp, unit));
}

Value LaneCoords::blockColumn(OpBuilder &b, Location loc,
                              const Fragment &frag) const {
  if (frag.columnBlocks == 1)
    return Value();
  // Block u % columnBlocks of unit u = w / warpUnit.
  Value group =
      frag.warpUnit == 1
          ? warp
          : arith::DivUIOp::create(
                b, loc, warp,
                arith::ConstantIndexOp::create(b, loc, frag.warpUnit))
                .getResult();
  Value block = arith::RemUIOp::create(
      b, loc, group, arith::ConstantIndexOp::create(b, loc, frag.columnBlocks));
  return arith::MulIOp::create(
      b, loc, block, arith::ConstantIndexOp::create(b, loc, frag.blockColumns));
}

Value LaneCoords::firstRow(OpBuilder &b, Location loc, const Fragment &frag,
                           Value origin) const {
  Value rowsPerWarp = arith::ConstantIndexOp::create(b, loc, frag.rowsPerWarp);
  Value warpRow =
      arith::MulIOp::create(b, loc, blockWarp(b, loc, frag), rowsPerWarp);
  return arith::AddIOp::create(b, loc, origin,
                               arith::AddIOp::create(b, loc, warpRow, g));
}

Value LaneCoords::firstCol(OpBuilder &b, Location loc, const Fragment &frag,
                           Value origin) const {
  Value two = arith::ConstantIndexOp::create(b, loc, 2);
  if (Value column = blockColumn(b, loc, frag))
    origin = arith::AddIOp::create(b, loc, origin, column);
  return arith::AddIOp::create(b, loc, origin,
                               arith::MulIOp::create(b, loc, t, two));
}

Value tiled_attn::extractRegisters(OpBuilder &b, Location loc, Value vector,
                                   int64_t offset, int64_t size) {
  SmallVector<int64_t> mask;
  for (int64_t i = 0; i < size; ++i)
    mask.push_back(offset + i);
  return vector::ShuffleOp::create(b, loc, vector, vector, mask);
}

Value tiled_attn::concatRegisters(OpBuilder &b, Location loc,
                                  ArrayRef<Value> pieces) {
  // Pairwise, so that the masks add up to n log n entries, not n^2.
  SmallVector<Value> level(pieces.begin(), pieces.end());
  while (level.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2) {
      int64_t n = cast<VectorType>(level[i].getType()).getNumElements() +
                  cast<VectorType>(level[i + 1].getType()).getNumElements();
      next.push_back(
          vector::ShuffleOp::create(b, loc, level[i], level[i + 1],
                                    llvm::to_vector(llvm::seq<int64_t>(0, n))));
    }
    if (level.size() % 2)
      next.push_back(level.back());
    level = std::move(next);
  }
  return level.front();
}

bool tiled_attn::readsWithLdmatrix(BufferType buffer) {
  // ldmatrix reads 16-byte rows of 8 16-bit elements: any swizzle (it
  // moves 16-byte chunks) or none.
  return buffer.getElementType().getIntOrFloatBitWidth() == 16;
}

Value tiled_attn::swizzledIndex(OpBuilder &b, Location loc,
                                BufferType bufferType, Value row, Value col) {
  // A panel row of W bytes holds W/16 chunks of 16 bytes; TMA's W-byte
  // swizzle xors a chunk's index with bits 7 and up of the row's offset
  // (row x W) in the panel, modulo W/16: row mod 8 for W = 128, row / 2
  // mod 4 for 64, row / 4 mod 2 for 32.
  auto encoding = cast<SharedEncodingAttr>(bufferType.getEncoding());
  Type elementType = bufferType.getElementType();
  int64_t swizzle = encoding.getSwizzle();
  int64_t panelCols = encoding.getPanelColumns(elementType);
  int64_t rows = encoding.getStoredShape(bufferType.getTileShape())[0];
  int64_t chunkElements = 128 / elementType.getIntOrFloatBitWidth();
  auto c = [&](int64_t v) { return cIdx(b, loc, v); };
  Value panel = arith::DivUIOp::create(b, loc, col, c(panelCols));
  Value inPanel = arith::RemUIOp::create(b, loc, col, c(panelCols));
  Value chunk = arith::DivUIOp::create(b, loc, inPanel, c(chunkElements));
  Value phase = arith::RemUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, row, c(128 / swizzle)),
      c(swizzle / 16));
  Value swizzled = arith::XOrIOp::create(b, loc, chunk, phase);
  return arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, panel, c(rows * panelCols)),
          arith::MulIOp::create(b, loc, row, c(panelCols))),
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, swizzled, c(chunkElements)),
          arith::RemUIOp::create(b, loc, inPanel, c(chunkElements))));
}

Value tiled_attn::ldmatrix(OpBuilder &b, Location loc, Value buffer,
                           BufferType bufferType, Value row, Value col,
                           int64_t matrices, bool transpose) {
  Type elementType = bufferType.getElementType();
  auto result = VectorType::get({matrices, 2}, elementType);
  auto encoding = cast<SharedEncodingAttr>(bufferType.getEncoding());
  if (!encoding.getSwizzle())
    return nvgpu::LdMatrixOp::create(
        b, loc, result, buffer, ValueRange{row, col}, b.getBoolAttr(transpose),
        b.getI32IntegerAttr(matrices));
  assert(readsWithLdmatrix(bufferType) && "a swizzle ldmatrix cannot undo");
  Value index = swizzledIndex(b, loc, bufferType, row, col);
  Value flat = memref::CollapseShapeOp::create(
      b, loc, buffer, ArrayRef<ReassociationIndices>{{0, 1}});
  return nvgpu::LdMatrixOp::create(b, loc, result, flat, ValueRange{index},
                                   b.getBoolAttr(transpose),
                                   b.getI32IntegerAttr(matrices));
}

Value tiled_attn::loadOperandA(OpBuilder &b, Location loc, Value buffer,
                               BufferType bufferType, const Fragment &frag,
                               int64_t mTile, int64_t kStep) {
  Type elementType = bufferType.getElementType();
  LaneCoords lc(b, loc);
  if (cast<SharedEncodingAttr>(bufferType.getEncoding()).getTransposed()) {
    // The buffer holds the operand's transpose ([k][m]): ldmatrix.trans
    // reads the four 8x8 matrices (rows 0-7 and 8-15 by columns 0-7, then
    // by columns 8-15) as stored blocks of k rows and m columns; lane l
    // addresses stored row 16 * kStep + 8 * (l / 16) + l % 8 at column
    // warp rows + 16 * mTile + 8 * ((l / 8) % 2).
    Value kRow = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, lc.lane, cIdx(b, loc, 16)),
            cIdx(b, loc, 8)),
        arith::RemUIOp::create(b, loc, lc.lane, cIdx(b, loc, 8)));
    Value mCol = arith::MulIOp::create(
        b, loc,
        arith::RemUIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, lc.lane, cIdx(b, loc, 8)),
            cIdx(b, loc, 2)),
        cIdx(b, loc, 8));
    Value warpCol =
        arith::MulIOp::create(b, loc, lc.blockWarp(b, loc, frag),
                              cIdx(b, loc, frag.rowsPerWarp));
    Value row = arith::AddIOp::create(b, loc, kRow, cIdx(b, loc, kStep * 16));
    Value col = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, warpCol, mCol),
        cIdx(b, loc, mTile * 16));
    Value piece = ldmatrix(b, loc, buffer, bufferType, row, col, 4,
                           /*transpose=*/true);
    return vector::ShapeCastOp::create(
        b, loc, VectorType::get({8}, elementType), piece);
  }
  // Lane l addresses row l % 16 and column 8 * (l / 16) of the 16x16 piece
  // at (warp rows + 16 * mTile, 16 * kStep).
  Value laneRow = arith::RemUIOp::create(b, loc, lc.lane, cIdx(b, loc, 16));
  Value laneCol = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, lc.lane, cIdx(b, loc, 16)),
      cIdx(b, loc, 8));
  Value warpRow =
      arith::MulIOp::create(b, loc, lc.blockWarp(b, loc, frag),
                              cIdx(b, loc, frag.rowsPerWarp));
  Value row = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, warpRow, laneRow),
      cIdx(b, loc, mTile * 16));
  Value col = arith::AddIOp::create(b, loc, laneCol, cIdx(b, loc, kStep * 16));
  Value piece = ldmatrix(b, loc, buffer, bufferType, row, col, 4,
                         /*transpose=*/false);
  return vector::ShapeCastOp::create(b, loc, VectorType::get({8}, elementType),
                                     piece);
}
