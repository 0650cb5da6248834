//===- MmaSyncReduce.cpp - Reductions, broadcasts and masks ---------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A row of an accumulator lives in the four lanes of a quad: a row reduction
// combines the lane's own registers, then shuffles xor 1 and xor 2. A
// broadcast back is a register shuffle. Masks compare each register's
// element coordinates.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tile;
using tiled_attn::tilegpu::MmaSyncKind;
using tiled_attn::tilegpu::MmaSyncLayoutAttr;

namespace {

struct ReduceToGPU final : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inTy = cast<RankedTensorType>(op.getInput().getType());
    auto outTy = dyn_cast<RankedTensorType>(op.getType());
    auto inLayout = tilegpu::getQuadFragmentLayout(inTy.getEncoding());
    if (hasFragment(inTy.getEncoding()) && !inLayout)
      return op.emitError()
             << "GPU lowering: a reduction of a tile whose warps split its "
                "columns would need the other warps' registers; not "
                "supported ("
             << inTy << ")";
    if (!inLayout)
      return rewriter.notifyMatchFailure(
          op, "not in quad fragments (mma.sync, wgmma)");
    if (!outTy || op.getAxis() != 1 ||
        tilegpu::getQuadFragmentLayout(outTy.getEncoding()).getKind() !=
            MmaSyncKind::Rows)
      return op.emitError() << "GPU lowering: only row reductions of an "
                               "accumulator (along 1) are supported";
    Fragment in = Fragment::get(inTy), out = Fragment::get(outTy);
    SmallVector<Value> rows;
    for (int64_t mt = 0; mt < in.mTiles; ++mt)
      for (int64_t h = 0; h < 2; ++h) {
        Value acc;
        for (int64_t nt = 0; nt < in.nTiles; ++nt)
          for (int64_t c = 0; c < 2; ++c) {
            int64_t e = (mt * in.nTiles + nt) * 4 + 2 * h + c;
            Value x =
                vector::ExtractOp::create(rewriter, loc, adaptor.getInput(), e);
            acc =
                acc ? combineReduction(rewriter, loc, op.getKind(), acc, x) : x;
          }
        // The other three lanes of the quad hold the rest of the row.
        for (int64_t mask : {1, 2}) {
          Value other = gpu::ShuffleOp::create(rewriter, loc, acc, mask, 32,
                                               gpu::ShuffleMode::XOR)
                            .getShuffleResult();
          acc = combineReduction(rewriter, loc, op.getKind(), acc, other);
        }
        rows.push_back(acc);
      }
    (void)out;
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
        op,
        VectorType::get({static_cast<int64_t>(rows.size())},
                        outTy.getElementType()),
        rows);
    return success();
  }
};

struct BroadcastToGPU final : OpConversionPattern<BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto outTy = cast<RankedTensorType>(op.getType());
    if (!hasFragment(outTy.getEncoding()))
      return rewriter.notifyMatchFailure(
          op, "not in quad fragments (mma.sync, wgmma)");
    // (With column blocks, the input vector holds the same block's rows or
    // columns: the registers pair up as without.)
    Fragment out = Fragment::get(outTy);
    if (out.kind != MmaSyncKind::Acc)
      return op.emitError() << "GPU lowering: broadcasts produce accumulators";
    SmallVector<int64_t> mask;
    for (int64_t mt = 0; mt < out.mTiles; ++mt)
      for (int64_t nt = 0; nt < out.nTiles; ++nt)
        for (int64_t r = 0; r < 4; ++r)
          mask.push_back(op.getAxis() == 1 ? mt * 2 + r / 2   // rows
                                           : nt * 2 + r % 2); // cols
    Value in = adaptor.getInput();
    rewriter.replaceOpWithNewOp<vector::ShuffleOp>(op, in, in, mask);
    return success();
  }
};

/// The column of each of the lane's registers of `f`, plus `origin`.
Value registerCols(OpBuilder &b, Location loc, const Fragment &f,
                   Value origin) {
  LaneCoords lc(b, loc);
  return registerIndices(b, loc, lc.firstCol(b, loc, f, origin), f.colOffset);
}

