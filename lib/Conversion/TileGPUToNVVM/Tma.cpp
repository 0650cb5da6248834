//===- Tma.cpp - TMA copies and mbarriers ---------------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The asynchronous copies of the Hopper and Blackwell families and the
// mbarriers that pace them:
//
// - tilegpu.mbarrier_init: thread 0 initializes the mbarrier (the CTA
//   barrier that convert-tile-to-tilegpu puts after the inits publishes it);
// - tilegpu.tma_load: thread 0 arrives on the mbarrier expecting the tile's
//   bytes, then issues one cp.async.bulk.tensor per 128-byte panel of the
//   destination, coordinates innermost first (column, row, head, batch);
// - tilegpu.mbarrier_arrive: the first lane of each warp arrives, after
//   the warp has synchronized;
// - tilegpu.mbarrier_wait: every thread spins on mbarrier.try_wait.parity
//   (the intrinsic in an scf.while: upstream's inline-asm loop made ptxas
//   spill in kernels of this size, see the toolchain notes);
// - tilegpu.tma_reduce: thread 0 issues one cp.reduce.async.bulk.tensor add
//   per panel of the source, then commits them as one bulk group;
// - tilegpu.tma_reduce_wait: thread 0 waits for its bulk groups
//   (cp.async.bulk.wait_group 0, with `read` its .read form); the buffer
//   operand is there for the allocation's lifetimes.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

Value tiled_attn::sharedPointer(OpBuilder &b, Location loc, Value memref,
                                Value byteOffset) {
  Value address =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  if (byteOffset)
    address = arith::AddIOp::create(b, loc, address, byteOffset);
  Value i64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*shared=*/3), i64);
}

Value tiled_attn::isThreadZero(OpBuilder &b, Location loc) {
  Value tid = threadIdInRole(b, loc);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                               cIdx(b, loc, 0));
}

void tiled_attn::enterFirstThread(OpBuilder &b, Location loc) {
  auto guard =
      scf::IfOp::create(b, loc, isThreadZero(b, loc), /*withElse=*/false);
  b.setInsertionPointToStart(guard.thenBlock());
}

/// 8 bytes each.
Value tiled_attn::barrierPointer(OpBuilder &b, Location loc, Value barriers,
                                 Value index) {
  return sharedPointer(b, loc, barriers,
                       arith::MulIOp::create(b, loc, index, cIdx(b, loc, 8)));
}

namespace {

Value toI32(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
}

/// A rank-4 tensor map's box coordinates, innermost first.
SmallVector<Value> boxCoordinates(OpBuilder &b, Location loc, Value col,
                                  Value row, Value head, Value batch) {
  return {toI32(b, loc, col), toI32(b, loc, row), toI32(b, loc, head),
          toI32(b, loc, batch)};
}

struct MBarrierInitToNVVM final : OpConversionPattern<MBarrierInitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MBarrierInitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder::InsertionGuard g(rewriter);
    enterFirstThread(rewriter, loc);
    Value count = arith::ConstantIntOp::create(
        rewriter, loc, rewriter.getI32Type(), op.getCount());
    NVVM::MBarrierInitOp::create(rewriter, loc,
                                 barrierPointer(rewriter, loc,
                                                adaptor.getBarriers(),
                                                adaptor.getIndex()),
                                 count, /*predicate=*/Value());
    rewriter.eraseOp(op);
    return success();
  }
};

