//===- ScoreGradientTest.cpp - Derived score gradients on the host --------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tile-differentiate-score's gradients of score functions against central
// finite differences of the functions themselves, both run by the host
// executor: the library's tanh soft-capping and ALiBi (kernels/functions),
// and a function of every rule at once, at scores across their range
// (soft-capping saturates: its gradient goes to 0), with several upstream
// gradients. A wrong rule (tanh's 1 + t^2, a lost inner derivative) fails
// it.
//
//===----------------------------------------------------------------------===//

#include "TileDialects.h"
#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Dialect/Tile/Transforms/Passes.h"
#include "tiled_attn/Execution/HostExecutor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::exec;

namespace {

class ScoreGradientTest : public ::testing::Test {
protected:
  ScoreGradientTest() { test::loadTileDialects(context); }

  /// `module` with `name`_grad added by tile-differentiate-score.
  bool differentiate(ModuleOp module, StringRef name) {
    PassManager pm(&context);
    tile::TileDifferentiateScorePassOptions options;
    options.function = name.str();
    pm.addPass(tile::createTileDifferentiateScorePass(options));
    return succeeded(pm.run(module));
  }

  /// Checks name_grad(score, ..., grad) against grad times the central
  /// difference of name at each score; `rest` are the arguments after the
  /// score (b, h, q_idx, kv_idx, captures).
  void expectGradients(ModuleOp module, StringRef name,
                       std::vector<KernelArg> rest,
                       std::initializer_list<double> scores) {
    auto f = module.lookupSymbol<func::FuncOp>(name);
    auto g = module.lookupSymbol<func::FuncOp>((name + "_grad").str());
    ASSERT_TRUE(f && g);
    auto call = [&](func::FuncOp fn, double score, std::optional<double> grad) {
      std::vector<KernelArg> args = {KernelArg::value(score)};
      args.insert(args.end(), rest.begin(), rest.end());
      if (grad)
        args.push_back(KernelArg::value(*grad));
      FailureOr<double> r = callScalarFunction(fn, args);
      EXPECT_TRUE(succeeded(r));
      return succeeded(r) ? *r : NAN;
    };
    for (double score : scores)
      for (double grad : {1.0, -0.75, 3.0}) {
        // (The host computes in f32: a step of 1e-2 keeps the difference's
        // rounding error near 1e-5 of the slope.)
        const double step = 1e-2;
        double slope = (call(f, score + step, {}) - call(f, score - step, {})) /
                       (2 * step);
        double derived = call(g, score, grad);
        EXPECT_NEAR(derived, grad * slope,
                    2e-3 * std::max(1.0, std::fabs(grad * slope)))
            << name.str() << " at score " << score << ", grad " << grad;
      }
  }

  OwningOpRef<ModuleOp> library(StringRef name) {
    std::string path =
        std::string(TILED_ATTN_FUNCTIONS_DIR) + "/" + name.str() + ".mlir";
    return parseSourceFile<ModuleOp>(path, &context);
  }

  MLIRContext context;
};

TEST_F(ScoreGradientTest, TanhSoftcap) {
  OwningOpRef<ModuleOp> module = library("tanh_softcap");
  ASSERT_TRUE(module && differentiate(*module, "tanh_softcap"));
  std::vector<KernelArg> rest = {KernelArg::index(0), KernelArg::index(1),
                                 KernelArg::index(5), KernelArg::index(9),
                                 KernelArg::value(30.0)};
  expectGradients(*module, "tanh_softcap", rest,
                  {-80.0, -20.0, -3.0, 0.0, 0.5, 10.0, 29.0, 75.0});
  // A small cap: saturated at both ends.
  rest.back() = KernelArg::value(2.0);
  expectGradients(*module, "tanh_softcap", rest, {-6.0, -1.0, 0.3, 2.5, 9.0});
}

TEST_F(ScoreGradientTest, Alibi) {
  OwningOpRef<ModuleOp> module = library("alibi");
  ASSERT_TRUE(module && differentiate(*module, "alibi"));
  HostTensor slopes = HostTensor::create(Float32Type::get(&context), {4});
  slopes.data = {0.5, 0.25, 0.125, 0.0625};
  expectGradients(*module, "alibi",
                  {KernelArg::index(0), KernelArg::index(2),
                   KernelArg::index(40), KernelArg::index(7),
                   KernelArg::view(slopes)},
                  {-5.0, 0.0, 3.25});
}

TEST_F(ScoreGradientTest, EveryRule) {
  // Every rule contributes to the result at some of the scores below
  // (max takes each side, min caps at c, the select picks each branch).
  const char *source = R"mlir(
    func.func @mix(%score: f32, %b: index, %h: index, %q_idx: index,
                   %kv_idx: index, %c: f32) -> f32 {
      %half = arith.constant 0.5 : f32
      %three = arith.constant 3.0 : f32
      %e = math.exp2 %score : f32
      %l = math.log %e : f32
      %x = arith.mulf %l, %half : f32
      %x3 = arith.addf %x, %three : f32
      %d = arith.divf %c, %x3 : f32
      %n = arith.negf %d : f32
      %m = arith.maximumf %n, %score : f32
      %k = arith.minimumf %m, %c : f32
      %t = math.tanh %k : f32
      %s = math.sqrt %e : f32
      %ex = math.exp %t : f32
      %p0 = arith.subf %ex, %s : f32
      %p1 = arith.addf %p0, %l : f32
      %p = arith.addf %p1, %d : f32
      %wide = arith.extf %p : f32 to f64
      %back = arith.truncf %wide : f64 to f32
      %tl0 = arith.addf %t, %l : f32
      %ex2 = math.exp %x : f32
      %tl = arith.addf %tl0, %ex2 : f32
      %pos = arith.cmpf ogt, %score, %c : f32
      %r = arith.select %pos, %back, %tl : f32
      return %r : f32
    })mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module && differentiate(*module, "mix"));
  expectGradients(*module, "mix",
                  {KernelArg::index(0), KernelArg::index(0),
                   KernelArg::index(0), KernelArg::index(0),
                   KernelArg::value(1.5)},
                  {-2.0, -0.7, 0.4, 1.2, 2.0, 3.5});
}

} // namespace
