//===- LseTest.cpp - The rows' log-sum-exps -------------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// ta_sdpa_args.lse through ta_sdpa_plan: its check, the kernel chosen (a
// problem that asks for the log-sum-exps only on "lse" kernels, every band
// on an "lse" window kernel; one that does not ask prefers kernels without
// them and falls back to one with them), the packed view (the address and
// [B, H, S_q] contiguous, or no rows when not asked for), the manifest's
// checks of the "lse" parameters and the messages when no kernel fits.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>

using namespace tatest;
using testing::HasSubstr;

namespace {

/// The parameters of the view "lse" as the compiler emits them: base, the
/// three (dynamic) sizes, the strides of dims 0 and 1.
void addLseParams(Json &params, const std::string &indexType = "i64") {
  params.push_back({{"name", "lse"}, {"kind", "base"}, {"type", "ptr"}});
  for (int dim = 0; dim < 3; ++dim)
    params.push_back(
        {{"name", "lse"}, {"kind", "size"}, {"dim", dim}, {"type", indexType}});
  for (int dim = 0; dim < 2; ++dim)
    params.push_back({{"name", "lse"},
                      {"kind", "stride"},
                      {"dim", dim},
                      {"type", indexType}});
}

/// A kernel of `causal` that writes the log-sum-exps: the standard
/// parameters, window_lo and window_hi for a "window" kernel, then lse.
Json lseEntry(const std::string &name, const std::string &causal = "window") {
  Json e = kernelEntry(name);
  e["causal"] = causal;
  e["lse"] = true;
  if (causal == "window")
    for (const char *bound : {"window_lo", "window_hi"})
      e["params"].push_back(
          {{"name", bound}, {"kind", "scalar"}, {"type", "i64"}});
  addLseParams(e["params"]);
  return e;
}

Json maskEntry(const std::string &name, const std::string &causal) {
  Json e = kernelEntry(name);
  e["causal"] = causal;
  if (causal == "window")
    for (const char *bound : {"window_lo", "window_hi"})
      e["params"].push_back(
          {{"name", bound}, {"kind", "scalar"}, {"type", "i64"}});
  return e;
}

class Lse : public ChoiceTest {
protected:
  /// The packed view "lse" of an lse window kernel (parameters 39-44):
  /// "base [size0, size1, size2] [stride0, stride1]".
  std::string packedLse() {
    EXPECT_EQ(plan.num_params, 45);
    return std::to_string(paramAs<uint64_t>(plan, 39)) + " [" +
           std::to_string(paramAs<int64_t>(plan, 40)) + ", " +
           std::to_string(paramAs<int64_t>(plan, 41)) + ", " +
           std::to_string(paramAs<int64_t>(plan, 42)) + "] [" +
           std::to_string(paramAs<int64_t>(plan, 43)) + ", " +
           std::to_string(paramAs<int64_t>(plan, 44)) + "]";
  }
};

} // namespace

TEST(LseArgs, Layout) {
  // The log-sum-exps' address follows the softcap and its padding (API
  // version 5; varlen follows it: VarlenTest.cpp); zero-initialized, none.
  EXPECT_EQ(offsetof(ta_sdpa_args, lse), offsetof(ta_sdpa_args, softcap) + 8);
  EXPECT_EQ(offsetof(ta_kernel_info, lse),
            offsetof(ta_kernel_info, softcap) + sizeof(int32_t));
  ta_sdpa_args zero = {};
  EXPECT_EQ(zero.lse, 0u);
}

TEST_F(Lse, KernelInfoSaysSo) {
  open({lseEntry("wl"), maskEntry("none", "none")});
  ta_kernel_info info;
  ASSERT_EQ(ta_library_kernel(library.get(), 0, &info), TA_OK);
  EXPECT_EQ(info.lse, 1);
  ASSERT_EQ(ta_library_kernel(library.get(), 1, &info), TA_OK);
  EXPECT_EQ(info.lse, 0);
}

TEST_F(Lse, PackedContiguousBHSq) {
  open({lseEntry("wl")});
  args.lse = 0x500000000;
  ASSERT_EQ(chosen(), "wl");
  // [B, H, S_q] = [2, 3, 77], strides [H * S_q, S_q] (and 1).
  EXPECT_EQ(packedLse(),
            std::to_string(0x500000000ull) + " [2, 3, 77] [231, 77]");
  // window_lo and window_hi: no mask is the unbounded band.
  EXPECT_EQ(paramAs<int64_t>(plan, 37), -76);
  EXPECT_EQ(paramAs<int64_t>(plan, 38), 130);
  EXPECT_EQ(plan.param_offsets[39], 312u);
  EXPECT_EQ(plan.param_offsets[44], 352u);
}

