//===- RetargetFamily.cpp - Emit for a family target ----------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The tcgen05 family's route to B300 with LLVM 22 (see the pass's
// description, and test/Target/tcgen05-family-targets.mlir for the same
// route through llc): the module is lowered and verified for sm_100a and
// serialized for sm_100f.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace tiled_attn {
#define GEN_PASS_DEF_TILEGPURETARGETFAMILYPASS
#include "tiled_attn/Conversion/Passes.h.inc"
} // namespace tiled_attn

using namespace mlir;

namespace {

struct TileGPURetargetFamilyPass final
    : tiled_attn::impl::TileGPURetargetFamilyPassBase<
          TileGPURetargetFamilyPass> {
  using Base::Base;
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    if (chip.empty() || verifiedAs.empty()) {
      module.emitError() << "tilegpu-retarget-family: needs chip= (the "
                            "family target) and verified-as= (the chip the "
                            "module was verified for)";
      return signalPassFailure();
    }
    ArrayAttr targets = module.getTargetsAttr();
    if (!targets || targets.size() != 1 ||
        !isa<NVVM::NVVMTargetAttr>(targets[0])) {
      module.emitError() << "tilegpu-retarget-family: expects one "
                            "#nvvm.target on the module";
      return signalPassFailure();
    }
    auto target = cast<NVVM::NVVMTargetAttr>(targets[0]);
    if (target.getChip() != verifiedAs) {
      module.emitError() << "tilegpu-retarget-family: the module's target "
                            "is "
                         << target.getChip() << ", not " << verifiedAs
                         << ": its ops were not verified for the chip this "
                            "pass vouches for";
      return signalPassFailure();
    }
    auto retargeted = NVVM::NVVMTargetAttr::get(
        &getContext(), target.getO(), target.getTriple(), chip,
        features.empty() ? target.getFeatures() : StringRef(features),
        target.getFlags(), target.getLink(), /*verifyTarget=*/false);
    module.setTargetsAttr(ArrayAttr::get(&getContext(), {retargeted}));
  }
};

} // namespace
