//===- HostExecutor.h - Run tile-level IR on the host -----------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// An interpreter for tile-level kernels. It runs every program instance of a
// launch grid in turn, with the exact rounding of f16, bf16 and f32, so that
// tests can check a kernel's numerics, and the equivalence of schedule
// transforms, on machines with no GPU.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_EXECUTION_HOSTEXECUTOR_H
#define TILED_ATTN_EXECUTION_HOSTEXECUTOR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <array>
#include <cstdint>
#include <vector>

namespace tiled_attn::exec {

/// A strided tensor in host memory, bound to a `!tile.view` argument. Element
/// values are held as doubles that are exactly representable in the element
/// type.
struct HostTensor {
  mlir::Type elementType;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  std::vector<double> data;

  /// A tensor of the given sizes laid out with strides of a permutation of
  /// its dimensions: `order` lists the dimensions from outermost to innermost
  /// in memory (the identity gives a contiguous row-major tensor).
  static HostTensor create(mlir::Type elementType, std::vector<int64_t> sizes,
                           std::vector<int64_t> order = {});
  double &at(llvm::ArrayRef<int64_t> index);
};

/// One kernel argument: a view, a float scalar or an integer scalar (for
/// index and integer arguments, held exactly).
struct KernelArg {
  HostTensor *tensor = nullptr;
  double scalar = 0.0;
  int64_t integer = 0;
  static KernelArg view(HostTensor &t) { return {&t, 0.0, 0}; }
  static KernelArg value(double v) { return {nullptr, v, 0}; }
  static KernelArg index(int64_t v) { return {nullptr, 0.0, v}; }
};

/// The most loop iterations one program instance may run on the host: a
/// kernel's loops step over blocks of tensors that the host takes up to
/// 2^27 elements of, so more is a loop that would not end in any useful
/// time (a bound near INT64_MIN, say).
inline constexpr uint64_t kMaxHostIterations = uint64_t{1} << 27;

/// Runs `kernel` once for every block id in `grid` (x fastest). Fails, after
/// emitting a diagnostic on the offending op, on arguments that do not match
/// the signature, on an op the interpreter does not know, or on a program
/// instance that would run more than kMaxHostIterations loop iterations.
mlir::LogicalResult runKernel(mlir::func::FuncOp kernel,
                              llvm::ArrayRef<KernelArg> args,
                              std::array<int64_t, 3> grid);

/// Runs the single-block function `fn` (a score or mask function of
/// tile.apply) on `args` and returns its one result: a float, or an integer
/// (an i1 as 0 or 1).
mlir::FailureOr<double> callScalarFunction(mlir::func::FuncOp fn,
                                           llvm::ArrayRef<KernelArg> args);

/// Rounds `value` to the nearest value of `type` (f16, bf16 or f32; ties to
/// even), as a conversion to that type would.
double roundToType(double value, mlir::Type type);

} // namespace tiled_attn::exec

#endif // TILED_ATTN_EXECUTION_HOSTEXECUTOR_H
