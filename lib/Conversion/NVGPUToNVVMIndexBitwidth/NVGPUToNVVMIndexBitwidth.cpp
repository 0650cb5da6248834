//===- NVGPUToNVVMIndexBitwidth.cpp - nvgpu to NVVM, chosen index width --===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/Passes.h"

#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tiled_attn {
#define GEN_PASS_DEF_CONVERTNVGPUTONVVMWITHINDEXBITWIDTHPASS
#include "tiled_attn/Conversion/Passes.h.inc"
} // namespace tiled_attn

using namespace mlir;

namespace {

struct ConvertNVGPUToNVVMWithIndexBitwidthPass final
    : tiled_attn::impl::ConvertNVGPUToNVVMWithIndexBitwidthPassBase<
          ConvertNVGPUToNVVMWithIndexBitwidthPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    if (indexBitwidth != 32 && indexBitwidth != 64) {
      getOperation()->emitError()
          << "convert-nvgpu-to-nvvm-index-bitwidth: index-bitwidth must be "
             "32 or 64, got "
          << unsigned{indexBitwidth};
      return signalPassFailure();
    }
    LowerToLLVMOptions options(ctx);
    options.overrideIndexBitwidth(indexBitwidth);
    LLVMTypeConverter converter(ctx, options);
    // The conversions upstream's pass adds for the types we use: the copy
    // group token is an i32, and GPU memory spaces become NVVM's numbers.
    converter.addConversion([&](nvgpu::DeviceAsyncTokenType type) -> Type {
      return converter.convertType(IntegerType::get(type.getContext(), 32));
    });
    nvgpu::populateCommonGPUTypeAndAttributeConversions(converter);
    RewritePatternSet patterns(ctx);
    populateNVGPUToNVVMConversionPatterns(converter, patterns);
    LLVMConversionTarget target(*ctx);
    target.addLegalDialect<NVVM::NVVMDialect>();
    target.addIllegalDialect<nvgpu::NVGPUDialect>();
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
