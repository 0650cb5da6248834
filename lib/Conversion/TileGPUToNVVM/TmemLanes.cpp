//===- TmemLanes.cpp - Reductions, broadcasts and masks, a row per thread -===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The tcgen05 family's register tiles (#tilegpu.tmem_lanes): each thread
// holds one row of an accumulator (row 32 x (warp mod 4) + lane, plus 128
// per row block before its group of warps), its registers consecutive
// columns, the warps of a quadrant splitting the columns. A row reduction is
// then the thread's own registers, with no shuffle at all, where one warp holds
// the whole row (4 warps); a broadcast along the row repeats the thread's one
// element, along the columns it is the thread's registers as they are; masks
// compare each register's coordinates; a store writes the thread's row in
// 16-byte pieces. A rows vector goes to and from shared memory (the row
// factors that the softmax hands to the correction warps) one element per
// row: the thread of each row writes it (the first of its quadrant's column
// groups) and every thread that holds it reads it. A block in the
// accumulator's lanes (a bias or mask block staged by TMA) is read from its
// swizzled panels, 16 bytes of the thread's row at a time.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tile;
using tiled_attn::tilegpu::BufferType;
using tiled_attn::tilegpu::TmemLanesKind;
using tiled_attn::tilegpu::TmemLanesLayoutAttr;

namespace {

TmemLanesLayoutAttr lanesOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast_or_null<TmemLanesLayoutAttr>(tensor.getEncoding())
                : nullptr;
}

/// base + (0, 1, ..., n - 1), one index per register.
Value consecutive(OpBuilder &b, Location loc, Value base, int64_t n) {
  SmallVector<int64_t> steps(n);
  for (int64_t i = 0; i < n; ++i)
    steps[i] = i;
  return registerIndices(b, loc, base, steps);
}

/// This thread's row (an index) and the first of its columns, plus the
/// tile's offsets.
struct RowAndColumn {
  Value row, column;
  RowAndColumn(OpBuilder &b, Location loc, TmemLanesLayoutAttr layout,
               int64_t columns, Value rowOffset, Value colOffset) {
    TmemLanePosition at = tmemLanePosition(b, loc, layout);
    if (at.rowBlock)
      rowOffset = arith::AddIOp::create(
          b, loc, rowOffset,
          arith::MulIOp::create(b, loc, at.rowBlock, cIdx(b, loc, 128)));
    row = arith::AddIOp::create(
        b, loc, rowOffset,
        arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, at.quadrant, cIdx(b, loc, 32)),
            at.lane));
    column = arith::AddIOp::create(
        b, loc, colOffset,
        arith::MulIOp::create(
            b, loc, at.columnGroup,
            cIdx(b, loc, columns / layout.getColumnGroups())));
  }

  /// The row of each of `regs` registers: the thread's.
  Value rows(OpBuilder &b, Location loc, int64_t regs) const {
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({regs}, b.getIndexType()), row);
  }
  /// The column of each of `regs` registers: consecutive from the first.
  Value columns(OpBuilder &b, Location loc, int64_t regs) const {
    return consecutive(b, loc, column, regs);
  }
};

