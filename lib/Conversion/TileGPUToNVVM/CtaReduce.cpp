//===- CtaReduce.cpp - Reductions of a register tile to one value ---------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tilegpu.cta_reduce in any register layout: the layout's reduction spread
// (getReductionSpread) says which lane xor masks join different elements
// and which warps do. A thread combines its registers, a warp its lanes by
// shuffles over those masks, and the warps (where they differ) through the
// scratch buffer: a barrier (the buffer's last readers are done), each
// warp's first lane writes its value, a barrier, and every thread reads the
// warps' values back in the same order, so that all hold the same result.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

namespace {

struct CtaReduceToGPU final : OpConversionPattern<CtaReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CtaReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto input = cast<RankedTensorType>(op.getInput().getType());
    FailureOr<ReductionSpread> spread =
        getReductionSpread(getDistributedLayout(input), input.getShape(), [&] {
          return op.emitOpError() << "input " << input << ": ";
        });
    if (failed(spread))
      return failure();
    tile::ReduceKind kind = op.getKind();
    Value registers = adaptor.getInput();
    int64_t count = cast<VectorType>(registers.getType()).getNumElements();
    Value acc;
    for (int64_t r = 0; r < count; ++r) {
      Value x = vector::ExtractOp::create(rewriter, loc, registers, r);
      acc = acc ? combineReduction(rewriter, loc, kind, acc, x) : x;
    }
    for (int64_t mask : spread->laneMasks) {
      Value other = gpu::ShuffleOp::create(rewriter, loc, acc, mask, 32,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      acc = combineReduction(rewriter, loc, kind, acc, other);
    }
    if (!adaptor.getScratch()) {
      rewriter.replaceOp(op, acc);
      return success();
    }
    Value scratch = adaptor.getScratch();
    Value tid = threadIdInRole(rewriter, loc);
    Value warp =
        arith::DivUIOp::create(rewriter, loc, tid, cIdx(rewriter, loc, 32));
    Value lane =
        arith::RemUIOp::create(rewriter, loc, tid, cIdx(rewriter, loc, 32));
    Value c0 = cIdx(rewriter, loc, 0);
    gpu::BarrierOp::create(rewriter, loc);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      Value first = arith::CmpIOp::create(rewriter, loc,
                                          arith::CmpIPredicate::eq, lane, c0);
      auto branch = scf::IfOp::create(rewriter, loc, first,
                                      /*withElseRegion=*/false);
      rewriter.setInsertionPointToStart(branch.thenBlock());
      memref::StoreOp::create(rewriter, loc, acc, scratch,
                              ValueRange{c0, warp});
    }
    gpu::BarrierOp::create(rewriter, loc);
    Value result;
    for (int64_t w : spread->warps) {
      Value x = memref::LoadOp::create(rewriter, loc, scratch,
                                       ValueRange{c0, cIdx(rewriter, loc, w)});
      result = result ? combineReduction(rewriter, loc, kind, result, x) : x;
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tiled_attn::populateCtaReducePatterns(
    TileGPUToNVVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<CtaReduceToGPU>(converter, patterns.getContext());
}
