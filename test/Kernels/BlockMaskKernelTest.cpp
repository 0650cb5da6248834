//===- BlockMaskKernelTest.cpp - The block mask kernel on the host --------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tile-generate-block-mask's kernel, built from the library's mask functions
// and run by the host executor (as built, and with its tile.apply
// vectorized as the GPU pipeline has it), against block kinds worked out
// element by element from the mask function itself, on shapes that are not
// multiples of the blocks.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Kernels/BlockMaskKernel.h"
#include "TileDialects.h"
#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"
#include "tiled_attn/Execution/HostExecutor.h"
#include "tiled_attn/Kernels/KernelVariant.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::exec;

namespace {

constexpr int64_t kN = kBlockMaskSize;

class BlockMaskKernelTest : public ::testing::Test {
protected:
  BlockMaskKernelTest() { test::loadTileDialects(context); }

  /// The library's function file `name`.mlir with the block mask kernel of
  /// its function `name` added; with `vectorize`, after
  /// tile-vectorize-apply.
  OwningOpRef<ModuleOp> build(StringRef name, bool vectorize) {
    std::string path =
        std::string(TILED_ATTN_FUNCTIONS_DIR) + "/" + name.str() + ".mlir";
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(path, &context);
    if (!module)
      return {};
    OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
    BlockMaskKernelConfig config;
    config.maskFunction = name.str();
    if (failed(buildBlockMaskKernel(b, module->getLoc(), config)))
      return {};
    if (vectorize) {
      PassManager pm(&context);
      pm.addPass(tile::createTileVectorizeApplyPass());
      if (failed(pm.run(*module)))
        return {};
    }
    return module;
  }

  MLIRContext context;
};

/// Runs the block mask kernel of `module` on `captures` (then seq_q, seq_k,
/// block_kinds) and compares every block's kind with the kind worked out
/// element by element from `fn`, the mask function as written.
void checkKinds(OwningOpRef<ModuleOp> &module, func::FuncOp fn,
                std::vector<KernelArg> captures, int64_t batch, int64_t heads,
                int64_t seqQ, int64_t seqK) {
  ASSERT_TRUE(module && fn);
  auto kernel = module->lookupSymbol<func::FuncOp>("block_mask");
  ASSERT_TRUE(kernel);
  StringRef name = fn.getSymName();
  int64_t nQ = (seqQ + kN - 1) / kN, nK = (seqK + kN - 1) / kN;
  HostTensor kinds = HostTensor::create(
      IntegerType::get(module->getContext(), 8), {batch, heads, nQ, nK});
  std::fill(kinds.data.begin(), kinds.data.end(), -1.0);
  std::vector<KernelArg> args = captures;
  args.push_back(KernelArg::index(seqQ));
  args.push_back(KernelArg::index(seqK));
  args.push_back(KernelArg::view(kinds));
  ASSERT_TRUE(succeeded(runKernel(kernel, args, {nQ, heads, batch})));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t m = 0; m < nQ; ++m)
        for (int64_t j = 0; j < nK; ++j) {
          bool some = false, all = true;
          for (int64_t q = m * kN; q < (m + 1) * kN && q < seqQ; ++q)
            for (int64_t k = j * kN; k < (j + 1) * kN; ++k) {
              if (k >= seqK) {
                all = false; // keys past S_k are hidden
                continue;
              }
              std::vector<KernelArg> call{
                  KernelArg::index(b), KernelArg::index(h), KernelArg::index(q),
                  KernelArg::index(k)};
              call.insert(call.end(), captures.begin(), captures.end());
              FailureOr<double> visible = callScalarFunction(fn, call);
              ASSERT_TRUE(succeeded(visible));
              some |= *visible != 0.0;
              all &= *visible != 0.0;
            }
          BlockKind expected = !some ? BlockKind::Empty
                               : all ? BlockKind::Full
                                     : BlockKind::Partial;
          EXPECT_EQ(kinds.at({b, h, m, j}), static_cast<int>(expected))
              << name.str() << ": block (" << b << ", " << h << ", " << m
              << ", " << j << ") of S_q " << seqQ << ", S_k " << seqK;
        }
}

/// Document ids of packed sequences: runs of random lengths in [1, 2 * mean].
HostTensor documentIds(MLIRContext *ctx, int64_t batch, int64_t seq,
                       int64_t mean, unsigned seed) {
  HostTensor ids = HostTensor::create(IntegerType::get(ctx, 32), {batch, seq});
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> length(1, 2 * mean);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t id = 0, left = length(rng);
    for (int64_t s = 0; s < seq; ++s, --left) {
      if (left == 0) {
        ++id;
        left = length(rng);
      }
      ids.at({b, s}) = static_cast<double>(id);
    }
  }
  return ids;
}

TEST_F(BlockMaskKernelTest, DocumentMasking) {
  OwningOpRef<ModuleOp> reference = build("document", /*vectorize=*/false);
  ASSERT_TRUE(reference);
  auto fn = reference->lookupSymbol<func::FuncOp>("document");
  for (bool vectorize : {false, true}) {
    OwningOpRef<ModuleOp> module = build("document", vectorize);
    // Documents of about one block and of a few, rows and keys past the
    // last whole block.
    for (auto [seq, mean] : {std::pair<int64_t, int64_t>{300, 100},
                             {517, 40},
                             {256, 300},
                             {1, 1}}) {
      HostTensor ids = documentIds(&context, 2, seq, mean, seq);
      checkKinds(module, fn, {KernelArg::view(ids)}, 2, 1, seq, seq);
    }
  }
}

TEST_F(BlockMaskKernelTest, PrefixLm) {
  // A prefix of length prefix_len[b] sees everything; the rest is causal.
  OwningOpRef<ModuleOp> reference = build("prefix_lm", /*vectorize=*/false);
  ASSERT_TRUE(reference);
  auto fn = reference->lookupSymbol<func::FuncOp>("prefix_lm");
  for (bool vectorize : {false, true}) {
    OwningOpRef<ModuleOp> module = build("prefix_lm", vectorize);
    HostTensor prefix = HostTensor::create(IntegerType::get(&context, 32), {3});
    prefix.data = {0.0, 200.0, 129.0};
    checkKinds(module, fn, {KernelArg::view(prefix)}, 3, 1, 400, 400);
    checkKinds(module, fn, {KernelArg::view(prefix)}, 3, 1, 130, 700);
  }
}

} // namespace