struct ReduceToTmemLanes final : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TmemLanesLayoutAttr in = lanesOf(op.getInput().getType());
    if (!in)
      return rewriter.notifyMatchFailure(op, "not in tmem_lanes");
    TmemLanesLayoutAttr out = lanesOf(op.getType());
    if (op.getAxis() != 1 || !out || out.getKind() != TmemLanesKind::Rows)
      return op.emitError() << "GPU lowering: only row reductions of a "
                               "tmem_lanes accumulator (along 1) are "
                               "supported";
    if (in.getColumnGroups() != 1)
      return op.emitError()
             << "GPU lowering: a row reduction in " << in
             << " would combine the column groups of " << in.getColumnGroups()
             << " warps; it takes 4 warps per block of 128 rows (a warp per "
                "row)";
    Location loc = op.getLoc();
    auto inTy = cast<RankedTensorType>(op.getInput().getType());
    int64_t regs = in.getRegisterCount(inTy.getShape());
    // A balanced tree over the thread's registers.
    SmallVector<Value> values;
    for (int64_t r = 0; r < regs; ++r)
      values.push_back(
          vector::ExtractOp::create(rewriter, loc, adaptor.getInput(), r));
    while (values.size() > 1) {
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < values.size(); i += 2)
        next.push_back(combineReduction(rewriter, loc, op.getKind(), values[i],
                                        values[i + 1]));
      if (values.size() % 2)
        next.push_back(values.back());
      values = std::move(next);
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
        op, VectorType::get({1}, inTy.getElementType()), values);
    return success();
  }
};

struct BroadcastToTmemLanes final : OpConversionPattern<BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TmemLanesLayoutAttr out = lanesOf(op.getType());
    if (!out)
      return rewriter.notifyMatchFailure(op, "not in tmem_lanes");
    TmemLanesLayoutAttr in = lanesOf(op.getInput().getType());
    TmemLanesKind expected =
        op.getAxis() == 1 ? TmemLanesKind::Rows : TmemLanesKind::Cols;
    if (out.getKind() != TmemLanesKind::Acc || !in ||
        in.getKind() != expected || in.getWarps() != out.getWarps() ||
        in.getRowBlocks() != out.getRowBlocks())
      return op.emitError() << "GPU lowering: a broadcast in tmem_lanes "
                               "takes a rows (along 1) or cols (along 0) "
                               "vector of the accumulator's warps";
    auto type = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    Value input = adaptor.getInput();
    if (op.getAxis() == 1)
      rewriter.replaceOpWithNewOp<vector::BroadcastOp>(
          op, type, vector::ExtractOp::create(rewriter, op.getLoc(), input, 0));
    else
      rewriter.replaceOp(op, input); // the thread's columns, as they are
    return success();
  }
};

struct CausalMaskToTmemLanes final : OpConversionPattern<CausalMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CausalMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TmemLanesLayoutAttr layout = lanesOf(op.getType());
    if (!layout)
      return rewriter.notifyMatchFailure(op, "not in tmem_lanes");
    Location loc = op.getLoc();
    int64_t columns = op.getType().getDimSize(1);
    int64_t regs = layout.getRegisterCount(op.getType().getShape());
    RowAndColumn at(rewriter, loc, layout, columns, adaptor.getRowOffset(),
                    adaptor.getColOffset());
    Value cols = at.columns(rewriter, loc, regs);
    Value rows = at.rows(rewriter, loc, regs);
    rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, arith::CmpIPredicate::sle,
                                               cols, rows);
    return success();
  }
};

struct WindowMaskToTmemLanes final : OpConversionPattern<WindowMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WindowMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TmemLanesLayoutAttr layout = lanesOf(op.getType());
    if (!layout)
      return rewriter.notifyMatchFailure(op, "not in tmem_lanes");
    Location loc = op.getLoc();
    int64_t columns = op.getType().getDimSize(1);
    int64_t regs = layout.getRegisterCount(op.getType().getShape());
    RowAndColumn at(rewriter, loc, layout, columns, adaptor.getRowOffset(),
                    adaptor.getColOffset());
    // A thread holds consecutive columns of one row.
    SmallVector<int64_t> rowOffset(regs, 0), colOffset;
    for (int64_t r = 0; r < regs; ++r)
      colOffset.push_back(r);
    rewriter.replaceOp(op, inBand(rewriter, loc, at.row, at.column, rowOffset,
                                  colOffset, adaptor.getLo(), adaptor.getHi()));
    return success();
  }
};

