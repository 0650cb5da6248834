//===- TileGPUOps.h - Operations of the tilegpu dialect ---------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUOPS_H
#define TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUOPS_H

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h.inc"

#endif // TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUOPS_H