struct MBarrierWaitToNVVM final : OpConversionPattern<MBarrierWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MBarrierWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value bar = barrierPointer(rewriter, loc, adaptor.getBarriers(),
                               adaptor.getIndex());
    Value parity = arith::ExtUIOp::create(rewriter, loc, rewriter.getI32Type(),
                                          adaptor.getPhase());
    // while (!try_wait.parity(bar, parity)) {}
    auto loop = scf::WhileOp::create(rewriter, loc, TypeRange{}, ValueRange{});
    rewriter.createBlock(&loop.getBefore());
    Value done = NVVM::MBarrierTryWaitOp::create(
        rewriter, loc, rewriter.getI1Type(), bar, parity, /*ticks=*/Value());
    Value notDone = arith::XOrIOp::create(
        rewriter, loc, done,
        arith::ConstantIntOp::create(rewriter, loc, rewriter.getI1Type(), 1));
    scf::ConditionOp::create(rewriter, loc, notDone, ValueRange{});
    rewriter.createBlock(&loop.getAfter());
    scf::YieldOp::create(rewriter, loc);
    rewriter.setInsertionPointAfter(loop);
    rewriter.eraseOp(op);
    return success();
  }
};

/// __syncwarp orders the reads of the warp's lanes before its first lane's
/// arrive (release semantics, CTA scope). A predicated one is upstream's
/// arrive with an expect-tx of no bytes, which takes a predicate operand.
struct MBarrierArriveToNVVM final : OpConversionPattern<MBarrierArriveOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MBarrierArriveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    NVVM::SyncWarpOp::create(
        rewriter, loc, arith::ConstantIntOp::create(rewriter, loc, -1, 32));
    Value lane = arith::RemUIOp::create(
        rewriter, loc, threadIdInRole(rewriter, loc), cIdx(rewriter, loc, 32));
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        lane, cIdx(rewriter, loc, 0));
    if (op.getPredicated()) {
      NVVM::MBarrierArriveExpectTxOp::create(
          rewriter, loc, /*resultTypes=*/TypeRange{},
          barrierPointer(rewriter, loc, adaptor.getBarriers(),
                         adaptor.getIndex()),
          arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(), 0),
          NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/first);
      rewriter.eraseOp(op);
      return success();
    }
    auto guard = scf::IfOp::create(rewriter, loc, first, /*withElse=*/false);
    OpBuilder::InsertionGuard g(rewriter);
    rewriter.setInsertionPointToStart(guard.thenBlock());
    NVVM::MBarrierArriveOp::create(rewriter, loc, /*res=*/Type(),
                                   barrierPointer(rewriter, loc,
                                                  adaptor.getBarriers(),
                                                  adaptor.getIndex()),
                                   /*count=*/Value());
    rewriter.eraseOp(op);
    return success();
  }
};

struct TmaLoadToNVVM final : OpConversionPattern<TmaLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmaLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // The box is one panel of the destination (the verifier saw to it; the
    // map itself is by now the kernel parameter's pointer).
    BufferType dst = op.getDst().getType();
    auto encoding = cast<SharedEncodingAttr>(dst.getEncoding());
    SmallVector<int64_t, 2> stored = encoding.getStoredShape(dst.getShape());
    int64_t panelCols = encoding.getPanelColumns(dst.getElementType());
    int64_t panels = stored[1] / panelCols;
    int64_t bytes = panels * encoding.getPanelBytes(dst.getShape());
    ValueRange idx = adaptor.getIndices(), gather = adaptor.getGather();
    // A gathered tile: one copy per group of rows and panel, group g from
    // its own leading index into its rows of each panel.
    int64_t groups = std::max<int64_t>(gather.size(), 1);
    int64_t groupRows = stored[0] / groups;
    int64_t groupBytes = encoding.getPanelBytes(dst.getShape()) / groups;
    Value row = arith::MulIOp::create(rewriter, loc, idx[2],
                                      cIdx(rewriter, loc, groupRows));
    if (Value offset = adaptor.getRowOffset())
      row = arith::AddIOp::create(rewriter, loc, row, offset);
    Value col0 = arith::MulIOp::create(rewriter, loc, idx[3],
                                       cIdx(rewriter, loc, stored[1]));
    {
      OpBuilder::InsertionGuard g(rewriter);
      enterFirstThread(rewriter, loc);
      Value bar = barrierPointer(rewriter, loc, adaptor.getBarriers(),
                                 adaptor.getIndex());
      NVVM::MBarrierArriveExpectTxOp::create(
          rewriter, loc, /*resultTypes=*/TypeRange{}, bar,
          arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(),
                                       bytes),
          NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
      for (int64_t p = 0; p < panels * groups; ++p) {
        int64_t g = p % groups;
        Value col = arith::AddIOp::create(
            rewriter, loc, col0, cIdx(rewriter, loc, p / groups * panelCols));
        Value panel = sharedPointer(
            rewriter, loc, adaptor.getDst(),
            cIdx(rewriter, loc,
                 p / groups * encoding.getPanelBytes(dst.getShape()) +
                     g * groupBytes));
        // The copy writes shared::cluster; this CTA's shared window is
        // part of it.
        panel = LLVM::AddrSpaceCastOp::create(
            rewriter, loc,
            LLVM::LLVMPointerType::get(rewriter.getContext(),
                                       /*shared::cluster=*/7),
            panel);
        SmallVector<Value> coords =
            boxCoordinates(rewriter, loc, col, row, idx[1],
                           gather.empty() ? idx[0] : gather[g]);
        NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
            rewriter, loc, panel, adaptor.getMap(), coords, bar,
            /*im2colOffsets=*/ValueRange{}, /*multicastMask=*/Value(),
            /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
            /*isCTAOnly=*/false, /*group=*/nullptr, /*predicate=*/Value());
      }
    }
    rewriter.replaceOp(op, adaptor.getDst());
    return success();
  }
};