struct BoundsMaskToTmemLanes final : OpConversionPattern<BoundsMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BoundsMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TmemLanesLayoutAttr layout = lanesOf(op.getType());
    if (!layout)
      return rewriter.notifyMatchFailure(op, "not in tmem_lanes");
    if (layout.getKind() != TmemLanesKind::Cols)
      return op.emitError() << "GPU lowering: bounds masks are over columns";
    Location loc = op.getLoc();
    int64_t columns = op.getType().getDimSize(0);
    int64_t regs = layout.getRegisterCount(op.getType().getShape());
    RowAndColumn at(rewriter, loc, layout, columns, cIdx(rewriter, loc, 0),
                    adaptor.getOffsets()[0]);
    Value cols = at.columns(rewriter, loc, regs);
    Value limit = vector::BroadcastOp::create(rewriter, loc, cols.getType(),
                                              adaptor.getLimits()[0]);
    rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, arith::CmpIPredicate::slt,
                                               cols, limit);
    return success();
  }
};

/// Positions: a thread's registers are consecutive columns of its row (an
/// accumulator or a columns vector) or its row alone (a rows vector).
struct IotaToTmemLanes final : OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TmemLanesLayoutAttr layout = lanesOf(op.getType());
    if (!layout)
      return rewriter.notifyMatchFailure(op, "not in tmem_lanes");
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t regs = layout.getRegisterCount(type.getShape());
    Value offset =
        adaptor.getOffset() ? adaptor.getOffset() : cIdx(rewriter, loc, 0);
    Value zero = cIdx(rewriter, loc, 0);
    bool rows = layout.getKind() == TmemLanesKind::Rows ||
                (layout.getKind() == TmemLanesKind::Acc && op.getDim() == 0);
    int64_t columns = type.getDimSize(type.getRank() - 1);
    RowAndColumn at(rewriter, loc, layout, columns, rows ? offset : zero,
                    rows ? zero : offset);
    // A rows vector repeats the thread's row; columns are consecutive.
    SmallVector<int64_t> offsets(regs, 0);
    if (!rows)
      for (int64_t r = 0; r < regs; ++r)
        offsets[r] = r;
    auto resultType =
        cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOp(op,
                       positionVector(rewriter, loc, rows ? at.row : at.column,
                                      offsets, resultType, adaptor.getStep()));
    return success();
  }
};

/// Each thread writes its row's registers in 16-byte pieces (or adds them
/// one atomic addition an element), each within the view's bounds.
struct StoreFromTmemLanes final : OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TmemLanesLayoutAttr layout = lanesOf(op.getValue().getType());
    if (!layout)
      return rewriter.notifyMatchFailure(op, "not in tmem_lanes");
    if (op.getAdd() && (layout.getKind() != TmemLanesKind::Acc ||
                        !cast<RankedTensorType>(op.getValue().getType())
                             .getElementType()
                             .isF32()))
      return op.emitError() << "GPU lowering: an adding store takes an f32 "
                               "accumulator tile";
    if (layout.getKind() == TmemLanesKind::Rows && !op.getMask() &&
        op.getIndices().size() == 3)
      return storeRows(op, adaptor, rewriter, layout);
    if (layout.getKind() != TmemLanesKind::Acc || op.getIndices().size() != 4)
      return op.emitError() << "GPU lowering: stores take an accumulator "
                               "tile into a rank-4 view, or an unmasked "
                               "vector of rows into a rank-3 one";
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    int64_t regs = layout.getRegisterCount(type.getShape());
    // 16-byte pieces; masked, each element on its own under its mask bit;
    // adding (dQ's part of a varlen sequence, where TMA's bounds would be
    // the whole packed view's), an atomic f32 addition per element.
    int64_t width =
        op.getMask() || op.getAdd()
            ? 1
            : std::min<int64_t>(
                  regs, 128 / type.getElementType().getIntOrFloatBitWidth());
    Value view = adaptor.getView();
    ValueRange idx = adaptor.getIndices();
    RowAndColumn at(
        rewriter, loc, layout, type.getDimSize(1),
        arith::MulIOp::create(rewriter, loc, idx[2],
                              cIdx(rewriter, loc, type.getDimSize(0))),
        arith::MulIOp::create(rewriter, loc, idx[3],
                              cIdx(rewriter, loc, type.getDimSize(1))));
    Value seqLen = memref::DimOp::create(rewriter, loc, view, 2);
    Value colLen = memref::DimOp::create(rewriter, loc, view, 3);
    for (int64_t r = 0; r < regs; r += width) {
      Value col = arith::AddIOp::create(rewriter, loc, at.column,
                                        cIdx(rewriter, loc, r));
      Value inBounds =
          pieceInBounds(rewriter, loc, at.row, seqLen, col, width, colLen);
      if (op.getMask())
        inBounds = arith::AndIOp::create(
            rewriter, loc, inBounds,
            vector::ExtractOp::create(rewriter, loc, adaptor.getMask(), r));
      Value piece =
          extractRegisters(rewriter, loc, adaptor.getValue(), r, width);
      auto ifOp = scf::IfOp::create(rewriter, loc, inBounds,
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(ifOp.thenBlock());
      if (op.getAdd())
        memref::AtomicRMWOp::create(
            rewriter, loc, arith::AtomicRMWKind::addf,
            vector::ExtractOp::create(rewriter, loc, adaptor.getValue(), r),
            view, ValueRange{idx[0], idx[1], at.row, col});
      else
        vector::StoreOp::create(rewriter, loc, piece, view,
                                ValueRange{idx[0], idx[1], at.row, col});
    }
    rewriter.eraseOp(op);
    return success();
  }

