//===- SdpaBackwardKernelTest.cpp - The backward pass on the host --------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tile-generate-sdpa-backward's three kernels (preprocess, main,
// postprocess) on the host executor against the gradients worked out in
// float64: random q, k, v and dO in f16 or bf16, the forward's output and
// log-sum-exps from the float64 forward (rounded as a forward kernel writes
// them), at sequence lengths that are not multiples of the blocks, S_q !=
// S_k both ways, grouped KV heads, no mask and both causal alignments
// (bottom-right with S_q > S_k leaves rows that see no key), sliding
// windows, soft-capping, variable-length batches, lengths that
// are multiples of the blocks (the unmasked loop over the query blocks
// that see all of a key block), and a head dim of V of its own. The outputs
// start as NaN, so that an element no kernel writes fails the comparison.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Kernels/SdpaBackwardKernel.h"
#include "TileDialects.h"
#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"
#include "tiled_attn/Execution/HostExecutor.h"
#include "tiled_attn/Execution/SdpaReference.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::exec;

namespace {

struct Case {
  int64_t batch, heads, kvHeads, seqQ, seqK;
  tile::CausalMode causal;
  int64_t headDim = 32, headDimV = 0;
  /// A window's band of diagonals (causal = Window), a softcap (0: none).
  int64_t windowLo = 0, windowHi = 0;
  double softcap = 0.0;
};

/// Score and mask functions of the library (kernels/functions/<name>.mlir)
/// in the kernels, their captured inputs (in the kernels' order) and the
/// reference's functions; with `vectorize`, tile-vectorize-apply writes
/// them on tiles first (the form a GPU runs).
struct Functions {
  std::vector<std::string> names;
  std::vector<KernelArg> captures;
  ScoreFunctions reference;
  bool vectorize = false;
};

/// tile-prefetch's stages and refill-after-use (1: not run), and
/// tile-early-mmas.
struct Schedule {
  int64_t stages = 1;
  bool refillAfterUse = false;
  bool earlyMmas = false;
  /// tile-exp2 first (not bitwise: exp2 of the scaled exponent).
  bool exp2 = false;
};

/// A case, its blocks and a schedule whose kernels must compute the same
/// bits as the unscheduled ones.
struct ScheduledRun {
  Type elt;
  Case c;
  int64_t bm, bn;
  Schedule schedule;
};

/// The schedule tests' masked cases: a band on both sides of the diagonal
/// with S_q != S_k, and a soft cap over bottom-right causal GQA.
Case bandCase() {
  Case c{1, 2, 1, 77, 130, tile::CausalMode::Window};
  c.windowLo = -40, c.windowHi = 25;
  return c;
}
Case cappedCase() {
  Case c{1, 4, 2, 70, 90, tile::CausalMode::BottomRight};
  c.softcap = 30.0;
  return c;
}

class SdpaBackwardKernelTest : public ::testing::Test {
protected:
  void SetUp() override { test::loadTileDialects(ctx); }

