//===- SoftcapTest.cpp - Logit soft-capping -------------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// ta_sdpa_args.softcap through ta_sdpa_plan and ta_sdpa: its checks, the
// kernel chosen (a problem with a softcap only on kernels compiled with
// one, every band, the unbounded one included, on a softcap "window"
// kernel; a problem without one never on them), the packed f32 softcap
// parameter and the messages when no kernel fits.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

using namespace tatest;
using testing::HasSubstr;

namespace {

/// A kernel of `causal` compiled with softcap: the standard parameters of
/// `indexType`, window_lo and window_hi for a "window" kernel, then the
/// softcap.
Json softcapEntry(const std::string &name, const std::string &causal = "window",
                  const std::string &indexType = "i64") {
  Json e = kernelEntry(name);
  e["causal"] = causal;
  e["softcap"] = true;
  e["index_bits"] = indexType == "i32" ? 32 : 64;
  e["params"] = standardParams(indexType);
  if (causal == "window")
    for (const char *bound : {"window_lo", "window_hi"})
      e["params"].push_back(
          {{"name", bound}, {"kind", "scalar"}, {"type", indexType}});
  e["params"].push_back(
      {{"name", "softcap"}, {"kind", "scalar"}, {"type", "f32"}});
  return e;
}

/// A kernel of causal "window" without softcap.
Json windowEntry(const std::string &name) {
  Json e = kernelEntry(name);
  e["causal"] = "window";
  for (const char *bound : {"window_lo", "window_hi"})
    e["params"].push_back(
        {{"name", bound}, {"kind", "scalar"}, {"type", "i64"}});
  return e;
}

Json maskEntry(const std::string &name, const std::string &causal) {
  Json e = kernelEntry(name);
  e["causal"] = causal;
  return e;
}

class Softcap : public ChoiceTest {
protected:
  /// The planned softcap kernel's window_lo, window_hi (i64, before the
  /// softcap) as "[lo, hi]", and its softcap (the last parameter).
  std::string packedBand() {
    int n = plan.num_params;
    return "[" + std::to_string(paramAs<int64_t>(plan, n - 3)) + ", " +
           std::to_string(paramAs<int64_t>(plan, n - 2)) + "]";
  }
  float packedSoftcap() {
    EXPECT_EQ(plan.param_sizes[plan.num_params - 1], 4u);
    return paramAs<float>(plan, plan.num_params - 1);
  }

  /// "error 2: no kernel in the library for sm_90, f16, D=64, <wanted>
  /// (library <dir>: available: <available>)<would>".
  std::string noKernel(const std::string &wanted, const std::string &available,
                       const std::string &would = "") {
    return "error 2: no kernel in the library for sm_90, f16, D=64, " + wanted +
           " (library " + dir.path() + ": available: " + available + ")" +
           would;
  }
};

} // namespace

TEST(SoftcapArgs, Layout) {
  // The softcap follows the window (API version 4; the log-sum-exps of
  // version 5 follow it, LseTest.cpp); zero-initialized, off.
  EXPECT_EQ(offsetof(ta_sdpa_args, softcap),
            offsetof(ta_sdpa_args, window) + sizeof(ta_window));
  EXPECT_EQ(offsetof(ta_kernel_info, softcap),
            offsetof(ta_kernel_info, num_params) + sizeof(int32_t));
  ta_sdpa_args zero = {};
  EXPECT_EQ(zero.softcap, 0.0f);
}

TEST_F(Softcap, MustBeFiniteAndNotNegative) {
  open({softcapEntry("ws"), maskEntry("none", "none")});
  args.softcap = -1.0f;
  EXPECT_EQ(chosen(), "error 1: softcap must be a finite float32 value >= 0 "
                      "(0: no soft-capping), got -1");
  const float bad[] = {-0.5f, -std::numeric_limits<float>::denorm_min(),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity(),
                       std::numeric_limits<float>::quiet_NaN()};
  for (float softcap : bad) {
    SCOPED_TRACE(softcap);
    args.softcap = softcap;
    EXPECT_THAT(chosen(), HasSubstr("error 1: softcap must be a finite float32 "
                                    "value >= 0 (0: no soft-capping), got "));
  }
  args.softcap = std::numeric_limits<float>::infinity();
  EXPECT_EQ(chosen(), "error 1: softcap must be a finite float32 value >= 0 "
                      "(0: no soft-capping), got inf");
  // 0 and -0 are off; the smallest positive float is on.
  for (float off : {0.0f, -0.0f}) {
    args.softcap = off;
    EXPECT_EQ(chosen(), "none");
  }
  args.softcap = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(chosen(), "ws");
  args.softcap = std::numeric_limits<float>::max();
  EXPECT_EQ(chosen(), "ws");
}

