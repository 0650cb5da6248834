//===- KernelFunctions.h - Score and mask functions of a kernel -*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What the kernel builders share about the score and mask functions they
// inline (tile.apply): the functions' signatures and the kernel arguments
// their captured inputs become.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_KERNELS_KERNELFUNCTIONS_H
#define TILED_ATTN_KERNELS_KERNELFUNCTIONS_H

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace tiled_attn {

/// A kernel's arguments as a builder collects them: their types, their
/// attributes (each a tile.arg role), and the captured inputs by name.
struct KernelArguments {
  llvm::SmallVector<mlir::Type> types;
  llvm::SmallVector<mlir::DictionaryAttr> attrs;
  llvm::StringMap<unsigned> captured;

  /// Adds an argument of `type` with `role`; returns its number.
  unsigned add(mlir::OpBuilder &b, mlir::Type type, tile::ArgAttr role);
};

/// A score or mask function that a kernel inlines, and the numbers of the
/// kernel arguments its captured inputs take, in its order.
struct KernelFunction {
  mlir::func::FuncOp fn;
  llvm::SmallVector<unsigned> captures;
};

/// Checks `fn.fn`'s signature (a score function: (score: f32, b, h, q_idx,
/// kv_idx: index, captured...) -> f32; a mask function: (b, h, q_idx,
/// kv_idx: index, captured...) -> i1; each captured input marked
/// #tile.arg<captured, "name">) and adds its captured inputs to `args`,
/// once per name (one name, one type), recording their numbers in
/// `fn.captures`.
/// The functions `names` of `module` (null: none has them): a score
/// function (an f32 result) into `score`, any other into `mask`, at most
/// one of each (an error at `loc` names two of a kind). The first name the
/// module lacks, or has without a body, goes into `missing` for the caller
/// to report as it sees fit.
mlir::LogicalResult
findKernelFunctions(mlir::Location loc, mlir::ModuleOp module,
                    llvm::ArrayRef<std::string> names, KernelFunction &score,
                    KernelFunction &mask, llvm::StringRef &missing);

mlir::LogicalResult addFunctionCaptures(mlir::OpBuilder &b, KernelFunction &fn,
                                        bool isScore, KernelArguments &args);

} // namespace tiled_attn

#endif // TILED_ATTN_KERNELS_KERNELFUNCTIONS_H
