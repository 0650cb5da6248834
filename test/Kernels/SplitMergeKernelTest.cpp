//===- SplitMergeKernelTest.cpp - The split-KV merge on the host ----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tile-generate-split-merge's kernel on the host executor (as built, and
// with its gathers as the GPU pipeline has them) against the merge worked
// out in float64: random partial outputs and log-sum-exps of several chunks,
// with chunks that saw no key (-inf) and rows no chunk saw, at S_q not a
// multiple of the block, with as many chunks as a step reads, fewer and
// more.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Kernels/SplitMergeKernel.h"
#include "TileDialects.h"
#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Execution/HostExecutor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::exec;

namespace {

struct Case {
  int64_t batch, heads, splits, seqQ;
};

void checkMerge(MLIRContext &ctx, Type elementType, int64_t dv, Case c,
                unsigned seed, int64_t chunksPerStep = 0) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
  OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
  SplitMergeKernelConfig config;
  config.headDimV = dv;
  config.elementType = elementType;
  config.chunksPerStep = chunksPerStep;
  FailureOr<func::FuncOp> kernel =
      buildSplitMergeKernel(b, module->getLoc(), config);
  ASSERT_TRUE(succeeded(kernel));
  Type f32 = Float32Type::get(&ctx);
  const int64_t rows = c.heads * c.splits;
  HostTensor o = HostTensor::create(f32, {c.batch, rows, c.seqQ, dv});
  HostTensor lse = HostTensor::create(f32, {c.batch, rows, c.seqQ});
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  for (double &x : o.data)
    x = static_cast<float>(normal(rng));
  for (int64_t i = 0; i < static_cast<int64_t>(lse.data.size()); ++i) {
    // A chunk that saw no key: -inf and a zero row (as the split kernel
    // writes it); the first row of every head sees none in any chunk.
    bool none = uniform(rng) < 0.2 || i % c.seqQ == 0;
    lse.data[i] = none ? -inf : static_cast<float>(4.0 * normal(rng));
    if (none)
      for (int64_t d = 0; d < dv; ++d)
        o.data[i * dv + d] = 0.0;
  }
  HostTensor out =
      HostTensor::create(elementType, {c.batch, c.heads, c.seqQ, dv});
  HostTensor outLse = HostTensor::create(f32, {c.batch, c.heads, c.seqQ});
  std::fill(out.data.begin(), out.data.end(), std::nan(""));
  std::fill(outLse.data.begin(), outLse.data.end(), std::nan(""));
  std::vector<KernelArg> args = {KernelArg::view(o), KernelArg::view(lse),
                                 KernelArg::index(c.splits),
                                 KernelArg::view(out), KernelArg::view(outLse)};
  // D_v / block_d programs along x per block of rows, a column block each.
  ASSERT_TRUE(succeeded(runKernel(
      *kernel, args,
      {(c.seqQ + config.blockM - 1) / config.blockM * (dv / config.blockD),
       c.heads, c.batch})));
  double errorSq = 0.0, normSq = 0.0;
  for (int64_t bi = 0; bi < c.batch; ++bi)
    for (int64_t h = 0; h < c.heads; ++h)
      for (int64_t r = 0; r < c.seqQ; ++r) {
        double top = -inf;
        for (int64_t s = 0; s < c.splits; ++s)
          top = std::max(top, lse.at({bi, h * c.splits + s, r}));
        double sum = 0.0;
        for (int64_t s = 0; s < c.splits && top != -inf; ++s)
          sum += std::exp(lse.at({bi, h * c.splits + s, r}) - top);
        double want = top == -inf ? -inf : top + std::log(sum);
        double got = outLse.at({bi, h, r});
        if (want == -inf)
          EXPECT_EQ(got, -inf) << "row " << r;
        else
          EXPECT_NEAR(got, want, 1e-5 * std::max(1.0, std::abs(want)));
        for (int64_t d = 0; d < dv; ++d) {
          double acc = 0.0;
          for (int64_t s = 0; s < c.splits && top != -inf; ++s)
            acc += std::exp(lse.at({bi, h * c.splits + s, r}) - top) / sum *
                   o.at({bi, h * c.splits + s, r, d});
          double value = out.at({bi, h, r, d});
          ASSERT_FALSE(std::isnan(value))
              << "unwritten (" << r << ", " << d << ")";
          errorSq += (value - acc) * (value - acc);
          normSq += acc * acc;
        }
      }
  // The output's own rounding (bf16: 2^-8 relative) and f32 arithmetic.
  double tolerance = elementType.isBF16() ? 8e-3 : 1e-3;
  EXPECT_LT(std::sqrt(errorSq / std::max(normSq, 1e-30)), tolerance);
}

TEST(SplitMergeKernel, MergesChunksAsFloat64Does) {
  MLIRContext ctx;
  test::loadTileDialects(ctx);
  checkMerge(ctx, BFloat16Type::get(&ctx), 128, {2, 3, 4, 17}, 1);
  checkMerge(ctx, Float16Type::get(&ctx), 64, {1, 2, 7, 1}, 2);
  checkMerge(ctx, BFloat16Type::get(&ctx), 128, {1, 1, 1, 40}, 3);
  // Several steps of 8 chunks, the last one full or not; steps of 1 and 3.
  checkMerge(ctx, BFloat16Type::get(&ctx), 128, {1, 3, 16, 5}, 4);
  checkMerge(ctx, Float16Type::get(&ctx), 64, {2, 2, 17, 3}, 5);
  checkMerge(ctx, BFloat16Type::get(&ctx), 64, {1, 2, 7, 9}, 6, 1);
  checkMerge(ctx, BFloat16Type::get(&ctx), 64, {1, 2, 7, 9}, 7, 3);
}

} // namespace