struct CausalMaskToGPU final : OpConversionPattern<CausalMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CausalMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (!hasFragment(op.getType().getEncoding()))
      return rewriter.notifyMatchFailure(
          op, "not in quad fragments (mma.sync, wgmma)");
    Fragment f = Fragment::get(op.getType());
    LaneCoords lc(rewriter, loc);
    // row = row_offset + warp * rowsPerWarp + g + rowOffset[e]
    Value rowBase = lc.firstRow(rewriter, loc, f, adaptor.getRowOffset());
    Value colBase = lc.firstCol(rewriter, loc, f, adaptor.getColOffset());
    Value rows = registerIndices(rewriter, loc, rowBase, f.rowOffset);
    Value cols = registerIndices(rewriter, loc, colBase, f.colOffset);
    rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, arith::CmpIPredicate::sle,
                                               cols, rows);
    return success();
  }
};

struct WindowMaskToGPU final : OpConversionPattern<WindowMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WindowMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (!hasFragment(op.getType().getEncoding()))
      return rewriter.notifyMatchFailure(
          op, "not in quad fragments (mma.sync, wgmma)");
    Fragment f = Fragment::get(op.getType());
    LaneCoords lc(rewriter, loc);
    Value rowBase = lc.firstRow(rewriter, loc, f, adaptor.getRowOffset());
    Value colBase = lc.firstCol(rewriter, loc, f, adaptor.getColOffset());
    rewriter.replaceOp(op,
                       inBand(rewriter, loc, rowBase, colBase, f.rowOffset,
                              f.colOffset, adaptor.getLo(), adaptor.getHi()));
    return success();
  }
};

struct BoundsMaskToGPU final : OpConversionPattern<BoundsMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BoundsMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (!hasFragment(op.getType().getEncoding()))
      return rewriter.notifyMatchFailure(
          op, "not in quad fragments (mma.sync, wgmma)");
    Fragment f = Fragment::get(op.getType());
    if (f.kind != MmaSyncKind::Cols)
      return op.emitError() << "GPU lowering: bounds masks are over columns";
    Value cols = registerCols(rewriter, loc, f, adaptor.getOffsets()[0]);
    Value limit = vector::BroadcastOp::create(rewriter, loc, cols.getType(),
                                              adaptor.getLimits()[0]);
    rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, arith::CmpIPredicate::slt,
                                               cols, limit);
    return success();
  }
};

/// Positions: each register's row or column (by the op's dim and the
/// layout's kind) plus the offset, in the element type (positionVector).
struct IotaToGPU final : OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (!hasFragment(op.getType().getEncoding()))
      return rewriter.notifyMatchFailure(
          op, "not in quad fragments (mma.sync, wgmma)");
    Fragment f = Fragment::get(op.getType());
    bool rows;
    switch (f.kind) {
    case MmaSyncKind::Acc:
      rows = op.getDim() == 0;
      break;
    case MmaSyncKind::Rows:
      rows = true;
      break;
    case MmaSyncKind::Cols:
      rows = false;
      break;
    default:
      return op.emitError() << "GPU lowering: positions take an accumulator, "
                               "rows or columns layout, not "
                            << op.getType().getEncoding();
    }
    Value offset =
        adaptor.getOffset() ? adaptor.getOffset() : cIdx(rewriter, loc, 0);
    LaneCoords lc(rewriter, loc);
    Value base = rows ? lc.firstRow(rewriter, loc, f, offset)
                      : lc.firstCol(rewriter, loc, f, offset);
    auto type = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOp(op,
                       positionVector(rewriter, loc, base,
                                      rows ? f.rowOffset : f.colOffset, type,
                                      adaptor.getStep()));
    return success();
  }
};

} // namespace

void tiled_attn::populateMmaSyncReducePatterns(
    TileGPUToNVVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ReduceToGPU, BroadcastToGPU, CausalMaskToGPU, WindowMaskToGPU,
               BoundsMaskToGPU, IotaToGPU>(converter, patterns.getContext());
}