  /// The gradients' relative L2 errors (dq, dk, dv, and dq of the
  /// deterministic mode's dq kernel) against float64 of the kernels built
  /// for `c` with blocks of bm queries and bn keys.
  /// With `otherBand` or `otherCap`, the reference gradients are taken with
  /// that band or softcap instead (the forward's output stays the case's).
  /// With `schedule`, the kernels are first pipelined by tile-prefetch
  /// (the library's backward schedule); `outputs` receives dq, dk, dv and
  /// the dq kernel's dq.
  std::array<double, 4> errors(Type elt, Case c, int64_t bm, int64_t bn,
                               unsigned seed,
                               std::optional<Band> otherBand = {},
                               std::optional<double> otherCap = {},
                               Schedule schedule = {},
                               std::vector<double> *outputs = nullptr,
                               const Functions *functions = nullptr,
                               const ScoreFunctions *otherFunctions = nullptr) {
    OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
    OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
    // The functions, and a score function's gradient derived from it.
    for (const std::string &name :
         functions ? functions->names : std::vector<std::string>()) {
      OwningOpRef<ModuleOp> file = parseSourceFile<ModuleOp>(
          std::string(TILED_ATTN_FUNCTIONS_DIR) + "/" + name + ".mlir", &ctx);
      EXPECT_TRUE(file) << name;
      if (!file)
        return {};
      for (Operation &op : llvm::make_early_inc_range(*file->getBody()))
        op.moveBefore(module->getBody(), module->getBody()->end());
      auto fn = module->lookupSymbol<func::FuncOp>(name);
      if (fn.getFunctionType().getResult(0).isF32()) {
        EXPECT_TRUE(succeeded(tile::addScoreGradient(fn)));
      }
      b.setInsertionPointToEnd(module->getBody());
    }
    SdpaBackwardKernelConfig config;
    config.headDim = c.headDim;
    config.headDimV = c.headDimV;
    config.elementType = elt;
    config.causal = c.causal;
    config.softcap = c.softcap > 0.0;
    config.blockM = bm;
    config.blockN = bn;
    if (functions)
      config.functions = functions->names;
    FailureOr<SdpaBackwardKernels> kernels =
        buildSdpaBackwardKernels(b, module->getLoc(), config);
    EXPECT_TRUE(succeeded(kernels));
    EXPECT_TRUE(succeeded(verify(*module)));
    if (failed(kernels))
      return {};
    if (functions && functions->vectorize) {
      PassManager pm(&ctx);
      pm.addPass(tile::createTileVectorizeApplyPass());
      EXPECT_TRUE(succeeded(pm.run(*module)));
      int64_t applies = 0;
      module->walk([&](tile::ApplyOp) { ++applies; });
      EXPECT_EQ(applies, 0);
    }
    if (schedule.exp2) {
      PassManager pm(&ctx);
      pm.nest<func::FuncOp>().addPass(tile::createTileExp2Pass());
      EXPECT_TRUE(succeeded(pm.run(*module)));
      // Every probability is an exp2 (the main and dq kernels' loops).
      int64_t exps = 0, exp2s = 0;
      module->walk([&](Operation *op) {
        exps += isa<math::ExpOp>(op);
        exp2s += isa<math::Exp2Op>(op);
      });
      EXPECT_EQ(exps, 0);
      EXPECT_GT(exp2s, 0);
    }
    if (schedule.stages > 1) {
      PassManager pm(&ctx);
      tile::TilePrefetchPassOptions prefetch;
      prefetch.stages = schedule.stages;
      prefetch.refillAfterUse = schedule.refillAfterUse;
      pm.nest<func::FuncOp>().addPass(tile::createTilePrefetchPass(prefetch));
      EXPECT_TRUE(succeeded(pm.run(*module)));
      // The loops over query blocks (main) and key blocks (dq) carry the
      // blocks in flight: the test compares pipelined kernels.
      for (func::FuncOp f : {kernels->main, kernels->dq}) {
        int64_t carried = 0;
        f.walk([&](scf::ForOp loop) {
          for (Value arg : loop.getRegionIterArgs())
            if (auto t = dyn_cast<RankedTensorType>(arg.getType()))
              carried += t.getElementType() == elt;
        });
        EXPECT_GT(carried, 0) << f.getName().str() << " is not pipelined";
      }
    }
    if (schedule.earlyMmas) {
      PassManager pm(&ctx);
      pm.nest<func::FuncOp>().addPass(tile::createTileEarlyMmasPass());
      EXPECT_TRUE(succeeded(pm.run(*module)));
      // dPᵀ = V dOᵀ is issued with Sᵀ = K Qᵀ, before P's exponential.
      int64_t early = 0;
      kernels->main.walk([&](scf::ForOp loop) {
        int64_t mmas = 0;
        for (Operation &op : *loop.getBody()) {
          if (isa<math::ExpOp, math::Exp2Op>(op))
            break;
          mmas += isa<tile::MmaOp>(op);
        }
        early += mmas >= 2;
      });
      EXPECT_GT(early, 0) << "tile-early-mmas moved no product";
    }

    const int64_t d = c.headDim, dv = c.headDimV ? c.headDimV : d;
    Type f32 = Float32Type::get(&ctx);
    auto make = [&](Type t, std::vector<int64_t> sizes) {
      return HostTensor::create(t, std::move(sizes));
    };
    HostTensor q = make(elt, {c.batch, c.heads, c.seqQ, d});
    HostTensor k = make(elt, {c.batch, c.kvHeads, c.seqK, d});
    HostTensor v = make(elt, {c.batch, c.kvHeads, c.seqK, dv});
    HostTensor dO = make(elt, {c.batch, c.heads, c.seqQ, dv});
    std::mt19937 rng(seed);
    std::normal_distribution<double> normal;
    for (HostTensor *t : {&q, &k, &v, &dO})
      for (double &x : t->data)
        x = roundToType(normal(rng), elt);

    // The forward's output and log-sum-exps, as a forward kernel leaves
    // them: O in the element type, lse in f32.
    const double scale = 1.0 / std::sqrt(double(d));
    const bool window = c.causal == tile::CausalMode::Window;
    Band band = window ? Band{c.windowLo, c.windowHi}
                       : bandOf(c.causal, c.seqQ, c.seqK);
    HostTensor o = make(elt, {c.batch, c.heads, c.seqQ, dv});
    HostTensor lse = make(f32, {c.batch, c.heads, c.seqQ});
    // (The kernels read the scale and softcap as f32.)
    const double capF32 = roundToType(c.softcap, f32);
    const ScoreFunctions *reference =
        functions ? &functions->reference : nullptr;
    sdpaReference(q, k, v, o, roundToType(scale, f32), band, capF32, &lse,
                  reference);
    for (double &x : o.data)
      x = roundToType(x, elt);
    for (double &x : lse.data)
      x = roundToType(x, f32);

    const double nan = std::numeric_limits<double>::quiet_NaN();
    HostTensor delta = make(f32, {c.batch, c.heads, c.seqQ});
    HostTensor dqAccum = make(f32, {c.batch, c.heads, c.seqQ, d});
    HostTensor dq = make(elt, {c.batch, c.heads, c.seqQ, d});
    HostTensor dk = make(elt, {c.batch, c.kvHeads, c.seqK, d});
    HostTensor dvOut = make(elt, {c.batch, c.kvHeads, c.seqK, dv});
    for (HostTensor *t : {&delta, &dqAccum, &dq, &dk, &dvOut})
      std::fill(t->data.begin(), t->data.end(), nan);

    auto blocks = [](int64_t n, int64_t block) {
      return (n + block - 1) / block;
    };
    std::array<int64_t, 3> rowGrid = {blocks(c.seqQ, bm), c.heads, c.batch};
    EXPECT_TRUE(
        succeeded(runKernel(kernels->preprocess,
                            {KernelArg::view(o), KernelArg::view(dO),
                             KernelArg::view(delta), KernelArg::view(dqAccum)},
                            rowGrid)));
    std::vector<KernelArg> mainArgs = {
        KernelArg::view(q),       KernelArg::view(k),
        KernelArg::view(v),       KernelArg::view(dO),
        KernelArg::view(lse),     KernelArg::view(delta),
        KernelArg::view(dqAccum), KernelArg::view(dk),
        KernelArg::view(dvOut),   KernelArg::value(roundToType(scale, f32))};
    if (window) {
      mainArgs.push_back(KernelArg::index(c.windowLo));
      mainArgs.push_back(KernelArg::index(c.windowHi));
    }
    if (c.softcap > 0.0)
      mainArgs.push_back(KernelArg::value(capF32));
    if (functions)
      llvm::append_range(mainArgs, functions->captures);
    EXPECT_TRUE(succeeded(runKernel(kernels->main, mainArgs,
                                    {blocks(c.seqK, bn), c.kvHeads, c.batch})));
    EXPECT_TRUE(
        succeeded(runKernel(kernels->postprocess,
                            {KernelArg::view(dqAccum), KernelArg::view(dq),
                             KernelArg::value(roundToType(scale, f32))},
                            rowGrid)));
    // The deterministic mode's dq kernel: the main kernel's arguments with
    // dq in place of dq_accum, dk and dv.
    HostTensor dqDet = make(elt, {c.batch, c.heads, c.seqQ, d});
    std::fill(dqDet.data.begin(), dqDet.data.end(), nan);
    std::vector<KernelArg> dqArgs = {
        KernelArg::view(q),     KernelArg::view(k),
        KernelArg::view(v),     KernelArg::view(dO),
        KernelArg::view(lse),   KernelArg::view(delta),
        KernelArg::view(dqDet), KernelArg::value(roundToType(scale, f32))};
    dqArgs.insert(dqArgs.end(), mainArgs.begin() + 10, mainArgs.end());
    EXPECT_TRUE(succeeded(runKernel(kernels->dq, dqArgs, rowGrid)));

    HostTensor rq = make(f32, {c.batch, c.heads, c.seqQ, d});
    HostTensor rk = make(f32, {c.batch, c.kvHeads, c.seqK, d});
    HostTensor rv = make(f32, {c.batch, c.kvHeads, c.seqK, dv});
    sdpaBackwardReference(q, k, v, dO, rq, rk, rv, roundToType(scale, f32),
                          otherBand.value_or(band), otherCap.value_or(capF32),
                          otherFunctions ? otherFunctions : reference);
    if (outputs)
      for (HostTensor *t : {&dq, &dk, &dvOut, &dqDet})
        outputs->insert(outputs->end(), t->data.begin(), t->data.end());
    return {relativeL2(dq, rq), relativeL2(dk, rk), relativeL2(dvOut, rv),
            relativeL2(dqDet, rq)};
  }