private:
  /// A vector of rows (the log-sum-exps) into a rank-3 view at [b, h,
  /// block]: each thread writes its row, if within the view's rows (with
  /// several column groups, the first group's warps).
  LogicalResult storeRows(StoreOp op, OpAdaptor adaptor,
                          ConversionPatternRewriter &rewriter,
                          TmemLanesLayoutAttr layout) const {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    Value view = adaptor.getView();
    ValueRange idx = adaptor.getIndices();
    RowAndColumn at(
        rewriter, loc, layout, 1,
        arith::MulIOp::create(rewriter, loc, idx[2],
                              cIdx(rewriter, loc, type.getDimSize(0))),
        cIdx(rewriter, loc, 0));
    Value rows = memref::DimOp::create(rewriter, loc, view, 2);
    Value inside = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, at.row, rows);
    if (layout.getColumnGroups() > 1) {
      TmemLanePosition position = tmemLanePosition(rewriter, loc, layout);
      inside = arith::AndIOp::create(
          rewriter, loc, inside,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                position.columnGroup, cIdx(rewriter, loc, 0)));
    }
    Value element = vector::ExtractOp::create(rewriter, loc, adaptor.getValue(),
                                              int64_t(0));
    auto ifOp = scf::IfOp::create(rewriter, loc, inside,
                                  /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(ifOp.thenBlock());
    memref::StoreOp::create(rewriter, loc, element, view,
                            ValueRange{idx[0], idx[1], at.row});
    rewriter.eraseOp(op);
    return success();
  }
};

/// A rows vector's element, at its row of a one-dimensional shared buffer.
LogicalResult checkRowsInSharedMemory(Operation *op, TmemLanesLayoutAttr lanes,
                                      BufferType buffer) {
  if (!lanes || lanes.getKind() != TmemLanesKind::Rows ||
      buffer.getShape().size() != 1 || buffer.isRing())
    return op->emitError() << "GPU lowering: only #tilegpu.tmem_lanes<rows> "
                              "vectors move between registers and a "
                              "one-dimensional shared buffer";
  return success();
}