TEST_F(Softcap, PackedAfterTheWindowI64) {
  open({softcapEntry("ws")});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.window = window(4, 4);
  args.softcap = 50.0f;
  ASSERT_EQ(chosen(), "ws");
  ASSERT_EQ(plan.num_params, 40);
  // scale at 288 (4 bytes), window_lo and window_hi at 8-byte alignment,
  // then the f32 softcap.
  EXPECT_EQ(plan.param_offsets[36], 288u);
  EXPECT_EQ(plan.param_offsets[37], 296u);
  EXPECT_EQ(plan.param_offsets[38], 304u);
  EXPECT_EQ(plan.param_offsets[39], 312u);
  EXPECT_EQ(plan.param_sizes[39], 4u);
  EXPECT_EQ(packedSoftcap(), 50.0f);
  EXPECT_EQ(packedBand(), "[-4, 0]");
  EXPECT_EQ(paramAs<float>(plan, 36), 0.125f);
  // The value is the argument's, bit for bit.
  args.softcap = 0.1f;
  ASSERT_EQ(chosen(), "ws");
  EXPECT_EQ(packedSoftcap(), 0.1f);
}

TEST_F(Softcap, PackedAfterTheWindowI32) {
  open({softcapEntry("ws", "window", "i32")});
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  args.softcap = 30.0f;
  ASSERT_EQ(chosen(), "ws");
  EXPECT_EQ(plan.param_offsets[36], 160u);
  EXPECT_EQ(plan.param_offsets[37], 164u);
  EXPECT_EQ(plan.param_offsets[38], 168u);
  EXPECT_EQ(plan.param_offsets[39], 172u);
  EXPECT_EQ(paramAs<int32_t>(plan, 37), -76);
  EXPECT_EQ(paramAs<int32_t>(plan, 38), 54);
  EXPECT_EQ(packedSoftcap(), 30.0f);
}

TEST_F(Softcap, PackedWhereTheManifestPutsIt) {
  // A kernel of another mask, the softcap first: manifest order.
  Json e = maskEntry("tls", "top_left");
  e["softcap"] = true;
  e["params"].insert(
      e["params"].begin(),
      Json{{"name", "softcap"}, {"kind", "scalar"}, {"type", "f32"}});
  open({e});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.softcap = 20.0f;
  ASSERT_EQ(chosen(), "tls");
  ASSERT_EQ(plan.num_params, 38);
  EXPECT_EQ(plan.param_offsets[0], 0u);
  EXPECT_EQ(paramAs<float>(plan, 0), 20.0f);
  EXPECT_EQ(plan.param_offsets[1], 8u); // q's base pointer
  EXPECT_EQ(paramAs<uint64_t>(plan, 1), args.q.data);
  EXPECT_EQ(paramAs<float>(plan, 37), 0.125f);
}

TEST_F(Softcap, EveryBandRunsOnASoftcapWindowKernel) {
  open({maskEntry("none", "none"), maskEntry("tl", "top_left"),
        maskEntry("br", "bottom_right"), windowEntry("w"), softcapEntry("ws")});
  args.softcap = 50.0f;
  // No mask: the unbounded band, which no window kernel runs without one.
  ASSERT_EQ(chosen(), "ws");
  EXPECT_EQ(packedBand(), "[-76, 130]");
  EXPECT_EQ(packedSoftcap(), 50.0f);
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  ASSERT_EQ(chosen(), "ws");
  EXPECT_EQ(packedBand(), "[-76, 0]");
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  ASSERT_EQ(chosen(), "ws");
  EXPECT_EQ(packedBand(), "[-76, 54]");
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.window = window(8, 0);
  ASSERT_EQ(chosen(), "ws");
  EXPECT_EQ(packedBand(), "[-8, 0]");
  // A window that bounds nothing, without a mask.
  args.mask = TA_MASK_NONE;
  args.window = window(-1, 500, /*bottomRight=*/true);
  ASSERT_EQ(chosen(), "ws");
  EXPECT_EQ(packedBand(), "[-76, 130]");
  // Without a softcap, the choice of API version 3: never ws.
  args.softcap = 0.0f;
  EXPECT_EQ(chosen(), "none");
  args.window = ta_window{};
  EXPECT_EQ(chosen(), "none");
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(), "tl");
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(chosen(), "br");
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.window = window(8, 0);
  EXPECT_EQ(chosen(), "w");
}