  void expectClose(Type elt, Case c, int64_t bm, int64_t bn, unsigned seed) {
    // Pᵀ and dSᵀ are rounded to the element type for their products, as
    // FlashAttention's kernels do: errors of about an ulp of it (measured
    // 2.1-2.7e-3 in bf16, 2.7-3.5e-4 in f16 on these cases).
    const double tolerance = elt.isBF16() ? 6e-3 : 1e-3;
    std::array<double, 4> e = errors(elt, c, bm, bn, seed);
    EXPECT_LT(e[0], tolerance) << "dq";
    EXPECT_LT(e[1], tolerance) << "dk";
    EXPECT_LT(e[2], tolerance) << "dv";
    EXPECT_LT(e[3], tolerance) << "dq (deterministic)";
  }

  /// The runs' scheduled kernels (with exp2) within the Exp2 test's bounds
  /// of float64: 6e-3 in bf16, 1e-3 in f16.
  void expectNearFloat64(std::initializer_list<ScheduledRun> runs,
                         unsigned seed) {
    for (const ScheduledRun &run : runs) {
      const double tolerance = run.elt.isBF16() ? 6e-3 : 1e-3;
      std::array<double, 4> e =
          errors(run.elt, run.c, run.bm, run.bn, seed, {}, {}, run.schedule);
      for (int i = 0; i < 4; ++i)
        EXPECT_LT(e[i], tolerance)
            << "gradient " << i << ", D " << run.c.headDim;
    }
  }

