//===- ArgsTest.cpp - Argument checks of ta_sdpa and ta_sdpa_plan ---------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every TA_ERROR_INVALID_ARGUMENT message, through ta_sdpa_plan (which
// checks as ta_sdpa does and needs no GPU).
//
//===----------------------------------------------------------------------===//

#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

using namespace tatest;
using testing::HasSubstr;

namespace {

class Args : public testing::Test {
protected:
  void SetUp() override {
    Json d128 = kernelEntry("k128");
    d128["head_dim"] = 128;
    writeLibrary(dir, manifestOf({kernelEntry("k64"), d128}));
    ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
    args = problem(2, 3, 77, 131, 64);
  }

  /// ta_sdpa_plan on `args` for an sm_90 device; the status.
  ta_status plan() {
    return ta_sdpa_plan(library.get(), &args, 9, 0, &launchPlan);
  }

  /// Expects TA_ERROR_INVALID_ARGUMENT with exactly `message`.
  void expectInvalid(const std::string &message) {
    EXPECT_EQ(plan(), TA_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(lastError(), message);
  }

  TempDir dir;
  Library library;
  ta_sdpa_args args;
  ta_launch_plan launchPlan;
};

} // namespace

TEST_F(Args, GoodArgumentsPlan) {
  EXPECT_EQ(plan(), TA_OK) << lastError();
  EXPECT_EQ(launchPlan.kernel, 0);
}

TEST_F(Args, NullPointers) {
  EXPECT_EQ(ta_sdpa_plan(library.get(), nullptr, 9, 0, &launchPlan),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "args is null");
  EXPECT_EQ(ta_sdpa_plan(nullptr, &args, 9, 0, &launchPlan),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "ta_sdpa_plan: library is null");
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, nullptr),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "ta_sdpa_plan: plan is null");
  EXPECT_EQ(ta_sdpa(nullptr, &args, 0, nullptr), TA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "ta_sdpa: library is null");
  args.k.data = 0;
  expectInvalid("k has a null data pointer (k [2, 3, 131, 64])");
}

TEST_F(Args, Enums) {
  args.dtype = static_cast<ta_dtype>(7);
  expectInvalid("dtype must be TA_DTYPE_F16 (0) or TA_DTYPE_BF16 (1), got 7");
  args.dtype = TA_DTYPE_F16;
  args.mask = static_cast<ta_mask>(-1);
  expectInvalid("mask must be TA_MASK_NONE (0), TA_MASK_CAUSAL_TOP_LEFT (1) "
                "or TA_MASK_CAUSAL_BOTTOM_RIGHT (2), got -1");
}

TEST_F(Args, Shapes) {
  args.q.sizes[2] = -5;
  expectInvalid("q has a negative size along dimension 2: -5 (q [2, 3, -5, "
                "64])");
  args = problem(2, 3, 77, 131, 64);
  args.k.sizes[0] = 1;
  expectInvalid("k has batch size 1 but q has 2 (q [2, 3, 77, 64], k [1, 3, "
                "131, 64])");
  args = problem(2, 3, 77, 131, 64);
  args.v.sizes[1] = 4;
  expectInvalid("v has head count 4 but k has 3 (k [2, 3, 131, 64], v [2, 4, "
                "131, 64])");
  // Grouped KV heads: k's and v's head count must divide q's.
  args = problem(2, 3, 77, 131, 64);
  args.k.sizes[1] = args.v.sizes[1] = 2;
  expectInvalid("k has head count 2 but q has 3; q's head count must be a "
                "multiple of k's and v's (grouped KV heads) (q [2, 3, 77, "
                "64], k [2, 2, 131, 64])");
  args = problem(2, 3, 77, 131, 64);
  args.k.sizes[1] = args.v.sizes[1] = 0;
  expectInvalid("k has head count 0 but q has 3; q's head count must be a "
                "multiple of k's and v's (grouped KV heads) (q [2, 3, 77, "
                "64], k [2, 0, 131, 64])");
  args = problem(2, 6, 77, 131, 64);
  args.k.sizes[1] = args.v.sizes[1] = 2;
  args.v.sizes[2] = 130;
  expectInvalid("v has sequence length 130 but k has 131 (k [2, 2, 131, 64], "
                "v [2, 2, 130, 64])");
  args = problem(2, 3, 77, 131, 64);
  args.k.sizes[3] = 128;
  expectInvalid("k has head dim 128 but q has 64 (q [2, 3, 77, 64], k [2, 3, "
                "131, 128])");
  args = problem(2, 3, 77, 131, 64);
  args.v.sizes[2] = 130;
  expectInvalid("v has sequence length 130 but k has 131 (k [2, 3, 131, 64], "
                "v [2, 3, 130, 64])");
  args = problem(2, 3, 77, 131, 64);
  args.o.sizes[2] = 78;
  expectInvalid("o has shape [2, 3, 78, 64] but q has [2, 3, 77, 64] and v "
                "[2, 3, 131, 64]; the output must have q's shape with v's "
                "head dim");
  args = problem(2, 3, 77, 0, 64);
  expectInvalid("k has sequence length 0; tiled-attn needs at least one key");
}