TEST_F(Lse, NotAskedForIsAViewOfNoRows) {
  // Only an lse kernel of the band's mask: it runs, writing nothing.
  open({lseEntry("wl")});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  ASSERT_EQ(chosen(), "wl");
  EXPECT_EQ(packedLse(), "0 [2, 3, 0] [0, 77]");
}

TEST_F(Lse, MustBeFloatAligned) {
  open({lseEntry("wl")});
  args.lse = 0x500000002;
  EXPECT_EQ(chosen(), "error 1: lse (the rows' log-sum-exps, float32) must be "
                      "4-byte aligned, got 0x500000002");
}

TEST_F(Lse, HeadStrideMustNotOverflow) {
  open({lseEntry("wl")});
  // 2^32 heads of 2^32 queries: H * S_q does not fit in 64 bits.
  const int64_t big = int64_t(1) << 32;
  for (ta_tensor *t : {&args.q, &args.k, &args.v, &args.o}) {
    t->sizes[0] = 1;
    t->sizes[1] = big;
    t->sizes[2] = t == &args.k || t == &args.v ? 1 : big;
  }
  args.lse = 0x500000000;
  EXPECT_EQ(chosen(), "error 1: lse: q's head count times its sequence length "
                      "(4294967296 x 4294967296) overflows a 64-bit element "
                      "count");
  // Without the log-sum-exps the stride is not needed (the call fails
  // later, for another reason).
  args.lse = 0;
  EXPECT_THAT(chosen(), testing::Not(HasSubstr("overflows")));
}

TEST_F(Lse, EveryBandRunsOnAnLseWindowKernel) {
  open({maskEntry("none", "none"), maskEntry("tl", "top_left"),
        maskEntry("w", "window"), lseEntry("wl")});
  args.lse = 0x500000000;
  EXPECT_EQ(chosen(), "wl");
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(), "wl");
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(chosen(), "wl");
  EXPECT_EQ(paramAs<int64_t>(plan, 38), 54);
  args.window = ta_window{1, 1, 16, 0};
  EXPECT_EQ(chosen(), "wl");
  // Without lse, the kernels without it: the choice of API version 4.
  args.lse = 0;
  EXPECT_EQ(chosen(), "w");
  args.window = ta_window{};
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(), "tl");
  args.mask = TA_MASK_NONE;
  EXPECT_EQ(chosen(), "none");
}

TEST_F(Lse, TheBandsOwnMaskFirstAmongLseKernels) {
  Json wl90 = lseEntry("wl90");
  wl90["arch"] = "sm_90a";
  open({lseEntry("wl"), wl90, lseEntry("tll", "top_left")});
  args.lse = 0x500000000;
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(), "tll");
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(chosen(9, 0), "wl90");
  EXPECT_EQ(chosen(8, 0), "wl");
}

TEST_F(Lse, WithoutItKernelsWithoutItComeFirstForEachMask) {
  // A top-left problem: tl (no lse) before tll; then, for the window mask,
  // w before wl.
  open({lseEntry("tll", "top_left"), maskEntry("tl", "top_left"),
        lseEntry("wl"), maskEntry("w", "window")});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(), "tl");
  args.window = ta_window{1, 0, 16, 0};
  EXPECT_EQ(chosen(), "w");
}

TEST_F(Lse, NoKernelMessagesNameIt) {
  open({maskEntry("none", "none"), maskEntry("w", "window")});
  args.lse = 0x500000000;
  std::string status = chosen();
  EXPECT_THAT(status,
              HasSubstr("error 2: no kernel in the library for sm_90, "
                        "f16, D=64, causal=none, log-sum-exp (library "));
  EXPECT_THAT(status, HasSubstr("; a kernel of causal=none or causal=window, "
                                "with lse, would compute it"));
  args.kernel = "w";
  EXPECT_THAT(chosen(),
              HasSubstr("causal=none, log-sum-exp, name=w (library "));
}

TEST_F(Lse, ManifestChecksTheView) {
  // lse parameters on a kernel without "lse".
  Json stray = maskEntry("stray", "none");
  addLseParams(stray["params"]);
  writeLibrary(dir, manifestOf({stray}));
  EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(),
              HasSubstr("field 'params[37]' belongs to the view 'lse', which "
                        "only a kernel of 'lse' true takes (this one's 'lse' "
                        "is absent)"));
  // "lse": true without the view.
  Json missing = maskEntry("missing", "none");
  missing["lse"] = true;
  writeLibrary(dir, manifestOf({missing}));
  EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("a kernel of 'lse' true takes the view "
                                     "'lse' (the rows' log-sum-exps), whose "
                                     "base field 'params' lacks"));
  // A fourth dimension.
  Json deep = lseEntry("deep");
  deep["params"].push_back(
      {{"name", "lse"}, {"kind", "size"}, {"dim", 3}, {"type", "i64"}});
  writeLibrary(dir, manifestOf({deep}));
  EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("must be the base, a size or a stride of "
                                     "the rank-3 view 'lse'"));
}
