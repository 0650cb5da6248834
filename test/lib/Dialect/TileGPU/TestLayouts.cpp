//===- TestLayouts.cpp - Check distributed layouts' thread maps -----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

//
// test-tilegpu-layouts: for each argument of a function whose type is a tile
// in a distributed layout, walks every (warp, lane, register) through the
// layout interface and checks that each lands inside the tile and that
// every element is held by the same number of threads (1, or the
// replication of a layout such as `cols`); prints the result and the first
// lane's registers of the first warp. It is how the mma.sync, wgmma and
// tcgen05 layouts are tested against the interface they share:
//
//   tensor<64x16xf32, #tilegpu.wgmma<acc, warpgroups = 1>>: 128 threads x
//   8 registers, each element held 1 time(s)
//     warp 0 lane 0: (0, 0) (0, 1) (8, 0) (8, 1) (0, 8) (0, 9) (8, 8) (8, 9)
//
// A test pass: tiled-attn-opt registers it, the pass reference leaves it out.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

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
    : PassWrapper<TestTileGPULayoutsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestTileGPULayoutsPass)

  StringRef getArgument() const override { return "test-tilegpu-layouts"; }
  StringRef getDescription() const override {
    return "Print and check the thread map of every distributed layout in a "
           "function's signature";
  }
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

namespace tiled_attn::test {
void registerTestTileGPULayoutsPass() {
  PassRegistration<TestTileGPULayoutsPass>();
}
} // namespace tiled_attn::test
