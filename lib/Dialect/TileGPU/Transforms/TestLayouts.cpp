//===- TestLayouts.cpp - Check distributed layouts' thread maps -----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h"

namespace tiled_attn::tilegpu {
#define GEN_PASS_DEF_TESTTILEGPULAYOUTSPASS
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tiled_attn::tilegpu

using namespace mlir;
using namespace tiled_attn::tilegpu;

namespace {

/// Walks every (warp, lane, register) of `layout` over a tile of `shape`;
/// returns how many threads hold each element, or an error.
LogicalResult checkLayout(DistributedLayoutAttrInterface layout,
                          ArrayRef<int64_t> shape, Location loc,
                          raw_ostream &os) {
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  SmallVector<int64_t> held(elements, 0);
  int64_t warps = layout.getWarpCount(), regs = layout.getRegisterCount(shape);
  for (int64_t w = 0; w < warps; ++w)
    for (int64_t l = 0; l < 32; ++l)
      for (int64_t r = 0; r < regs; ++r) {
        SmallVector<int64_t> c = layout.getElementCoordinates(shape, w, l, r);
        int64_t linear = 0;
        for (auto [i, d] : llvm::zip_equal(c, shape)) {
          if (i < 0 || i >= d)
            return emitError(loc)
                   << "warp " << w << " lane " << l << " register " << r
                   << " maps outside the tile";
          linear = linear * d + i;
        }
        ++held[linear];
      }
  int64_t times = held.front();
  if (llvm::any_of(held, [&](int64_t n) { return n != times; }) || !times)
    return emitError(loc) << "elements are held unevenly (or not at all)";
  os << RankedTensorType::get(shape, Float32Type::get(loc.getContext()), layout)
     << ": " << 32 * warps << " threads x " << regs
     << " registers, each element held " << times << " time(s)\n  warp 0 "
     << "lane 0:";
  for (int64_t r = 0; r < regs && r < 16; ++r) {
    os << " (";
    llvm::interleaveComma(layout.getElementCoordinates(shape, 0, 0, r), os);
    os << ")";
  }
  os << "\n";
  return success();
}

struct TestTileGPULayoutsPass final
    : tiled_attn::tilegpu::impl::TestTileGPULayoutsPassBase<
          TestTileGPULayoutsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    for (Type type : func.getArgumentTypes())
      if (DistributedLayoutAttrInterface layout = getDistributedLayout(type))
        if (failed(checkLayout(layout, cast<RankedTensorType>(type).getShape(),
                               func.getLoc(), llvm::outs())))
          return signalPassFailure();
  }
};

} // namespace