struct TmaReduceToNVVM final : OpConversionPattern<TmaReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmaReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // The box is one panel of the source (the verifier saw to it).
    BufferType src = op.getSrc().getType();
    auto encoding = cast<SharedEncodingAttr>(src.getEncoding());
    SmallVector<int64_t, 2> stored = encoding.getStoredShape(src.getShape());
    int64_t panelCols = encoding.getPanelColumns(src.getElementType());
    ValueRange idx = adaptor.getIndices();
    Value row = arith::MulIOp::create(rewriter, loc, idx[2],
                                      cIdx(rewriter, loc, stored[0]));
    Value col0 = arith::MulIOp::create(rewriter, loc, idx[3],
                                       cIdx(rewriter, loc, stored[1]));
    {
      OpBuilder::InsertionGuard g(rewriter);
      enterFirstThread(rewriter, loc);
      for (int64_t p = 0; p < stored[1] / panelCols; ++p) {
        Value col = arith::AddIOp::create(rewriter, loc, col0,
                                          cIdx(rewriter, loc, p * panelCols));
        Value panel = sharedPointer(
            rewriter, loc, adaptor.getSrc(),
            cIdx(rewriter, loc, p * encoding.getPanelBytes(src.getShape())));
        SmallVector<Value> coords =
            boxCoordinates(rewriter, loc, col, row, idx[1], idx[0]);
        NVVM::CpAsyncBulkTensorReduceOp::create(
            rewriter, loc, adaptor.getMap(), panel, NVVM::TMAReduxKind::ADD,
            NVVM::TMAStoreMode::TILE, coords, /*l2CacheHint=*/Value());
      }
      NVVM::CpAsyncBulkCommitGroupOp::create(rewriter, loc);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct TmaReduceWaitToNVVM final : OpConversionPattern<TmaReduceWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TmaReduceWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    {
      OpBuilder::InsertionGuard g(rewriter);
      enterFirstThread(rewriter, loc);
      NVVM::CpAsyncBulkWaitGroupOp::create(
          rewriter, loc, rewriter.getI32IntegerAttr(0),
          op.getRead() ? rewriter.getUnitAttr() : UnitAttr());
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tiled_attn::populateTmaToNVVMPatterns(
    TileGPUToNVVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<MBarrierInitToNVVM, MBarrierArriveToNVVM, MBarrierWaitToNVVM,
               TmaLoadToNVVM, TmaReduceToNVVM, TmaReduceWaitToNVVM>(
      converter, patterns.getContext());
}