TEST_F(Args, HeadDim) {
  args = problem(2, 3, 77, 131, 96);
  expectInvalid("head dim D=96 is not supported; the kernel library has head "
                "dims 64, 128");
}

TEST_F(Args, Scale) {
  for (float scale :
       {0.0f, -1.0f, std::numeric_limits<float>::infinity(), std::nanf("")}) {
    args.scale = scale;
    EXPECT_EQ(plan(), TA_ERROR_INVALID_ARGUMENT);
    EXPECT_THAT(lastError(),
                HasSubstr("scale must be a finite positive float32 value"));
  }
  args.scale = 0.0f;
  expectInvalid("scale must be a finite positive float32 value, got 0");
}

TEST_F(Args, GridLimits) {
  args = problem(2, 70000, 77, 131, 64);
  expectInvalid("q has head count 70000; tiled-attn launches one block row "
                "per head and batch entry, at most 65535");
  args = problem(65536, 1, 77, 131, 64);
  expectInvalid("q has batch size 65536; tiled-attn launches one block row "
                "per head and batch entry, at most 65535");
}

TEST_F(Args, Strides) {
  const std::string needs =
      " (the kernels need a last-dimension stride of 1, and a data pointer "
      "and strides of the other dimensions longer than 1 that are multiples "
      "of 16 bytes: copy ";
  args.q.strides[3] = 2;
  expectInvalid("q cannot be passed to kernel k64 as it is: its "
                "last-dimension stride is 2, not 1" +
                needs + "q into a contiguous buffer first)");
  args = problem(2, 3, 77, 131, 64);
  args.k.data += 8;
  expectInvalid("k cannot be passed to kernel k64 as it is: its data pointer "
                "0x200000008 is not 16-byte aligned" +
                needs + "k into a contiguous buffer first)");
  args = problem(2, 3, 77, 131, 64);
  // Rows of 68 elements (136 bytes), heads of 77 rows and 8 more bytes.
  args.o.strides[2] = 68;
  args.o.strides[1] = 77 * 68 + 4;
  args.o.strides[0] = 3 * args.o.strides[1];
  expectInvalid("o cannot be passed to kernel k64 as it is: its stride along "
                "dimension 2 (68 elements) is not a multiple of 16 bytes" +
                needs + "o into a contiguous buffer first)");
}

TEST_F(Args, StridesOfUnitDimensionsAreFree) {
  // Dimensions of size 1 are never stepped along: any stride will do.
  args = problem(1, 3, 77, 131, 64);
  for (ta_tensor *t : {&args.q, &args.k, &args.v, &args.o})
    t->strides[0] = 3;
  EXPECT_EQ(plan(), TA_OK) << lastError();
  // Negative and zero strides (a broadcast k) are taken.
  args = problem(2, 3, 77, 131, 64);
  args.k.strides[1] = 0;
  args.v.strides[0] = -args.v.strides[0];
  EXPECT_EQ(plan(), TA_OK) << lastError();
}

TEST_F(Args, EmptyOutputPlansNothing) {
  for (int dim : {0, 1, 2}) {
    args = problem(2, 3, 77, 131, 64);
    args.q.sizes[dim] = args.o.sizes[dim] = 0;
    if (dim < 2)
      args.k.sizes[dim] = args.v.sizes[dim] = 0;
    args.q.data = args.o.data = 0;
    EXPECT_EQ(plan(), TA_OK) << lastError();
    EXPECT_EQ(launchPlan.kernel, -1);
    EXPECT_EQ(launchPlan.num_params, 0);
    EXPECT_EQ(launchPlan.grid[0] * launchPlan.grid[1] * launchPlan.grid[2], 0u);
    // And ta_sdpa launches nothing, needing no driver at all.
    EXPECT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_OK) << lastError();
  }
}

TEST_F(Args, ComputeCapability) {
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 0, 0, &launchPlan),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "compute capability 0.0 is not one of a CUDA device");
}

TEST_F(Args, LastErrorIsPerThreadAndKept) {
  args.scale = -1.0f;
  EXPECT_EQ(plan(), TA_ERROR_INVALID_ARGUMENT);
  std::string message = lastError();
  args.scale = 1.0f;
  EXPECT_EQ(plan(), TA_OK);
  EXPECT_EQ(lastError(), message); // Success keeps the last failure's text.
  std::string other;
  std::thread([&] { other = ta_last_error(); }).join();
  EXPECT_EQ(other, "");
}