  /// The run's scheduled kernels compute the same bits as its unscheduled
  /// ones (NaNs where they have NaNs), and dk close to float64.
  void expectSameBits(const ScheduledRun &run, unsigned seed) {
    std::vector<double> plain, scheduled;
    std::array<double, 4> e =
        errors(run.elt, run.c, run.bm, run.bn, seed, {}, {}, {}, &plain);
    errors(run.elt, run.c, run.bm, run.bn, seed, {}, {}, run.schedule,
           &scheduled);
    ASSERT_EQ(plain.size(), scheduled.size());
    int64_t differ = 0;
    for (size_t i = 0; i < plain.size(); ++i)
      differ += !(plain[i] == scheduled[i] ||
                  (std::isnan(plain[i]) && std::isnan(scheduled[i])));
    EXPECT_EQ(differ, 0) << "stages " << run.schedule.stages << ", early-mmas "
                         << run.schedule.earlyMmas << ", S_q " << run.c.seqQ
                         << ", S_k " << run.c.seqK;
    EXPECT_LT(e[1], 1e-2);
  }

  MLIRContext ctx;
};

TEST_F(SdpaBackwardKernelTest, NoMask) {
  Type f16 = Float16Type::get(&ctx), bf16 = BFloat16Type::get(&ctx);
  expectClose(f16, {1, 2, 2, 37, 37, tile::CausalMode::None}, 32, 16, 1);
  expectClose(bf16, {2, 2, 1, 50, 77, tile::CausalMode::None}, 16, 32, 2);
}

TEST_F(SdpaBackwardKernelTest, Causal) {
  Type f16 = Float16Type::get(&ctx), bf16 = BFloat16Type::get(&ctx);
  expectClose(f16, {1, 4, 2, 70, 70, tile::CausalMode::TopLeft}, 32, 16, 3);
  expectClose(bf16, {1, 2, 2, 45, 90, tile::CausalMode::TopLeft}, 16, 16, 4);
  expectClose(f16, {1, 2, 1, 45, 90, tile::CausalMode::BottomRight}, 32, 32, 5);
  // Lengths multiples of the blocks: most steps take the unmasked loop.
  expectClose(f16, {1, 2, 2, 64, 128, tile::CausalMode::TopLeft}, 16, 32, 9);
  expectClose(bf16, {1, 2, 1, 64, 128, tile::CausalMode::BottomRight}, 32, 16,
              10);
  expectClose(f16, {1, 2, 2, 96, 64, tile::CausalMode::None}, 32, 32, 11);
  // Rows 0 .. 30 see no key: zero gradients.
  expectClose(bf16, {2, 4, 1, 77, 46, tile::CausalMode::BottomRight}, 16, 32,
              6);
}

TEST_F(SdpaBackwardKernelTest, HeadDimOfV) {
  Type f16 = Float16Type::get(&ctx);
  expectClose(f16, {1, 2, 1, 41, 59, tile::CausalMode::TopLeft, 48, 32}, 16, 16,
              7);
}

// tile-early-mmas issues dPᵀ with Sᵀ and changes nothing that is
// computed: the same bits, alone and after tile-prefetch, with masks.
TEST_F(SdpaBackwardKernelTest, EarlyMmasIsExact) {
  Type f16 = Float16Type::get(&ctx), bf16 = BFloat16Type::get(&ctx);
  const Case window = bandCase();
  for (const ScheduledRun &run :
       {ScheduledRun{f16,
                     {1, 2, 2, 37, 45, tile::CausalMode::None},
                     32,
                     16,
                     {1, false, true}},
        ScheduledRun{bf16,
                     {1, 4, 2, 70, 70, tile::CausalMode::TopLeft},
                     16,
                     16,
                     {2, false, true}},
        ScheduledRun{f16, window, 32, 16, {2, false, true}}})
    expectSameBits(run, 37);
}

// tile-prefetch (the library's backward schedule) moves the loads of Q and
// dO (K and V in the dq kernel) iterations ahead and changes nothing that
// is computed: the same bits as the kernels without it, with every mask,
// loops shorter than the pipeline (a key block that one query block sees)
// and the three loops of the mask split run one after the other.
TEST_F(SdpaBackwardKernelTest, PrefetchIsExact) {
  Type f16 = Float16Type::get(&ctx), bf16 = BFloat16Type::get(&ctx);
  const Case window = bandCase();
  const Case capped = cappedCase();
  using Run = ScheduledRun;
  for (const Run &run :
       {Run{f16, {1, 2, 2, 37, 37, tile::CausalMode::None}, 32, 16, {2, false}},
        Run{bf16,
            {1, 4, 2, 70, 70, tile::CausalMode::TopLeft},
            16,
            16,
            {2, false}},
        Run{f16,
            {1, 2, 1, 64, 128, tile::CausalMode::TopLeft},
            16,
            32,
            {3, false}},
        Run{bf16,
            {2, 4, 1, 77, 46, tile::CausalMode::BottomRight},
            16,
            32,
            {2, true}},
        Run{f16, {1, 2, 1, 20, 9, tile::CausalMode::None}, 32, 16, {4, false}},
        Run{f16, window, 32, 16, {2, false}},
        Run{bf16, capped, 16, 32, {2, false}}})
    expectSameBits(run, 31);
}

// tile-exp2 (the library's sm_90a backward schedule) computes each
// probability as exp2(fma(s, scale log2(e), -lse log2(e))): not the same
// bits, but as close to float64 as exp, with every mask, softcap and the
// prefetch after it (score and mask functions: ScoreAndMaskFunctions).
TEST_F(SdpaBackwardKernelTest, Exp2) {
  Type f16 = Float16Type::get(&ctx), bf16 = BFloat16Type::get(&ctx);
  const Case window = bandCase();
  const Case capped = cappedCase();
  using Run = ScheduledRun;
  for (const Run &run : {Run{f16,
                             {1, 2, 2, 37, 37, tile::CausalMode::None},
                             32,
                             16,
                             {1, false, false, true}},
                         Run{bf16,
                             {1, 4, 2, 70, 70, tile::CausalMode::TopLeft},
                             16,
                             16,
                             {2, false, false, true}},
                         Run{f16,
                             {1, 2, 1, 64, 128, tile::CausalMode::TopLeft},
                             16,
                             32,
                             {2, false, false, true}},
                         Run{bf16,
                             {2, 4, 1, 77, 46, tile::CausalMode::BottomRight},
                             16,
                             32,
                             {2, true, false, true}},
                         Run{f16, window, 32, 16, {2, false, false, true}},
                         Run{bf16, capped, 16, 32, {2, false, false, true}}}) {
    const double tolerance = run.elt.isBF16() ? 6e-3 : 1e-3;
    std::array<double, 4> plain = errors(run.elt, run.c, run.bm, run.bn, 41);
    std::array<double, 4> e =
        errors(run.elt, run.c, run.bm, run.bn, 41, {}, {}, run.schedule);
    for (int i = 0; i < 4; ++i) {
      EXPECT_LT(e[i], tolerance) << "gradient " << i << ", S_q " << run.c.seqQ;
      // Within a quarter of the plain kernels' error, or 5e-4.
      EXPECT_LT(e[i], std::max(1.25 * plain[i], plain[i] + 5e-4))
          << "gradient " << i << ", S_q " << run.c.seqQ;
    }
  }
}

// The program of the tcgen05 configurations (backward-sm100a-d64-d96,
// -d128; assembled only, no Blackwell GPU here): 128 keys and 128 queries
// a step with exp2, Q and dO prefetched two deep at D = 64 and 96 and not
// at D = 128, over grouped heads, odd lengths of several blocks and the
// causal masks; within the Exp2 test's bounds of float64.
TEST_F(SdpaBackwardKernelTest, Tcgen05Blocks) {
  Type f16 = Float16Type::get(&ctx), bf16 = BFloat16Type::get(&ctx);
  Case d64{1, 4, 2, 300, 200, tile::CausalMode::TopLeft, 64};
  Case d96{1, 2, 1, 140, 270, tile::CausalMode::BottomRight, 96};
  Case d128{1, 2, 2, 130, 257, tile::CausalMode::None, 128};
  using Run = ScheduledRun;
  expectNearFloat64({Run{bf16, d64, 128, 128, {2, false, false, true}},
                     Run{f16, d96, 128, 128, {2, false, false, true}},
                     Run{bf16, d128, 128, 128, {1, false, false, true}}},
                    43);
}

// The program of the wide head dims on wgmma (backward-sm90a-d192-d256:
// 64 keys and 64 queries a step, exp2, Q and dO not prefetched; and at
// D = 192 prefetched in two slots, the A/B's faster build), over
// grouped heads, odd lengths of several blocks and the causal masks;
// within the Exp2 test's bounds of float64.
TEST_F(SdpaBackwardKernelTest, WideHeadDims) {
  Type f16 = Float16Type::get(&ctx), bf16 = BFloat16Type::get(&ctx);
  Case d192{1, 4, 2, 150, 77, tile::CausalMode::BottomRight, 192};
  Case d256{1, 2, 1, 70, 131, tile::CausalMode::TopLeft, 256};
  using Run = ScheduledRun;
  expectNearFloat64({Run{f16, d192, 64, 64, {1, false, false, true}},
                     Run{bf16, d192, 64, 64, {2, false, false, true}},
                     Run{bf16, d256, 64, 64, {1, false, false, true}}},
                    47);
}

// Sliding windows: the band lo <= j - i <= hi (the forward's window
// kernels'), on both sides, one side only, and shifted past the diagonal.
TEST_F(SdpaBackwardKernelTest, Window) {
  Type f16 = Float16Type::get(&ctx), bf16 = BFloat16Type::get(&ctx);
  auto window = [](int64_t sq, int64_t sk, int64_t lo, int64_t hi) {
    Case c{1, 2, 1, sq, sk, tile::CausalMode::Window};
    c.windowLo = lo, c.windowHi = hi;
    return c;
  };
  expectClose(f16, window(100, 100, -20, 0), 16, 16, 12);
  expectClose(bf16, window(77, 130, -40, 25), 32, 16, 13);
  expectClose(f16, window(128, 64, 1 - 128, 3), 32, 32, 14);
  expectClose(f16, window(96, 96, -96, 96), 32, 32, 15);
  expectClose(bf16, window(90, 150, 30, 70), 16, 32, 16);
  // Bounds past every diagonal, beyond 32 bits: no bound on that side.
  expectClose(f16, window(70, 90, -(int64_t{1} << 40), 10), 16, 32, 20);
  expectClose(f16, window(70, 90, -5, int64_t{1} << 40), 32, 16, 21);
}

// Soft-capping (Gemma 2): the chain rule's 1 - tanh^2 on dS, with and
// without a mask.
TEST_F(SdpaBackwardKernelTest, Softcap) {
  Type f16 = Float16Type::get(&ctx), bf16 = BFloat16Type::get(&ctx);
  Case c{1, 4, 2, 70, 90, tile::CausalMode::None};
  c.softcap = 5.0;
  expectClose(f16, c, 32, 16, 17);
  c.causal = tile::CausalMode::BottomRight;
  c.softcap = 30.0;
  expectClose(bf16, c, 16, 32, 18);
  // The comparison can fail: against the gradients without the cap, a
  // capped kernel's are far.
  c.causal = tile::CausalMode::None;
  c.softcap = 2.0;
  std::array<double, 4> e = errors(f16, c, 32, 16, 19, {}, 0.0);
  EXPECT_GT(e[0], 0.1);
  EXPECT_GT(e[1], 0.1);
  EXPECT_GT(e[3], 0.1);
}

// Score and mask functions (issue 39): ALiBi (a score function of the
// positions and a per-head capture, its gradient derived from its body)
// and document masking (a mask function of per-token document ids that
// hides whole rows of a causal block: rows that see no key), as written
// (the host runs tile.apply element by element) and vectorized (the form
// a GPU runs, the main kernel's positions transposed), against float64.
// Against the gradients without either function they are far.
TEST_F(SdpaBackwardKernelTest, ScoreAndMaskFunctions) {
  Type f16 = Float16Type::get(&ctx), bf16 = BFloat16Type::get(&ctx);
  Type f32 = Float32Type::get(&ctx), i32 = IntegerType::get(&ctx, 32);
  const int64_t batch = 2, heads = 4, seqQ = 70, seqK = 90;
  HostTensor slopes = HostTensor::create(f32, {heads});
  for (int64_t h = 0; h < heads; ++h)
    slopes.data[h] = std::exp2(-1.0 - h);
  // Documents of 13, 30 and the rest of the keys (entry 0), 50 and the
  // rest (entry 1); the queries read the ids of their own positions.
  HostTensor docs = HostTensor::create(i32, {batch, seqK});
  for (int64_t j = 0; j < seqK; ++j) {
    docs.at({0, j}) = j < 13 ? 0 : j < 43 ? 1 : 2;
    docs.at({1, j}) = j < 50 ? 5 : 7;
  }
  ScoreFunctions alibi, document, both;
  alibi.score = [&](double s, int64_t, int64_t h, int64_t q, int64_t kv) {
    return s + roundToType(slopes.data[h], f32) * double(kv - q);
  };
  document.mask = [&](int64_t b, int64_t, int64_t q, int64_t kv) {
    return docs.at({b, q}) == docs.at({b, kv});
  };
  both.score = alibi.score;
  both.mask = document.mask;

  for (bool vectorize : {false, true}) {
    SCOPED_TRACE(vectorize ? "vectorized" : "as written");
    Functions fns{{"alibi", "document"},
                  {KernelArg::view(slopes), KernelArg::view(docs)},
                  both,
                  vectorize};
    Case c{batch, heads, 2, seqQ, seqK, tile::CausalMode::None};
    for (auto [elt, causal, bm, bn, seed] :
         {std::tuple{bf16, tile::CausalMode::None, 32, 16, 31u},
          std::tuple{f16, tile::CausalMode::TopLeft, 16, 32, 32u}}) {
      c.causal = causal;
      const double tolerance = elt.isBF16() ? 6e-3 : 1e-3;
      // As built, and with the library's sm_90a schedule (exp2, and the
      // prefetch, which takes the vectorized form).
      for (Schedule schedule :
           {Schedule{}, Schedule{vectorize ? 2 : 1, false, false, true}}) {
        std::array<double, 4> e =
            errors(elt, c, bm, bn, seed, {}, {}, schedule, nullptr, &fns);
        EXPECT_LT(e[0], tolerance) << "dq, exp2 " << schedule.exp2;
        EXPECT_LT(e[1], tolerance) << "dk, exp2 " << schedule.exp2;
        EXPECT_LT(e[2], tolerance) << "dv, exp2 " << schedule.exp2;
        EXPECT_LT(e[3], tolerance)
            << "dq (deterministic), exp2 " << schedule.exp2;
      }
    }
    // A score function whose slope is not 1: soft-capping written as a
    // function (the chain rule's 1 - tanh^2 derived from its body).
    const double cap = 2.0;
    ScoreFunctions capped;
    capped.score = [&](double s, int64_t, int64_t, int64_t, int64_t) {
      return cap * std::tanh(s / cap);
    };
    Functions capFns{
        {"tanh_softcap"}, {KernelArg::value(cap)}, capped, vectorize};
    std::array<double, 4> e =
        errors(f16, c, 32, 16, 34, {}, {}, {}, nullptr, &capFns);
    for (int i : {0, 1, 2, 3})
      EXPECT_LT(e[i], 1e-3) << "tanh_softcap, gradient " << i;
    // The comparison can fail: without the score function or the mask.
    e = errors(f16, c, 32, 16, 34, {}, {}, {}, nullptr, &capFns, &document);
    EXPECT_GT(e[0], 0.05);
    for (const ScoreFunctions *other : {&document, &alibi}) {
      e = errors(bf16, c, 32, 16, 33, {}, {}, {}, nullptr, &fns, other);
      EXPECT_GT(e[0], 0.05);
      EXPECT_GT(e[1], 0.05);
      EXPECT_GT(e[3], 0.05);
    }
  }
}

// Variable-length batches: sequences packed into [1, H, total, D], each
// against its own float64 gradients (an empty key range: zero gradients;
// an empty query range: nothing written there), no mask, both causal
// alignments and windows (aligned per sequence bottom-right, and as given;
// one with no left bound), grouped KV heads.
TEST_F(SdpaBackwardKernelTest, Varlen) {
  Type f16 = Float16Type::get(&ctx), f32 = Float32Type::get(&ctx);
  const int64_t heads = 4, kvHeads = 2, d = 32, bm = 16, bn = 32;
  const std::vector<int64_t> lensQ = {37, 0, 64, 50, 20};
  const std::vector<int64_t> lensK = {50, 30, 64, 0, 77};
  // (A window's band: lo, hi and its alignment, window_align.)
  struct Mask {
    tile::CausalMode causal;
    int64_t lo = 0, hi = 0, align = 0;
  };
  for (Mask mask :
       {Mask{tile::CausalMode::None}, Mask{tile::CausalMode::TopLeft},
        Mask{tile::CausalMode::BottomRight},
        Mask{tile::CausalMode::Window, -20, 0, 1},
        Mask{tile::CausalMode::Window, -9, 13, 0},
        Mask{tile::CausalMode::Window, -(int64_t{1} << 40), 3, 1}}) {
    tile::CausalMode causal = mask.causal;
    const bool window = causal == tile::CausalMode::Window;
    OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
    OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
    SdpaBackwardKernelConfig config;
    config.headDim = d;
    config.elementType = f16;
    config.causal = causal;
    config.varlen = true;
    config.blockM = bm;
    config.blockN = bn;
    FailureOr<SdpaBackwardKernels> kernels =
        buildSdpaBackwardKernels(b, module->getLoc(), config);
    ASSERT_TRUE(succeeded(kernels));
    ASSERT_TRUE(succeeded(verify(*module)));
    const int64_t seqs = lensQ.size();
    int64_t totalQ = 0, totalK = 0, maxQ = 0, maxK = 0;
    HostTensor cuQ = HostTensor::create(IntegerType::get(&ctx, 32), {seqs + 1});
    HostTensor cuK = HostTensor::create(IntegerType::get(&ctx, 32), {seqs + 1});
    for (int64_t i = 0; i < seqs; ++i) {
      cuQ.data[i] = totalQ, cuK.data[i] = totalK;
      totalQ += lensQ[i], totalK += lensK[i];
      maxQ = std::max(maxQ, lensQ[i]), maxK = std::max(maxK, lensK[i]);
    }
    cuQ.data[seqs] = totalQ, cuK.data[seqs] = totalK;
    auto make = [&](Type t, std::vector<int64_t> sizes) {
      return HostTensor::create(t, std::move(sizes));
    };
    HostTensor q = make(f16, {1, heads, totalQ, d}), o = q, dO = q, dq = q;
    HostTensor k = make(f16, {1, kvHeads, totalK, d}), v = k, dk = k, dv = k;
    HostTensor lse = make(f32, {1, heads, totalQ}), delta = lse;
    HostTensor dqAccum = make(f32, {1, heads, totalQ, d});
    HostTensor rq = make(f32, {1, heads, totalQ, d});
    HostTensor rk = make(f32, {1, kvHeads, totalK, d}), rv = rk;
    const double scale = roundToType(1.0 / std::sqrt(double(d)), f32);
    std::mt19937 rng(20);
    std::normal_distribution<double> normal;
    // Each sequence on its own: inputs, forward, reference gradients, then
    // copied into the packed tensors at its offsets.
    for (int64_t i = 0; i < seqs; ++i) {
      int64_t sq = lensQ[i], sk = lensK[i];
      HostTensor sqT = make(f16, {1, heads, sq, d}), sdo = sqT, so = sqT;
      HostTensor skT = make(f16, {1, kvHeads, sk, d}), svT = skT;
      for (HostTensor *t : {&sqT, &sdo, &skT, &svT})
        for (double &x : t->data)
          x = roundToType(normal(rng), f16);
      HostTensor slse = make(f32, {1, heads, sq});
      Band band = window ? Band{mask.lo + mask.align * (sk - sq),
                                mask.hi + mask.align * (sk - sq)}
                         : bandOf(causal, sq, sk);
      sdpaReference(sqT, skT, svT, so, scale, band, 0.0, &slse);
      HostTensor gq = make(f32, {1, heads, sq, d});
      HostTensor gk = make(f32, {1, kvHeads, sk, d}), gv = gk;
      sdpaBackwardReference(sqT, skT, svT, sdo, gq, gk, gv, scale, band);
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t r = 0; r < sq; ++r) {
          int64_t row = int64_t(cuQ.data[i]) + r;
          lse.at({0, h, row}) = roundToType(slse.at({0, h, r}), f32);
          for (int64_t c = 0; c < d; ++c) {
            q.at({0, h, row, c}) = sqT.at({0, h, r, c});
            dO.at({0, h, row, c}) = sdo.at({0, h, r, c});
            o.at({0, h, row, c}) = roundToType(so.at({0, h, r, c}), f16);
            rq.at({0, h, row, c}) = gq.at({0, h, r, c});
          }
        }
      for (int64_t h = 0; h < kvHeads; ++h)
        for (int64_t r = 0; r < sk; ++r)
          for (int64_t c = 0; c < d; ++c) {
            int64_t row = int64_t(cuK.data[i]) + r;
            k.at({0, h, row, c}) = skT.at({0, h, r, c});
            v.at({0, h, row, c}) = svT.at({0, h, r, c});
            rk.at({0, h, row, c}) = gk.at({0, h, r, c});
            rv.at({0, h, row, c}) = gv.at({0, h, r, c});
          }
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (HostTensor *t : {&dq, &dk, &dv, &delta, &dqAccum})
      std::fill(t->data.begin(), t->data.end(), nan);
    auto blocks = [](int64_t n, int64_t block) {
      return (n + block - 1) / block;
    };
    std::array<int64_t, 3> rows = {blocks(maxQ, bm), heads, seqs};
    ASSERT_TRUE(succeeded(runKernel(
        kernels->preprocess,
        {KernelArg::view(o), KernelArg::view(dO), KernelArg::view(delta),
         KernelArg::view(dqAccum), KernelArg::view(cuQ)},
        rows)));
    std::vector<KernelArg> mainArgs = {
        KernelArg::view(q),       KernelArg::view(k),   KernelArg::view(v),
        KernelArg::view(dO),      KernelArg::view(lse), KernelArg::view(delta),
        KernelArg::view(dqAccum), KernelArg::view(dk),  KernelArg::view(dv),
        KernelArg::value(scale)};
    if (window)
      mainArgs.insert(mainArgs.end(),
                      {KernelArg::index(mask.lo), KernelArg::index(mask.hi)});
    mainArgs.insert(mainArgs.end(),
                    {KernelArg::view(cuQ), KernelArg::view(cuK)});
    if (window)
      mainArgs.push_back(KernelArg::index(mask.align));
    ASSERT_TRUE(succeeded(
        runKernel(kernels->main, mainArgs, {blocks(maxK, bn), kvHeads, seqs})));
    ASSERT_TRUE(
        succeeded(runKernel(kernels->postprocess,
                            {KernelArg::view(dqAccum), KernelArg::view(dq),
                             KernelArg::value(scale), KernelArg::view(cuQ)},
                            rows)));
    HostTensor dqDet = dq;
    std::fill(dqDet.data.begin(), dqDet.data.end(), nan);
    std::vector<KernelArg> dqArgs = {
        KernelArg::view(q),     KernelArg::view(k),     KernelArg::view(v),
        KernelArg::view(dO),    KernelArg::view(lse),   KernelArg::view(delta),
        KernelArg::view(dqDet), KernelArg::value(scale)};
    dqArgs.insert(dqArgs.end(), mainArgs.begin() + 10, mainArgs.end());
    ASSERT_TRUE(succeeded(runKernel(kernels->dq, dqArgs, rows)));
    EXPECT_LT(relativeL2(dqDet, rq), 1e-3)
        << "dq (deterministic), causal " << int(causal) << " band " << mask.lo
        << ".." << mask.hi;
    EXPECT_LT(relativeL2(dq, rq), 1e-3)
        << "dq, causal " << int(causal) << " band " << mask.lo << ".."
        << mask.hi;
    EXPECT_LT(relativeL2(dk, rk), 1e-3)
        << "dk, causal " << int(causal) << " band " << mask.lo << ".."
        << mask.hi;
    EXPECT_LT(relativeL2(dv, rv), 1e-3)
        << "dv, causal " << int(causal) << " band " << mask.lo << ".."
        << mask.hi;
  }
}

// The comparison can fail: against the gradients of another mask, the
// kernels' are far off.
TEST_F(SdpaBackwardKernelTest, OtherMaskIsFar) {
  Type f16 = Float16Type::get(&ctx);
  Case c{1, 2, 2, 40, 40, tile::CausalMode::TopLeft};
  std::array<double, 4> e =
      errors(f16, c, 16, 16, 8, bandOf(tile::CausalMode::None, 40, 40));
  EXPECT_GT(e[0], 0.1);
  EXPECT_GT(e[1], 0.1);
  EXPECT_GT(e[2], 0.1);
  EXPECT_GT(e[3], 0.1);
}

TEST_F(SdpaBackwardKernelTest, RefusesBadConfigs) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
  OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
  SdpaBackwardKernelConfig config;
  config.elementType = Float32Type::get(&ctx);
  ctx.getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
  EXPECT_TRUE(failed(buildSdpaBackwardKernels(b, module->getLoc(), config)));
  config.elementType = Float16Type::get(&ctx);
  config.blockM = 24;
  EXPECT_TRUE(failed(buildSdpaBackwardKernels(b, module->getLoc(), config)));
  config.blockM = 64;
  config.headDim = 40;
  EXPECT_TRUE(failed(buildSdpaBackwardKernels(b, module->getLoc(), config)));
}

} // namespace