/// A thread's row of an accumulator tile in TMA's swizzled panels, 16
/// bytes (`chunk` elements) at a time: the geometry that reading a block
/// into the lanes and writing one from them share. `ok` is false where the
/// buffer is not one 2-D tile of panels holding the tile as stored.
struct LanesPanels {
  BufferType bufferType;
  int64_t regs = 0, chunk = 0;
  bool ok = false;
  LanesPanels(BufferType bufferType, RankedTensorType tile,
              TmemLanesLayoutAttr lanes)
      : bufferType(bufferType) {
    auto encoding =
        dyn_cast<tilegpu::SharedEncodingAttr>(bufferType.getEncoding());
    int64_t bytes = tile.getElementType().getIntOrFloatBitWidth() / 8;
    regs = lanes.getRegisterCount(tile.getShape());
    chunk = 16 / std::max<int64_t>(bytes, 1);
    ok = encoding && encoding.getSwizzle() != 0 &&
         bufferType.getShape().size() == 2 && bytes >= 1 && regs % chunk == 0;
  }
  /// The buffer as one flat row of elements, and the flat index of each
  /// piece (its first register r) of this thread's row.
  Value flatten(OpBuilder &b, Location loc, Value buffer) const {
    return memref::CollapseShapeOp::create(
        b, loc, buffer, ArrayRef<ReassociationIndices>{{0, 1}});
  }
  Value pieceIndex(OpBuilder &b, Location loc, const RowAndColumn &at,
                   int64_t r) const {
    Value col = arith::AddIOp::create(b, loc, at.column, cIdx(b, loc, r));
    return swizzledIndex(b, loc, bufferType, at.row, col);
  }
};

/// A block in the accumulator's lanes (a bias or mask block a function
/// reads at every score, staged by TMA in swizzled panels): each thread
/// reads its row's columns, 16 bytes at a time (a 16-byte chunk of a panel
/// row stays whole under the swizzle, which moves whole chunks).
static FailureOr<Value> loadLanesBlock(OpBuilder &b, Location loc,
                                       tilegpu::LocalLoadOp op,
                                       TmemLanesLayoutAttr lanes,
                                       Value buffer) {
  RankedTensorType type = op.getType();
  LanesPanels panels(op.getBuffer().getType(), type, lanes);
  auto encoding = dyn_cast<tilegpu::SharedEncodingAttr>(
      op.getBuffer().getType().getEncoding());
  if (!panels.ok || encoding.getTransposed())
    return op.emitError() << "GPU lowering: reads a block into "
                          << type.getEncoding()
                          << " from TMA's swizzled panels only, in 16-byte "
                             "pieces of a row, not from "
                          << op.getBuffer().getType();
  RowAndColumn at(b, loc, lanes, type.getShape()[1], cIdx(b, loc, 0),
                  cIdx(b, loc, 0));
  Value flat = panels.flatten(b, loc, buffer);
  auto piece = VectorType::get({panels.chunk}, type.getElementType());
  SmallVector<Value> pieces;
  for (int64_t r = 0; r < panels.regs; r += panels.chunk)
    pieces.push_back(vector::LoadOp::create(
        b, loc, piece, flat, ValueRange{panels.pieceIndex(b, loc, at, r)},
        /*nontemporal=*/false, llvm::MaybeAlign(16)));
  return concatRegisters(b, loc, pieces);
}

struct LocalLoadToTmemLanes final : OpConversionPattern<tilegpu::LocalLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::LocalLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TmemLanesLayoutAttr lanes = lanesOf(op.getType());
    if (!lanes)
      return rewriter.notifyMatchFailure(op, "not in tmem_lanes");
    if (lanes.getKind() == TmemLanesKind::Acc) {
      FailureOr<Value> block =
          loadLanesBlock(rewriter, op.getLoc(), op, lanes, adaptor.getBuffer());
      if (failed(block))
        return failure();
      rewriter.replaceOp(op, *block);
      return success();
    }
    if (failed(checkRowsInSharedMemory(op, lanes, op.getBuffer().getType())))
      return failure();
    Location loc = op.getLoc();
    RowAndColumn at(rewriter, loc, lanes, 1, cIdx(rewriter, loc, 0),
                    cIdx(rewriter, loc, 0));
    Value element =
        memref::LoadOp::create(rewriter, loc, adaptor.getBuffer(), at.row);
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(
        op, VectorType::get({1}, element.getType()), element);
    return success();
  }
};

