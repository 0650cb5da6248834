//===- SplitMergeKernel.cpp - Merge split-KV partial results --------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// One program per block of query rows and block of block_d columns of one
// (batch, head): program x takes row block x / (D_v / block_d) and column
// block x % (D_v / block_d) (the manifest's "programs_per_row_block" tells
// the runtime to launch that many along x per row block). One pass over the
// chunks s, an online softmax over them (as the forward kernel's over key
// blocks):
//
//   m' = max(m, lse_s)                  (rows; -inf while every chunk is)
//   l = l * exp(m - m') + exp(lse_s - m')        (m' taken as 0 where it
//   acc = acc * exp(m - m') + exp(lse_s - m') o_s[:, c]   is -inf, and the
//                                                          rescale as 1)
//   then o[:, c] = acc / l              (0 where l == 0)
//   lse = m + log(l)                    (-inf where l == 0; written by the
//                                        programs of column block 0)
//
// The loop takes chunksPerStep chunks a step, their reads issued together
// (a chunk past the last reads past the views: -inf and 0, no weight), so
// a step waits one memory latency, not one per chunk; the columns are
// spread over programs.
// The partial results are read with tile.gather at the rows' and columns'
// positions (reads past S_q give -inf and 0, which the stores drop).
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Kernels/SplitMergeKernel.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tile;

