//===- SplitMergeKernel.cpp - Merge split-KV partial results --------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// One program per block of query rows of one (batch, head):
//
//   m = max_s lse_s                     (rows; -inf where every chunk is)
//   l = sum_s exp(lse_s - m)            (with m taken as 0 where it is -inf)
//   for each block of block_d columns c:
//     acc = sum_s (exp(lse_s - m) / l) o_s[:, c]
//     o[:, c] = acc                     (0 where l == 0)
//   lse = m + log(l)                    (-inf where l == 0)
//
// The partial results are read with tile.gather at the rows' and columns'
// positions (reads past S_q give -inf and 0, which the stores drop).
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Kernels/SplitMergeKernel.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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
  Value c0 = cIndex(0), c1 = cIndex(1);
  Value m = BlockIdOp::create(b, loc, Dim::X);
  Value h = BlockIdOp::create(b, loc, Dim::Y);
  Value batch = BlockIdOp::create(b, loc, Dim::Z);
  Value q0 = arith::MulIOp::create(b, loc, m, cIndex(bm));
  Value rows = IotaOp::create(b, loc, tile({bm}, i32), q0, IntegerAttr());
  Value first = arith::MulIOp::create(b, loc, h, splits);
  auto partialLse = [&](OpBuilder &b, Location loc, Value s) -> Value {
    Value at = arith::AddIOp::create(b, loc, first, s);
    return GatherOp::create(b, loc, tile({bm}, f32), lsePartial,
                            ValueRange{batch, at, rows},
                            b.getF64FloatAttr(-inf));
  };
  Value negInf = splat({bm}, -inf), zero = splat({bm}, 0.0);
  // The largest log-sum-exp of each row.
  Value top =
      scf::ForOp::create(
          b, loc, c0, splits, c1, ValueRange{negInf},
          [&](OpBuilder &b, Location loc, Value s, ValueRange iter) {
            Value x = partialLse(b, loc, s);
            scf::YieldOp::create(
                b, loc,
                ValueRange{arith::MaximumFOp::create(b, loc, iter[0], x)});
          })
          .getResult(0);
  Value none =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, top, negInf);
  Value base = arith::SelectOp::create(b, loc, none, zero, top);
  auto weight = [&](OpBuilder &b, Location loc, Value s) -> Value {
    return math::ExpOp::create(
        b, loc, arith::SubFOp::create(b, loc, partialLse(b, loc, s), base));
  };
  Value sum =
      scf::ForOp::create(
          b, loc, c0, splits, c1, ValueRange{zero},
          [&](OpBuilder &b, Location loc, Value s, ValueRange iter) {
            scf::YieldOp::create(b, loc,
                                 ValueRange{arith::AddFOp::create(
                                     b, loc, iter[0], weight(b, loc, s))});
          })
          .getResult(0);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zero);
  Value inv = arith::SelectOp::create(
      b, loc, empty, zero,
      arith::DivFOp::create(b, loc, splat({bm}, 1.0), sum));
  Value rows2 =
      IotaOp::create(b, loc, tile({bm, bd}, i32), q0, b.getI64IntegerAttr(0));
  for (int64_t c = 0; c < dv / bd; ++c) {
    Value cols = IotaOp::create(b, loc, tile({bm, bd}, i32), cIndex(c * bd),
                                b.getI64IntegerAttr(1));
    Value acc =
        scf::ForOp::create(
            b, loc, c0, splits, c1, ValueRange{splat({bm, bd}, 0.0)},
            [&](OpBuilder &b, Location loc, Value s, ValueRange iter) {
              Value at = arith::AddIOp::create(b, loc, first, s);
              Value part = GatherOp::create(
                  b, loc, tile({bm, bd}, f32), oPartial,
                  ValueRange{batch, at, rows2, cols}, b.getF64FloatAttr(0.0));
              Value w = arith::MulFOp::create(b, loc, weight(b, loc, s), inv);
              Value wide =
                  BroadcastOp::create(b, loc, tile({bm, bd}, f32), w, 1);
              Value add = arith::MulFOp::create(b, loc, part, wide);
              scf::YieldOp::create(
                  b, loc,
                  ValueRange{arith::AddFOp::create(b, loc, iter[0], add)});
            })
            .getResult(0);
    Value out =
        arith::TruncFOp::create(b, loc, tile({bm, bd}, cfg.elementType), acc);
    StoreOp::create(b, loc, out, o, ValueRange{batch, h, m, cIndex(c)},
                    /*mask=*/Value());
  }
  Value logSum = arith::AddFOp::create(
      b, loc, top,
      math::LogOp::create(
          b, loc,
          arith::SelectOp::create(b, loc, empty, splat({bm}, 1.0), sum)));
  Value lseOut = arith::SelectOp::create(b, loc, empty, negInf, logSum);
  StoreOp::create(b, loc, lseOut, lse, ValueRange{batch, h, m},
                  /*mask=*/Value());
  func::ReturnOp::create(b, loc);
  return func;
}
