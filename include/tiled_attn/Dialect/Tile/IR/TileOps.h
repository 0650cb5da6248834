//===- TileOps.h - Operations of the tile dialect ---------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILE_IR_TILEOPS_H
#define TILED_ATTN_DIALECT_TILE_IR_TILEOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"

#define GET_OP_CLASSES
#include "tiled_attn/Dialect/Tile/IR/TileOps.h.inc"

#endif // TILED_ATTN_DIALECT_TILE_IR_TILEOPS_H