TEST_F(Softcap, TheBandsOwnMaskFirstAmongSoftcapKernels) {
  Json ws90 = softcapEntry("ws90");
  ws90["arch"] = "sm_90a";
  open({softcapEntry("ws"), ws90, softcapEntry("tls", "top_left"),
        softcapEntry("ns", "none")});
  args.softcap = 50.0f;
  // A softcap kernel of the band's mask beats a window one of a higher arch.
  EXPECT_EQ(chosen(), "ns");
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(), "tls");
  // No bottom_right softcap kernel: a window one, the highest arch first.
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(chosen(9, 0), "ws90");
  EXPECT_EQ(chosen(8, 0), "ws");
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.window = window(8, 0);
  EXPECT_EQ(chosen(9, 0), "ws90");
}

TEST_F(Softcap, ProblemsWithoutOneNeverRunOnSoftcapKernels) {
  open({softcapEntry("ws"), softcapEntry("tls", "top_left")});
  const std::string available =
      "ws (sm_80, f16, D=64, causal=window, softcap); tls (sm_80, f16, D=64, "
      "causal=top_left, softcap)";
  EXPECT_EQ(chosen(), noKernel("causal=none", available));
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(), noKernel("causal=top_left", available,
                               "; a kernel of causal=top_left or "
                               "causal=window would compute it"));
  args.window = window(8, 0);
  EXPECT_EQ(chosen(), noKernel("causal=top_left, window_size=(8, 0)", available,
                               "; a kernel of causal=window would compute it"));
}

TEST_F(Softcap, NoKernelMessagesNameTheSoftcap) {
  open({maskEntry("none", "none"), maskEntry("tl", "top_left"),
        windowEntry("w")});
  const std::string available = "none (sm_80, f16, D=64, causal=none); tl "
                                "(sm_80, f16, D=64, causal=top_left); w "
                                "(sm_80, f16, D=64, causal=window)";
  args.softcap = 50.0f;
  EXPECT_EQ(chosen(),
            noKernel("causal=none, softcap=50", available,
                     "; a kernel of causal=none or "
                     "causal=window, with softcap, would compute it"));
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(),
            noKernel("causal=top_left, softcap=50", available,
                     "; a kernel of causal=top_left or "
                     "causal=window, with softcap, would compute it"));
  args.window = window(16, 0);
  args.softcap = 30.5f;
  EXPECT_EQ(chosen(),
            noKernel("causal=top_left, window_size=(16, 0), softcap=30.5",
                     available,
                     "; a kernel of causal=window, with softcap, would "
                     "compute it"));
}

TEST_F(Softcap, NamedKernels) {
  open({windowEntry("w"), softcapEntry("ws")});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.kernel = "ws";
  EXPECT_THAT(chosen(), HasSubstr("error 2: no kernel in the library for "
                                  "sm_90, f16, D=64, causal=top_left, "
                                  "name=ws (library "));
  args.softcap = 50.0f;
  EXPECT_EQ(chosen(), "ws");
  args.kernel = "w";
  EXPECT_THAT(chosen(), HasSubstr("causal=top_left, softcap=50, name=w "
                                  "(library "));
  // A softcap window kernel runs no mask at all, by name too.
  args.mask = TA_MASK_NONE;
  args.kernel = "ws";
  EXPECT_EQ(chosen(), "ws");
}

TEST_F(Softcap, EmptyOutputPlansNothing) {
  open({maskEntry("none", "none")});
  args = problem(2, 3, 0, 131, 64);
  args.q.data = args.o.data = 0;
  args.softcap = 50.0f;
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
      << lastError();
  EXPECT_EQ(plan.kernel, -1);
}

TEST_F(Softcap, LaunchPassesTheSoftcap) {
  fakecuda::reset();
  open({softcapEntry("ws", "window", "i32")});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.softcap = 50.0f;
  ASSERT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_OK) << lastError();
  fakecuda::Launch launch = fakecuda::lastLaunch();
  ASSERT_EQ(launch.params.size(), 40u);
  ASSERT_EQ(launch.params[39].size(), 4u);
  float softcap = 0.0f;
  std::memcpy(&softcap, launch.params[39].data(), 4);
  EXPECT_EQ(softcap, 50.0f);
  fakecuda::reset();
}
