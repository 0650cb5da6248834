//===- Passes.h - Conversions out of the tile dialect -----------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_CONVERSION_PASSES_H
#define TILED_ATTN_CONVERSION_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tiled_attn {

#define GEN_PASS_DECL
#include "tiled_attn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tiled_attn/Conversion/Passes.h.inc"

} // namespace tiled_attn

#endif // TILED_ATTN_CONVERSION_PASSES_H
