//===- HeavyFirst.cpp - Longest causal programs first ---------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The launch grid is (nq, H, B) with nq = ceil(S_q / BLOCK_M), and the GPU
// starts programs in the order of the linear id L = x + nq * (y + H * z).
// In a causal kernel the cost of a program grows with its query block, so
// the pass renumbers the programs so that L counts query blocks downwards,
// with the heads innermost:
//
//   m = nq - 1 - L / (H * B)
//   h = (L mod (H * B)) mod H
//   b = (L mod (H * B)) / H
//
// Every (m, h, b) is reached exactly once. Programs then start in
// longest-processing-time-first order over the whole grid, and the last
// wave is made of the shortest programs of every head.
//
// With all-masks, a kernel without a causal mask is renumbered the same
// way with its query blocks upwards (m = L / (H * B)): the heads' programs
// of one query block run together, and a tensor broadcast over the heads
// that they all read (a bias or mask [B, 1, S_q, S_k]) comes from L2.
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
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // The option first, whether or not the kernel has a mask to balance.
    if (headGroup < 0) {
      func.emitError() << "tile-heavy-first: head-group must be >= 0, got "
                       << static_cast<int64_t>(headGroup);
      return signalPassFailure();
    }
    auto sdpa = func->getAttrOfType<SdpaAttr>(TileDialect::getSdpaAttrName());
    if (!sdpa || (sdpa.getCausal() == CausalMode::None && !allMasks))
      return;
    const bool upwards = sdpa.getCausal() == CausalMode::None;
    // A varlen kernel's sequences have their own lengths: the order of its
    // programs by work is not the grid's.
    if (sdpa.getFeatures().varlen) {
      func.emitError() << "tile-heavy-first: does not reorder a varlen "
                          "kernel's programs (its sequences' lengths are "
                          "known only at run time)";
      return signalPassFailure();
    }
    // The SDPA ABI: (q, k, v, o, scale), q a rank-4 view [B, H, S_q, D].
    auto qType = func.getNumArguments() < 1
                     ? ViewType()
                     : dyn_cast<ViewType>(func.getArgumentTypes()[0]);
    if (!qType || qType.getRank() != 4) {
      func.emitError() << "tile-heavy-first: expects the rank-4 query view "
                          "[B, H, S_q, D] as the first argument of an SDPA "
                          "kernel";
      return signalPassFailure();
    }
    SmallVector<BlockIdOp> ids;
    func.walk([&](BlockIdOp id) { ids.push_back(id); });
    if (ids.empty())
      return;

    // The new program coordinates, computed once at the function entry.
    OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
    Location loc = func.getLoc();
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value q = findArgument(func, ArgRole::Q);
    Value x = BlockIdOp::create(b, loc, Dim::X);
    Value y = BlockIdOp::create(b, loc, Dim::Y);
    Value z = BlockIdOp::create(b, loc, Dim::Z);
    Value batch = DimOp::create(b, loc, q, 0);
    Value heads = DimOp::create(b, loc, q, 1);
    Value seqQ = DimOp::create(b, loc, q, 2);
    int64_t bm = sdpa.getBlockM();
    Value nq = arith::DivUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, seqQ, cst(bm - 1)), cst(bm));
    // L = x + nq * (y + H * z)
    Value linear = arith::AddIOp::create(
        b, loc, x,
        arith::MulIOp::create(
            b, loc, nq,
            arith::AddIOp::create(b, loc, y,
                                  arith::MulIOp::create(b, loc, heads, z))));
    // Heads are taken G at a time (the last group may be smaller), so that
    // the K/V blocks that the running programs read stay few enough for L2.
    Value programsPerBlock = arith::MulIOp::create(b, loc, heads, batch);
    Value group = programsPerBlock;
    Value first, local = linear;
    if (headGroup > 0) {
      Value g = cst(headGroup);
      Value index = arith::DivUIOp::create(
          b, loc, linear, arith::MulIOp::create(b, loc, nq, g));
      first = arith::MulIOp::create(b, loc, index, g);
      local = arith::SubIOp::create(b, loc, linear,
                                    arith::MulIOp::create(b, loc, first, nq));
      group = arith::MinUIOp::create(
          b, loc, g, arith::SubIOp::create(b, loc, programsPerBlock, first));
    }
    // Query blocks downwards (the longest causal programs first), or
    // upwards without a causal mask (all-masks).
    Value m = arith::DivUIOp::create(b, loc, local, group);
    if (!upwards)
      m = arith::SubIOp::create(b, loc,
                                arith::SubIOp::create(b, loc, nq, cst(1)), m);
    Value head = arith::RemUIOp::create(b, loc, local, group);
    if (headGroup > 0)
      head = arith::AddIOp::create(b, loc, first, head);
    Value h = arith::RemUIOp::create(b, loc, head, heads);
    Value n = arith::DivUIOp::create(b, loc, head, heads);

    for (BlockIdOp id : ids) {
      Value replacement = id.getDim() == Dim::X   ? m
                          : id.getDim() == Dim::Y ? h
                                                  : n;
      id.getResult().replaceAllUsesWith(replacement);
      id.erase();
    }
  }
};

} // namespace
