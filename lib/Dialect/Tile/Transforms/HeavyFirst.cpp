//===- HeavyFirst.cpp - Longest causal programs first ---------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
//   %x = tile.block_id x
//
// becomes, in a causal SDPA kernel with query view %q and BLOCK_M = bm,
//
//   %x0 = tile.block_id x
//   %sq = tile.dim %q, 2
//   %x  = ((%sq + bm - 1) / bm - 1) - %x0
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEHEAVYFIRSTPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

using namespace mlir;
using namespace tiled_attn::tile;

namespace {

struct TileHeavyFirstPass final
    : tiled_attn::tile::impl::TileHeavyFirstPassBase<TileHeavyFirstPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto sdpa = func->getAttrOfType<SdpaAttr>(TileDialect::getSdpaAttrName());
    if (!sdpa || sdpa.getCausal() == CausalMode::None)
      return;
    // The SDPA ABI: (q, k, v, o, scale), q a rank-4 view [B, H, S_q, D].
    if (func.getNumArguments() < 1 || !isa<ViewType>(func.getArgumentTypes()[0])) {
      func.emitError() << "tile-heavy-first: expects the query view as the "
                          "first argument of an SDPA kernel";
      return signalPassFailure();
    }
    SmallVector<BlockIdOp> ids;
    func.walk([&](BlockIdOp id) {
      if (id.getDim() == Dim::X)
        ids.push_back(id);
    });
    for (BlockIdOp id : ids) {
      OpBuilder b(id->getContext());
      b.setInsertionPointAfter(id);
      Location loc = id.getLoc();
      auto cst = [&](int64_t v) {
        return arith::ConstantIndexOp::create(b, loc, v);
      };
      int64_t bm = sdpa.getBlockM();
      Value seqQ = DimOp::create(b, loc, func.getArgument(0), 2);
      Value blocks = arith::DivUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, seqQ, cst(bm - 1)), cst(bm));
      Value reversed = arith::SubIOp::create(
          b, loc, arith::SubIOp::create(b, loc, blocks, cst(1)), id);
      id.getResult().replaceAllUsesExcept(reversed, reversed.getDefiningOp());
    }
  }
};

} // namespace