FailureOr<func::FuncOp>
tiled_attn::buildSplitMergeKernel(OpBuilder &b, Location loc,
                                  const SplitMergeKernelConfig &cfg) {
  MLIRContext *ctx = b.getContext();
  const int64_t bm = cfg.blockM, bd = cfg.blockD, dv = cfg.headDimV;
  if (!cfg.elementType ||
      (!cfg.elementType.isF16() && !cfg.elementType.isBF16()))
    return emitError(loc) << "the merged output is f16 or bf16";
  if (cfg.chunksPerStep < 0 || cfg.chunksPerStep > 16)
    return emitError(loc) << "chunks per step must be in [1, 16] (0: "
                             "chosen), got "
                          << cfg.chunksPerStep;
  if (bm < 16 || bm > 256 || bm % 16 || bd < 8 || bd % 8 || dv < bd ||
      dv > 256 || dv % bd)
    return emitError(loc) << "block_m must be a multiple of 16 in [16, 256], "
                             "block_d a multiple of 8 dividing head_dim_v "
                             "(at most 256); got block_m "
                          << bm << ", block_d " << bd << ", head_dim_v " << dv;
  Type f32 = b.getF32Type(), i32 = b.getI32Type(), index = b.getIndexType();
  int64_t dyn = ShapedType::kDynamic;
  auto arg = [&](ArgRole role) { return ArgAttr::get(ctx, role, {}); };
  SmallVector<Type> types = {
      ViewType::get(ctx, {dyn, dyn, dyn, dv}, f32),
      ViewType::get(ctx, {dyn, dyn, dyn}, f32), index,
      ViewType::get(ctx, {dyn, dyn, dyn, dv}, cfg.elementType),
      ViewType::get(ctx, {dyn, dyn, dyn}, f32)};
  SmallVector<ArgRole> roles = {ArgRole::OPartial, ArgRole::LsePartial,
                                ArgRole::NumSplits, ArgRole::O, ArgRole::Lse};
  auto func =
      func::FuncOp::create(b, loc, cfg.name, b.getFunctionType(types, {}));
  for (auto [i, role] : llvm::enumerate(roles))
    func.setArgAttr(i, TileDialect::getArgAttrName(), arg(role));
  Block *entry = func.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  Value oPartial = func.getArgument(0), lsePartial = func.getArgument(1),
        splits = func.getArgument(2), o = func.getArgument(3),
        lse = func.getArgument(4);

  auto tile = [&](ArrayRef<int64_t> shape, Type t) {
    return RankedTensorType::get(shape, t);
  };
  auto cIndex = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto splat = [&](ArrayRef<int64_t> shape, double v) -> Value {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(tile(shape, f32), b.getF32FloatAttr(v)));
  };
  const double inf = std::numeric_limits<double>::infinity();
  // The partial results are the split kernel's, launched just before: the
  // runtime launches this program as its dependent, so it may start while
  // that kernel runs (its launch hidden), and waits here for it to end.
  WaitPriorGridsOp::create(b, loc);
  Value c0 = cIndex(0);
  const int64_t columnBlocks = dv / bd;
  Value x = BlockIdOp::create(b, loc, Dim::X);
  Value m = arith::DivUIOp::create(b, loc, x, cIndex(columnBlocks));
  Value column = arith::RemUIOp::create(b, loc, x, cIndex(columnBlocks));
  Value h = BlockIdOp::create(b, loc, Dim::Y);
  Value batch = BlockIdOp::create(b, loc, Dim::Z);
  Value q0 = arith::MulIOp::create(b, loc, m, cIndex(bm));
  Value rows = IotaOp::create(b, loc, tile({bm}, i32), q0, IntegerAttr());
  Value first = arith::MulIOp::create(b, loc, h, splits);
  // The partials' head index of chunk s, or one past the view (its reads
  // give the pads: -inf and 0) for s past the last chunk.
  auto chunkAt = [&](OpBuilder &b, Location loc, Value view, Value s) -> Value {
    Value valid =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, s, splits);
    return arith::SelectOp::create(b, loc, valid,
                                   arith::AddIOp::create(b, loc, first, s),
                                   DimOp::create(b, loc, view, 1));
  };
  Value negInf = splat({bm}, -inf), zero = splat({bm}, 0.0),
        one = splat({bm}, 1.0);
  Value rows2 =
      IotaOp::create(b, loc, tile({bm, bd}, i32), q0, b.getI64IntegerAttr(0));
  Value cols = IotaOp::create(b, loc, tile({bm, bd}, i32),
                              arith::MulIOp::create(b, loc, column, cIndex(bd)),
                              b.getI64IntegerAttr(1));
  auto rowsTile = [&](Value v) {
    return BroadcastOp::create(b, loc, tile({bm, bd}, f32), v, 1).getResult();
  };
  // The running largest log-sum-exp m, the sum l of exp(lse_s - m) and the
  // weighted outputs, rescaled by exp(m - m') when m grows to m' (the
  // largest of m and the step's chunks). (A row every chunk of which is
  // empty keeps m = -inf: its weights are 0, never NaN.)
  const int64_t step = cfg.chunksPerStep
                           ? cfg.chunksPerStep
                           : std::clamp<int64_t>(64 * 32 / (bm * bd), 1, 8);
  auto merged = scf::ForOp::create(
      b, loc, c0, splits, cIndex(step),
      ValueRange{negInf, zero, splat({bm, bd}, 0.0)},
      [&](OpBuilder &b, Location loc, Value s0, ValueRange iter) {
        SmallVector<Value> lses, parts;
        for (int64_t i = 0; i < step; ++i) {
          Value s = arith::AddIOp::create(b, loc, s0, cIndex(i));
          lses.push_back(GatherOp::create(
              b, loc, tile({bm}, f32), lsePartial,
              ValueRange{batch, chunkAt(b, loc, lsePartial, s), rows},
              b.getF64FloatAttr(-inf)));
          parts.push_back(GatherOp::create(
              b, loc, tile({bm, bd}, f32), oPartial,
              ValueRange{batch, chunkAt(b, loc, oPartial, s), rows2, cols},
              b.getF64FloatAttr(0.0)));
        }
        Value top = iter[0];
        for (Value lse : lses)
          top = arith::MaximumFOp::create(b, loc, top, lse);
        Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           top, negInf);
        Value base = arith::SelectOp::create(b, loc, none, zero, top);
        // exp(m - m') and exp(lse_s - m'); with m' = -inf, 1 and 0.
        Value scale = math::ExpOp::create(
            b, loc, arith::SubFOp::create(b, loc, iter[0], base));
        scale = arith::SelectOp::create(b, loc, none, one, scale);
        Value sum = arith::MulFOp::create(b, loc, iter[1], scale);
        Value acc = arith::MulFOp::create(b, loc, iter[2], rowsTile(scale));
        for (auto [lse, part] : llvm::zip(lses, parts)) {
          Value w = math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, lse, base));
          sum = arith::AddFOp::create(b, loc, sum, w);
          acc = arith::AddFOp::create(
              b, loc, acc, arith::MulFOp::create(b, loc, part, rowsTile(w)));
        }
        scf::YieldOp::create(b, loc, ValueRange{top, sum, acc});
      });
  Value top = merged.getResult(0), sum = merged.getResult(1);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zero);
  Value inv = arith::SelectOp::create(b, loc, empty, zero,
                                      arith::DivFOp::create(b, loc, one, sum));
  Value acc = arith::MulFOp::create(
      b, loc, merged.getResult(2),
      BroadcastOp::create(b, loc, tile({bm, bd}, f32), inv, 1));
  Value out =
      arith::TruncFOp::create(b, loc, tile({bm, bd}, cfg.elementType), acc);
  StoreOp::create(b, loc, out, o, ValueRange{batch, h, m, column},
                  /*mask=*/Value());
  // The log-sum-exps, once per row block: by its column block 0.
  Value firstColumn =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, column, c0);
  auto ifFirst = scf::IfOp::create(b, loc, firstColumn, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    Value logSum = arith::AddFOp::create(
        b, loc, top,
        math::LogOp::create(b, loc,
                            arith::SelectOp::create(b, loc, empty, one, sum)));
    Value lseOut = arith::SelectOp::create(b, loc, empty, negInf, logSum);
    StoreOp::create(b, loc, lseOut, lse, ValueRange{batch, h, m},
                    /*mask=*/Value());
  }
  func::ReturnOp::create(b, loc);
  return func;
}
