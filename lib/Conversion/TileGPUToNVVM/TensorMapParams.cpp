//===- TensorMapParams.cpp - Tensor maps as grid-constant parameters -----===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/Passes.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace tiled_attn {
#define GEN_PASS_DEF_TILEGPUTENSORMAPPARAMSPASS
#include "tiled_attn/Conversion/Passes.h.inc"
} // namespace tiled_attn

using namespace mlir;
using namespace tiled_attn::tilegpu;

namespace {

/// The size and alignment of a CUtensorMap.
constexpr int64_t kTensorMapBytes = 128, kTensorMapAlign = 64;

struct TileGPUTensorMapParamsPass final
    : tiled_attn::impl::TileGPUTensorMapParamsPassBase<
          TileGPUTensorMapParamsPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    auto bytes =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), kTensorMapBytes);
    WalkResult walk = getOperation().walk([&](LLVM::LLVMFuncOp func) {
      auto params =
          func->getAttrOfType<ArrayAttr>(TileGPUDialect::getParamsAttrName());
      if (!params)
        return WalkResult::advance();
      if (params.size() != func.getNumArguments()) {
        func.emitError() << "tilegpu-tensor-map-params: '" << func.getName()
                         << "' has " << func.getNumArguments()
                         << " parameters but tilegpu.params lists "
                         << params.size();
        return WalkResult::interrupt();
      }
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
        auto param = dyn_cast<KernelParamAttr>(params[i]);
        if (!param || param.getKind() != ParamKind::TensorMap)
          continue;
        if (!isa<LLVM::LLVMPointerType>(func.getArgumentTypes()[i]) ||
            !func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName())) {
          func.emitError() << "tilegpu-tensor-map-params: tensor map "
                              "parameter #"
                           << i << " of '" << func.getName()
                           << "' must be a pointer parameter of a kernel "
                              "(run it after convert-gpu-to-nvvm)";
          return WalkResult::interrupt();
        }
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(bytes));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(kTensorMapAlign));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                        b.getUnitAttr());
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
