//===- BlockMaskKernel.cpp - A block mask from a mask function ------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// One program per query block of the block mask (and head and batch entry
// of the block_kinds view), looping over the key blocks:
//
//   q_in[i] = q0 + i < S_q
//   for j in [0, ceil(S_k / N)):
//     mask    = tile.apply @mask_fn at(b, h, q0, j * N)     (N x N, i1)
//     seen    = mask & q_in & (key < S_k)
//     covered = mask | !q_in
//     some    = max(seen ? 1 : 0)        (a reduction to a scalar)
//     all     = min(covered ? 1 : 0)
//     kind    = some ? (all and (j + 1) * N <= S_k ? Full : Partial) : Empty
//     block_kinds[b, h, m, j] = kind     (tile.write)
//
// with N = kBlockMaskSize. The reductions combine the whole program's
// elements (tilegpu.cta_reduce on the GPU).
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Kernels/BlockMaskKernel.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Kernels/KernelFunctions.h"
#include "tiled_attn/Kernels/KernelVariant.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tile;

FailureOr<func::FuncOp>
tiled_attn::buildBlockMaskKernel(OpBuilder &b, Location loc,
                                 const BlockMaskKernelConfig &cfg) {
  MLIRContext *ctx = b.getContext();
  auto module =
      dyn_cast_or_null<ModuleOp>(b.getInsertionBlock()->getParentOp());
  KernelFunction maskFn;
  maskFn.fn = module ? module.lookupSymbol<func::FuncOp>(cfg.maskFunction)
                     : func::FuncOp();
  if (!maskFn.fn || maskFn.fn.isExternal())
    return emitError(loc) << "no function '" << cfg.maskFunction
                          << "' with a body in the module for the block "
                             "mask kernel";
  KernelArguments args;
  if (failed(addFunctionCaptures(b, maskFn, /*isScore=*/false, args)))
    return failure();
  // (A captured input cannot take a role's name: #tile.arg refuses it.)
  int64_t dyn = ShapedType::kDynamic;
  unsigned seqQArg =
      args.add(b, b.getIndexType(), ArgAttr::get(ctx, ArgRole::SeqQ, {}));
  unsigned seqKArg =
      args.add(b, b.getIndexType(), ArgAttr::get(ctx, ArgRole::SeqK, {}));
  unsigned kindsArg =
      args.add(b, ViewType::get(ctx, {dyn, dyn, dyn, dyn}, b.getI8Type()),
               ArgAttr::get(ctx, ArgRole::BlockKinds, {}));

  auto func =
      func::FuncOp::create(b, loc, cfg.name, b.getFunctionType(args.types, {}));
  func.setAllArgAttrs(args.attrs);
  Block *entry = func.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);

  const int64_t n = kBlockMaskSize;
  Type f32 = b.getF32Type(), i1 = b.getI1Type(), i8 = b.getI8Type();
  auto tile = [&](ArrayRef<int64_t> shape, Type t) {
    return RankedTensorType::get(shape, t);
  };
  auto cIndex = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto splat = [&](double v) -> Value {
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(tile({n, n}, f32), b.getF32FloatAttr(v)));
  };
  Value seqQ = func.getArgument(seqQArg), seqK = func.getArgument(seqKArg);
  Value kinds = func.getArgument(kindsArg);
  Value m = BlockIdOp::create(b, loc, Dim::X);
  Value h = BlockIdOp::create(b, loc, Dim::Y);
  Value batch = BlockIdOp::create(b, loc, Dim::Z);
  Value cN = cIndex(n);
  Value q0 = arith::MulIOp::create(b, loc, m, cN);
  // The block's rows within S_q (as i32 positions against S_q).
  Value rows = IotaOp::create(b, loc, tile({n}, b.getI32Type()), q0,
                              /*dim=*/IntegerAttr());
  Value seqQ32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), seqQ);
  Value rowsIn = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::slt, rows,
      tensor::SplatOp::create(b, loc, tile({n}, b.getI32Type()), seqQ32));
  Value rowsInTile = BroadcastOp::create(b, loc, tile({n, n}, i1), rowsIn, 1);
  Value one = splat(1.0), zero = splat(0.0);
  Value numBlocks = arith::CeilDivUIOp::create(b, loc, seqK, cN);
  scf::ForOp::create(
      b, loc, cIndex(0), numBlocks, cIndex(1), ValueRange{},
      [&](OpBuilder &b, Location loc, Value j, ValueRange) {
        Value k0 = arith::MulIOp::create(b, loc, j, cN);
        SmallVector<Value> captures;
        for (unsigned a : maskFn.captures)
          captures.push_back(func.getArgument(a));
        Value visible =
            ApplyOp::create(b, loc, tile({n, n}, i1), maskFn.fn.getSymName(),
                            /*score=*/Value(), batch, h, q0, k0, captures);
        Value keysIn = BoundsMaskOp::create(b, loc, tile({n}, i1),
                                            ValueRange{k0}, ValueRange{seqK});
        Value keysInTile =
            BroadcastOp::create(b, loc, tile({n, n}, i1), keysIn, 0);
        Value seen = arith::AndIOp::create(
            b, loc, arith::AndIOp::create(b, loc, visible, rowsInTile),
            keysInTile);
        Value rowsOut = arith::XOrIOp::create(
            b, loc, rowsInTile,
            arith::ConstantOp::create(
                b, loc, DenseElementsAttr::get(tile({n, n}, i1), true)));
        Value covered = arith::OrIOp::create(b, loc, visible, rowsOut);
        auto reduce = [&](Value bits, ReduceKind kind) {
          Value values = arith::SelectOp::create(b, loc, bits, one, zero);
          Value perRow =
              ReduceOp::create(b, loc, tile({n}, f32), values, kind, 1);
          return ReduceOp::create(b, loc, f32, perRow, kind, 0).getResult();
        };
        Value half = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.5));
        Value some = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                           reduce(seen, ReduceKind::Max), half);
        Value all =
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                  reduce(covered, ReduceKind::Min), half);
        Value whole =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                  arith::AddIOp::create(b, loc, k0, cN), seqK);
        auto kind = [&](BlockKind k) -> Value {
          return arith::ConstantOp::create(
              b, loc, b.getIntegerAttr(i8, static_cast<int64_t>(k)));
        };
        Value full = arith::AndIOp::create(b, loc, all, whole);
        Value visited = arith::SelectOp::create(
            b, loc, full, kind(BlockKind::Full), kind(BlockKind::Partial));
        Value result = arith::SelectOp::create(b, loc, some, visited,
                                               kind(BlockKind::Empty));
        WriteOp::create(b, loc, result, kinds, ValueRange{batch, h, m, j});
        scf::YieldOp::create(b, loc);
      });
  func::ReturnOp::create(b, loc);
  return func;
}