/// An accumulator tile into swizzled panels as their stored matrix (the
/// backward's dSᵀ for dQ's product, dQ's part for its TMA reduction): each
/// thread writes its row's columns, 16 bytes at a time, then the
/// async-proxy fence (tcgen05.mma and the TMA reduction read them).
static LogicalResult storeLanesBlock(OpBuilder &b, Location loc,
                                     tilegpu::LocalStoreOp op,
                                     TmemLanesLayoutAttr lanes, Value value,
                                     Value buffer) {
  RankedTensorType type = op.getValue().getType();
  LanesPanels panels(op.getBuffer().getType(), type, lanes);
  if (!panels.ok)
    return op.emitError() << "GPU lowering: writes a block in "
                          << type.getEncoding()
                          << " into swizzled panels only, in 16-byte pieces "
                             "of a row, not into "
                          << op.getBuffer().getType();
  RowAndColumn at(b, loc, lanes, type.getShape()[1], cIdx(b, loc, 0),
                  cIdx(b, loc, 0));
  Value flat = panels.flatten(b, loc, buffer);
  for (int64_t r = 0; r < panels.regs; r += panels.chunk)
    vector::StoreOp::create(b, loc,
                            extractRegisters(b, loc, value, r, panels.chunk),
                            flat, ValueRange{panels.pieceIndex(b, loc, at, r)},
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  fenceAsyncShared(b, loc);
  return success();
}

struct LocalStoreFromTmemLanes final
    : OpConversionPattern<tilegpu::LocalStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::LocalStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TmemLanesLayoutAttr lanes = lanesOf(op.getValue().getType());
    if (!lanes)
      return rewriter.notifyMatchFailure(op, "not in tensor-memory lanes");
    if (lanes.getKind() == TmemLanesKind::Acc) {
      if (failed(storeLanesBlock(rewriter, op.getLoc(), op, lanes,
                                 adaptor.getValue(), adaptor.getBuffer())))
        return failure();
      rewriter.eraseOp(op);
      return success();
    }
    if (failed(checkRowsInSharedMemory(op, lanes, op.getBuffer().getType())))
      return failure();
    Location loc = op.getLoc();
    RowAndColumn at(rewriter, loc, lanes, 1, cIdx(rewriter, loc, 0),
                    cIdx(rewriter, loc, 0));
    Value element = vector::ExtractOp::create(rewriter, loc, adaptor.getValue(),
                                              int64_t(0));
    if (lanes.getColumnGroups() == 1) {
      memref::StoreOp::create(rewriter, loc, element, adaptor.getBuffer(),
                              at.row);
    } else {
      // The warps of a quadrant all hold the row: the first writes it.
      TmemLanePosition position = tmemLanePosition(rewriter, loc, lanes);
      Value first =
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                position.columnGroup, cIdx(rewriter, loc, 0));
      auto ifOp = scf::IfOp::create(rewriter, loc, first,
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(ifOp.thenBlock());
      memref::StoreOp::create(rewriter, loc, element, adaptor.getBuffer(),
                              at.row);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tiled_attn::populateTmemLanesPatterns(
    TileGPUToNVVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ReduceToTmemLanes, BroadcastToTmemLanes, CausalMaskToTmemLanes,
               WindowMaskToTmemLanes, BoundsMaskToTmemLanes, StoreFromTmemLanes,
               LocalLoadToTmemLanes, LocalStoreFromTmemLanes, IotaToTmemLanes>(
      converter, patterns.getContext());
}
