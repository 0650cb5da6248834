//===- BuildKernel.h - One kernel of the library to PTX and cubins -*- C++ -*-//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_TOOLS_TILED_ATTN_COMPILE_BUILDKERNEL_H
#define TILED_ATTN_TOOLS_TILED_ATTN_COMPILE_BUILDKERNEL_H

#include "LibrarySpec.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace tiled_attn {

/// Where and how the kernels of one run are written.
struct BuildSettings {
  /// The library folder: <name>.ptx, <name>.<chip>.cubin, manifest.json.
  std::string outDir;
  /// The ptxas to assemble cubins with; empty: PTX only.
  std::string ptxas;
  /// Also write <name>.tile.mlir (scheduled) and <name>.gpu.mlir.
  bool keepIR = false;
  /// Kernels are built on several threads at once: each kernel's MLIR
  /// context then runs its passes on one thread.
  bool concurrent = false;
};

/// `given`, else ptxas on PATH, else /usr/local/cuda/bin/ptxas; empty when
/// there is none.
std::string findPtxas(llvm::StringRef given);

/// Generates `kernel`, applies its schedule, lowers it to PTX, assembles its
/// cubins and records it in the library's manifest.json (replacing an entry
/// of the same name), with the wall-clock seconds each step took. Reports
/// what failed, naming the kernel.
mlir::LogicalResult buildKernel(const mlir::DialectRegistry &registry,
                                const KernelSpec &kernel,
                                const BuildSettings &settings);

/// Rewrites <outDir>/manifest.json with its kernels in the order of
/// `names` (those not named after them, in their order): the manifest of
/// a concurrent build is the same file as a sequential build's.
mlir::LogicalResult orderManifest(llvm::StringRef outDir,
                                  llvm::ArrayRef<std::string> names);

} // namespace tiled_attn

#endif // TILED_ATTN_TOOLS_TILED_ATTN_COMPILE_BUILDKERNEL_H
