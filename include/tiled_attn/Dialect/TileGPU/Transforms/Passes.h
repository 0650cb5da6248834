//===- Passes.h - Transforms at the GPU level -------------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILEGPU_TRANSFORMS_PASSES_H
#define TILED_ATTN_DIALECT_TILEGPU_TRANSFORMS_PASSES_H

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tiled_attn::tilegpu {

#define GEN_PASS_DECL
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tiled_attn/Dialect/TileGPU/Transforms/Passes.h.inc"

} // namespace tiled_attn::tilegpu

#endif // TILED_ATTN_DIALECT_TILEGPU_TRANSFORMS_PASSES_H
