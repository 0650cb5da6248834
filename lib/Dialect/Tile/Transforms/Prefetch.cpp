//===- Prefetch.cpp - (being written) ------------------------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"

namespace tiled_attn::tile {
#define GEN_PASS_DEF_TILEPREFETCHPASS
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace tiled_attn::tile

namespace {
struct TilePrefetchPass final
    : tiled_attn::tile::impl::TilePrefetchPassBase<TilePrefetchPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError() << "not implemented yet";
    signalPassFailure();
  }
};
} // namespace
