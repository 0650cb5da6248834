//===- AttachTarget.cpp - Record the target on the module -----------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h"
#include "tiled_attn/Target/TargetInfo.h"

namespace tiled_attn::tilegpu {
#define GEN_PASS_DEF_TILEGPUATTACHTARGETPASS
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace tiled_attn::tilegpu

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

namespace {

struct TileGPUAttachTargetPass final
    : tiled_attn::tilegpu::impl::TileGPUAttachTargetPassBase<
          TileGPUAttachTargetPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<TargetInfo> info = TargetInfo::lookup(chip);
    if (!info) {
      module.emitError() << "tilegpu-attach-target: unknown chip '" << chip
                         << "' (known: " << TargetInfo::knownChips() << ")";
      return signalPassFailure();
    }
    Family chosen = info->defaultFamily();
    if (!family.empty()) {
      std::optional<Family> named = symbolizeFamily(family);
      if (!named) {
        module.emitError() << "tilegpu-attach-target: unknown family '"
                           << family << "' (mma_sync, wgmma, tcgen05)";
        return signalPassFailure();
      }
      chosen = *named;
    }
    if (!info->hasFamily(chosen)) {
      module.emitError() << "tilegpu-attach-target: " << chip << " has no "
                         << stringifyFamily(chosen) << " matrix units";
      return signalPassFailure();
    }
    module->setAttr(TileGPUDialect::getTargetAttrName(),
                    TargetAttr::get(&getContext(), chip, chosen));
  }
};

} // namespace
