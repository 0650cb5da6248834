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

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

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
  /// What builds the kernels besides their spec (see toolchainId): part of
  /// every kernel's inputs hash.
  std::string toolchain;
  /// Rebuild every kernel, up to date or not.
  bool rebuild = false;
  /// The entries of the library's manifest.json before this run, by kernel
  /// name (see loadManifestEntries): a kernel whose entry has its inputs
  /// hash, and whose files are there, is up to date and not rebuilt.
  llvm::StringMap<llvm::json::Object> previous;
};

/// Identifies what turns a kernel's spec into its files: this executable
/// (a hash of its bytes: the compiler is linked into it, all but libMLIR),
/// the LLVM it links, and `ptxas --version` (or "no ptxas").
std::string toolchainId(llvm::StringRef executable, llvm::StringRef ptxas);

/// The hex SHA-256 of the kernel's description (describeKernel) and the
/// toolchain: the manifest's "inputs_hash".
std::string kernelInputsHash(const KernelSpec &kernel,
                             llvm::StringRef toolchain);

/// The entries of <outDir>/manifest.json by name; none where there is no
/// manifest, or one of another version or of another tool (buildKernel then
/// reports it as it did before).
llvm::StringMap<llvm::json::Object> loadManifestEntries(llvm::StringRef outDir);

/// `given`, else ptxas on PATH, else /usr/local/cuda/bin/ptxas; empty when
/// there is none or `given` is "none".
std::string findPtxas(llvm::StringRef given);

/// What buildKernel did with a kernel.
enum class BuildOutcome { Built, UpToDate, Failed };

/// Generates `kernel`, applies its schedule, lowers it to PTX, assembles its
/// cubins and records it in the library's manifest.json (replacing an entry
/// of the same name), with the wall-clock seconds each step took and its
/// inputs hash; or, when its entry in `settings.previous` has the same
/// inputs hash and its files are there, leaves it as it is. Reports what
/// failed, naming the kernel.
BuildOutcome buildKernel(const mlir::DialectRegistry &registry,
                         const KernelSpec &kernel,
                         const BuildSettings &settings);

/// Rewrites <outDir>/manifest.json with its kernels in the order of
/// `names`, after those not named (kernels of earlier runs, in their
/// order): the manifest of a concurrent build is the same file as a
/// sequential build's, and kernels that were up to date keep their place. With
/// `prune`, the kernels not named are dropped from it and their files removed:
/// the library is then exactly the kernels of this run. `pruned` counts them.
mlir::LogicalResult orderManifest(llvm::StringRef outDir,
                                  llvm::ArrayRef<std::string> names, bool prune,
                                  size_t &pruned);

} // namespace tiled_attn

#endif // TILED_ATTN_TOOLS_TILED_ATTN_COMPILE_BUILDKERNEL_H
