//===- WindowTest.cpp - Sliding windows and bottom-right alignment --------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The band of diagonals a causal mask and a window give (Window.h) and the
// mask of the kernels that compute it; then through ta_sdpa_plan: the
// window's checks, the kernel chosen (a kernel of the band's mask first,
// else a "window" kernel for any band but the unbounded one), the
// window_lo/window_hi parameters and the messages when no kernel fits.
//
//===----------------------------------------------------------------------===//

#include "Window.h"
#include "FakeCuda.h"
#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>
#include <cstddef>
#include <cstring>

using namespace tatest;
using testing::HasSubstr;
using tiled_attn::runtime::Diagonals;
using tiled_attn::runtime::KernelMask;
using tiled_attn::runtime::neededMask;
using tiled_attn::runtime::visibleDiagonals;

namespace {

constexpr bool kCausal = true, kPlain = false;
constexpr bool kBottomRight = true, kTopLeft = false;

/// The band as "[lo, hi]", for readable failures.
std::string band(int64_t seqQ, int64_t seqK, bool causal, bool bottomRight,
                 int64_t left, int64_t right) {
  Diagonals d = visibleDiagonals(seqQ, seqK, causal, bottomRight, left, right);
  return "[" + std::to_string(d.lo) + ", " + std::to_string(d.hi) + "]";
}

/// The mask of the kernels that compute the band.
KernelMask mask(int64_t seqQ, int64_t seqK, bool causal, bool bottomRight,
                int64_t left, int64_t right) {
  return neededMask(
      visibleDiagonals(seqQ, seqK, causal, bottomRight, left, right), seqQ,
      seqK);
}

/// Brute force: whether query i sees key j, from ta_window's definition.
bool sees(int64_t seqQ, int64_t seqK, bool causal, bool bottomRight,
          int64_t left, int64_t right, int64_t i, int64_t j) {
  int64_t shift = bottomRight ? seqK - seqQ : 0;
  return (left < 0 || j >= i + shift - left) &&
         (right < 0 || j <= i + shift + right) && (!causal || j <= i + shift);
}

} // namespace

// ---------------------------------------------------------------- the band

TEST(Diagonals, MasksWithoutAWindow) {
  // S_q = 77, S_k = 131: j - i lies in [-76, 130].
  EXPECT_EQ(band(77, 131, kPlain, kTopLeft, -1, -1), "[-76, 130]");
  EXPECT_EQ(band(77, 131, kCausal, kTopLeft, -1, -1), "[-76, 0]");
  EXPECT_EQ(band(77, 131, kCausal, kBottomRight, -1, -1), "[-76, 54]");
  // S_q > S_k: bottom-right's first 54 rows see no key.
  EXPECT_EQ(band(131, 77, kCausal, kBottomRight, -1, -1), "[-130, -54]");
  EXPECT_EQ(mask(77, 131, kPlain, kTopLeft, -1, -1), KernelMask::None);
  EXPECT_EQ(mask(77, 131, kPlain, kBottomRight, -1, -1), KernelMask::None);
  EXPECT_EQ(mask(77, 131, kCausal, kTopLeft, -1, -1), KernelMask::TopLeft);
  EXPECT_EQ(mask(77, 131, kCausal, kBottomRight, -1, -1),
            KernelMask::BottomRight);
  EXPECT_EQ(mask(131, 77, kCausal, kBottomRight, -1, -1),
            KernelMask::BottomRight);
}

TEST(Diagonals, DegenerateShapesNeedLess) {
  // S_q == S_k: both alignments are one band, top-left's.
  EXPECT_EQ(mask(64, 64, kCausal, kBottomRight, -1, -1), KernelMask::TopLeft);
  // One key: top-left causal hides nothing.
  EXPECT_EQ(band(5, 1, kCausal, kTopLeft, -1, -1), "[-4, 0]");
  EXPECT_EQ(mask(5, 1, kCausal, kTopLeft, -1, -1), KernelMask::None);
  // One query, bottom-right (a decode step): it sees every key.
  EXPECT_EQ(mask(1, 300, kCausal, kBottomRight, -1, -1), KernelMask::None);
  // One query, top-left: it sees key 0 only.
  EXPECT_EQ(band(1, 300, kCausal, kTopLeft, -1, -1), "[0, 0]");
  EXPECT_EQ(mask(1, 300, kCausal, kTopLeft, -1, -1), KernelMask::TopLeft);
}

TEST(Diagonals, WindowAlone) {
  EXPECT_EQ(band(77, 131, kPlain, kTopLeft, 4, 2), "[-4, 2]");
  EXPECT_EQ(band(77, 131, kPlain, kBottomRight, 4, 2), "[50, 56]");
  EXPECT_EQ(mask(77, 131, kPlain, kTopLeft, 4, 2), KernelMask::Window);
  // One side unbounded.
  EXPECT_EQ(band(77, 131, kPlain, kTopLeft, 3, -1), "[-3, 130]");
  EXPECT_EQ(band(77, 131, kPlain, kTopLeft, -1, 3), "[-76, 3]");
  EXPECT_EQ(mask(77, 131, kPlain, kTopLeft, 3, -1), KernelMask::Window);
  EXPECT_EQ(mask(77, 131, kPlain, kTopLeft, -1, 3), KernelMask::Window);
  // window_size (-1, 0) is the causal mask of its alignment.
  EXPECT_EQ(mask(77, 131, kPlain, kTopLeft, -1, 0), KernelMask::TopLeft);
  EXPECT_EQ(mask(77, 131, kPlain, kBottomRight, -1, 0),
            KernelMask::BottomRight);
  // (0, 0): each query sees the key on its diagonal, if there is one.
  EXPECT_EQ(band(100, 10, kPlain, kTopLeft, 0, 0), "[0, 0]");
}

TEST(Diagonals, CausalAndAWindowIntersect) {
  // window_size (w, w) with causal, as FlashAttention users and
  // transformers pass it: the right side is capped by the diagonal.
  EXPECT_EQ(band(77, 131, kCausal, kTopLeft, 4, 4), "[-4, 0]");
  EXPECT_EQ(band(77, 131, kCausal, kBottomRight, 4, 4), "[50, 54]");
  EXPECT_EQ(band(77, 131, kCausal, kTopLeft, 4, -1), "[-4, 0]");
  EXPECT_EQ(mask(77, 131, kCausal, kTopLeft, 4, 4), KernelMask::Window);
  // A window wider than the sequence is no window.
  EXPECT_EQ(mask(77, 131, kCausal, kTopLeft, 4096, 4096), KernelMask::TopLeft);
  EXPECT_EQ(mask(77, 131, kCausal, kBottomRight, 4096, 0),
            KernelMask::BottomRight);
}

TEST(Diagonals, BoundsAtAndPastTheEdges) {
  // Top-left: lo = -left is a bound while left < S_q - 1.
  EXPECT_EQ(band(77, 131, kCausal, kTopLeft, 75, -1), "[-75, 0]");
  EXPECT_EQ(mask(77, 131, kCausal, kTopLeft, 75, -1), KernelMask::Window);
  EXPECT_EQ(band(77, 131, kCausal, kTopLeft, 76, -1), "[-76, 0]");
  EXPECT_EQ(mask(77, 131, kCausal, kTopLeft, 76, -1), KernelMask::TopLeft);
  // Bottom-right: lo = 54 - left while left < S_k - 1.
  EXPECT_EQ(band(77, 131, kCausal, kBottomRight, 129, -1), "[-75, 54]");
  EXPECT_EQ(band(77, 131, kCausal, kBottomRight, 130, -1), "[-76, 54]");
  // The right side: hi = shift + right while it is below S_k - 1.
  EXPECT_EQ(band(77, 131, kPlain, kTopLeft, -1, 129), "[-76, 129]");
  EXPECT_EQ(mask(77, 131, kPlain, kTopLeft, -1, 130), KernelMask::None);
  EXPECT_EQ(band(77, 131, kPlain, kBottomRight, -1, 75), "[-76, 129]");
  EXPECT_EQ(mask(77, 131, kPlain, kBottomRight, -1, 76), KernelMask::None);
}

TEST(Diagonals, HugeBoundsAndSequencesDoNotOverflow) {
  for (bool bottomRight : {kTopLeft, kBottomRight}) {
    EXPECT_EQ(band(77, 131, kPlain, bottomRight, INT64_MAX, INT64_MAX),
              "[-76, 130]");
    EXPECT_EQ(band(77, 131, kCausal, bottomRight, INT64_MAX, INT64_MAX),
              band(77, 131, kCausal, bottomRight, -1, -1));
  }
  // Sequences of 2^62 and more: every value stays in [-S_q, S_k].
  const int64_t big = INT64_MAX / 2, bigger = INT64_MAX;
  Diagonals d = visibleDiagonals(bigger, big, kCausal, kBottomRight,
                                 INT64_MAX - 1, INT64_MAX - 1);
  EXPECT_EQ(d.lo, 1 - bigger);
  EXPECT_EQ(d.hi, big - bigger);
  d = visibleDiagonals(big, bigger, kPlain, kBottomRight, 5, 7);
  EXPECT_EQ(d.lo, bigger - big - 5);
  EXPECT_EQ(d.hi, bigger - big + 7);
  d = visibleDiagonals(bigger, bigger, kPlain, kTopLeft, bigger - 2, 1);
  EXPECT_EQ(d.lo, 2 - bigger);
  EXPECT_EQ(d.hi, 1);
}

TEST(Diagonals, MatchTheDefinitionQueryByQuery) {
  // Every (S_q, S_k, causal, alignment, left, right) of small sizes: the
  // band holds exactly the pairs ta_window's definition lets through.
  for (int64_t seqQ = 1; seqQ <= 6; ++seqQ)
    for (int64_t seqK = 1; seqK <= 6; ++seqK)
      for (bool causal : {kPlain, kCausal})
        for (bool bottomRight : {kTopLeft, kBottomRight})
          for (int64_t left = -1; left <= 13; ++left)
            for (int64_t right = -1; right <= 13; ++right) {
              Diagonals d = visibleDiagonals(seqQ, seqK, causal, bottomRight,
                                             left, right);
              ASSERT_GE(d.lo, 1 - seqQ);
              ASSERT_LE(d.hi, seqK - 1);
              for (int64_t i = 0; i < seqQ; ++i)
                for (int64_t j = 0; j < seqK; ++j)
                  ASSERT_EQ(
                      d.lo <= j - i && j - i <= d.hi,
                      sees(seqQ, seqK, causal, bottomRight, left, right, i, j))
                      << "S_q " << seqQ << " S_k " << seqK << " causal "
                      << causal << " bottom_right " << bottomRight
                      << " window (" << left << ", " << right << ") query " << i
                      << " key " << j;
            }
}

TEST(Diagonals, NeededMaskOfEveryBand) {
  // S_q = 10, S_k = 30: j - i in [-9, 29], bottom-right's diagonal 20.
  EXPECT_EQ(neededMask({-9, 29}, 10, 30), KernelMask::None);
  EXPECT_EQ(neededMask({-100, 100}, 10, 30), KernelMask::None);
  EXPECT_EQ(neededMask({-9, 0}, 10, 30), KernelMask::TopLeft);
  EXPECT_EQ(neededMask({-9, 20}, 10, 30), KernelMask::BottomRight);
  EXPECT_EQ(neededMask({-9, 5}, 10, 30), KernelMask::Window);
  EXPECT_EQ(neededMask({-8, 29}, 10, 30), KernelMask::Window);
  EXPECT_EQ(neededMask({-8, 0}, 10, 30), KernelMask::Window);
  // An empty band (lo > hi): a window kernel writes zeros.
  EXPECT_EQ(neededMask({5, 2}, 10, 30), KernelMask::Window);
  // S_q == S_k: hi 0 is top-left's (and bottom-right's).
  EXPECT_EQ(neededMask({-9, 0}, 10, 10), KernelMask::TopLeft);
}

TEST(Diagonals, EmptyQueriesGiveAnEmptyBand) {
  // S_q = 0 launches nothing; the band is computed anyway, without harm.
  EXPECT_EQ(band(0, 1, kCausal, kTopLeft, 3, 3), "[1, 0]");
  EXPECT_EQ(band(0, 1, kCausal, kBottomRight, 3, 3), "[1, 0]");
}

// ---------------------------------------------------------------- ta_sdpa_plan

namespace {

/// A kernel of causal "window": the standard parameters of `indexType`,
/// then window_lo and window_hi of `windowType`.
Json windowEntry(const std::string &name, const std::string &indexType = "i64",
                 const std::string &windowType = "i64") {
  Json e = kernelEntry(name);
  e["causal"] = "window";
  e["index_bits"] = indexType == "i32" ? 32 : 64;
  e["params"] = standardParams(indexType);
  for (const char *bound : {"window_lo", "window_hi"})
    e["params"].push_back(
        {{"name", bound}, {"kind", "scalar"}, {"type", windowType}});
  return e;
}

Json maskEntry(const std::string &name, const std::string &causal,
               const std::string &arch = "sm_80") {
  Json e = kernelEntry(name);
  e["causal"] = causal;
  e["arch"] = arch;
  return e;
}

class Window : public ChoiceTest {
protected:
  /// window_lo and window_hi of the plan (the last two parameters), as
  /// "[lo, hi]".
  template <typename T> std::string packedBand() {
    int n = plan.num_params;
    EXPECT_EQ(plan.param_sizes[n - 2], sizeof(T));
    EXPECT_EQ(plan.param_sizes[n - 1], sizeof(T));
    return "[" + std::to_string(paramAs<T>(plan, n - 2)) + ", " +
           std::to_string(paramAs<T>(plan, n - 1)) + "]";
  }
};

} // namespace

TEST_F(Window, ArgsLayout) {
  // The window follows the kernel name; zero-initialized, it is off.
  EXPECT_EQ(offsetof(ta_sdpa_args, window),
            offsetof(ta_sdpa_args, kernel) + sizeof(const char *));
  EXPECT_EQ(sizeof(ta_window), 24u);
  EXPECT_EQ(args.window.enabled, 0);
}

TEST_F(Window, BoundsMustBeMinusOneOrMore) {
  open({windowEntry("w")});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.window = window(-2, 0);
  EXPECT_EQ(chosen(), "error 1: window.left must be -1 (no bound) or a number "
                      "of keys >= 0, got -2");
  args.window = window(4, INT64_MIN);
  EXPECT_EQ(chosen(), "error 1: window.right must be -1 (no bound) or a "
                      "number of keys >= 0, got -9223372036854775808");
  // Disabled, the other fields are not read.
  args.window = window(-7, -7, true);
  args.window.enabled = 0;
  args.mask = TA_MASK_NONE;
  EXPECT_EQ(chosen(), "error 2: no kernel in the library for sm_90, f16, "
                      "D=64, causal=none (library " +
                          dir.path() +
                          ": available: w (sm_80, f16, D=64, "
                          "causal=window))");
}

TEST_F(Window, AlignmentOfACausalMaskIsTheWindows) {
  open({windowEntry("w")});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.window = window(4, 0, /*bottomRight=*/true);
  EXPECT_EQ(chosen(), "error 1: window.bottom_right is 1 but mask is "
                      "TA_MASK_CAUSAL_TOP_LEFT: with a causal mask the window "
                      "is aligned as the mask is (set window.bottom_right to "
                      "0)");
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  args.window = window(4, 0, /*bottomRight=*/false);
  EXPECT_EQ(chosen(), "error 1: window.bottom_right is 0 but mask is "
                      "TA_MASK_CAUSAL_BOTTOM_RIGHT: with a causal mask the "
                      "window is aligned as the mask is (set "
                      "window.bottom_right to 1)");
  args.window.bottom_right = 7; // any nonzero value is bottom-right
  ASSERT_EQ(chosen(), "w");
  EXPECT_EQ(packedBand<int64_t>(), "[50, 54]");
}

TEST_F(Window, PackedI64) {
  open({windowEntry("w")});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.window = window(4, 4);
  ASSERT_EQ(chosen(), "w");
  ASSERT_EQ(plan.num_params, 39);
  // After the scale (offset 288, 4 bytes), at 8-byte alignment.
  EXPECT_EQ(plan.param_offsets[36], 288u);
  EXPECT_EQ(plan.param_offsets[37], 296u);
  EXPECT_EQ(plan.param_offsets[38], 304u);
  EXPECT_EQ(packedBand<int64_t>(), "[-4, 0]");
  // Not causal, bottom-right: S_k - S_q = 54.
  args.mask = TA_MASK_NONE;
  args.window = window(4, 2, /*bottomRight=*/true);
  ASSERT_EQ(chosen(), "w");
  EXPECT_EQ(packedBand<int64_t>(), "[50, 56]");
  // The other parameters are packed as always.
  EXPECT_EQ(paramAs<float>(plan, 36), 0.125f);
  EXPECT_EQ(paramAs<int64_t>(plan, 12), 131); // k's sizes[2]
}

TEST_F(Window, PackedI32) {
  open({windowEntry("w", "i32", "i32")});
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  args.window = window(10, -1, /*bottomRight=*/true);
  ASSERT_EQ(chosen(), "w");
  EXPECT_EQ(plan.param_offsets[36], 160u);
  EXPECT_EQ(plan.param_offsets[37], 164u);
  EXPECT_EQ(plan.param_offsets[38], 168u);
  EXPECT_EQ(packedBand<int32_t>(), "[44, 54]");
  // A plain causal mask on a window kernel: its band, lo unbounded.
  args.window = ta_window{};
  ASSERT_EQ(chosen(), "w");
  EXPECT_EQ(packedBand<int32_t>(), "[-76, 54]");
}

TEST_F(Window, I32Overflow) {
  // i32 window parameters on a 64-bit kernel: 3 * 10^9 keys.
  open({windowEntry("w", "i64", "i32")});
  const int64_t keys = 3000000000;
  args = problem(1, 1, 2, keys, 64);
  args.o.data = kFarAway; // Clear of k's 384 GB.
  args.window = window(0, -1);
  EXPECT_EQ(chosen(), "error 1: the window's window_hi (the highest diagonal "
                      "j - i a query sees) is 2999999999, which does not fit "
                      "the i32 parameter params[38] of kernel w");
  args = problem(1, 1, keys, 2, 64);
  args.o.data = kFarAway;
  args.window = window(-1, 0);
  EXPECT_EQ(chosen(), "error 1: the window's window_lo (the lowest diagonal "
                      "j - i a query sees) is -2999999999, which does not "
                      "fit the i32 parameter params[37] of kernel w");
  // Values at the limits fit.
  args = problem(1, 1, int64_t(1) << 31, 1, 64);
  args.o.data = kFarAway;
  args.window = window(5, 0);
  ASSERT_EQ(chosen(), "w");
  EXPECT_EQ(packedBand<int32_t>(), "[-5, 0]");
}

TEST_F(Window, ExactMaskFirstThenWindow) {
  open({windowEntry("w"), maskEntry("none", "none"),
        maskEntry("tl", "top_left"), maskEntry("br90", "bottom_right", "sm_90"),
        windowEntry("w90")});
  // Masks without a window: their own kernels.
  EXPECT_EQ(chosen(), "none");
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(), "tl");
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(chosen(9, 0), "br90");
  // Where no bottom_right kernel runs: a window kernel, of the band.
  EXPECT_EQ(chosen(8, 0), "w");
  EXPECT_EQ(packedBand<int64_t>(), "[-76, 54]");
  // With S_q == S_k, bottom-right is top-left.
  args = problem(2, 3, 100, 100, 64);
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(chosen(8, 0), "tl");
  // A window that bounds something: the window kernel, ties to the first.
  args = problem(2, 3, 77, 131, 64);
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.window = window(8, 0);
  EXPECT_EQ(chosen(), "w");
  // One wider than the sequences: the mask's own kernel.
  args.window = window(4096, 4096);
  EXPECT_EQ(chosen(), "tl");
  args.window = window(-1, -1);
  EXPECT_EQ(chosen(), "tl");
  args.mask = TA_MASK_NONE;
  EXPECT_EQ(chosen(), "none");
  // window_size (-1, 0) without a mask is causal.
  args.window = window(-1, 0, /*bottomRight=*/true);
  EXPECT_EQ(chosen(9, 0), "br90");
  args.window = window(-1, 0);
  EXPECT_EQ(chosen(9, 0), "tl");
}

TEST_F(Window, ExactMaskBeatsAHigherArch) {
  Json w90 = windowEntry("w90");
  w90["arch"] = "sm_90a";
  open({w90, maskEntry("tl", "top_left")});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(9, 0), "tl");
  args.window = window(16, 0);
  EXPECT_EQ(chosen(9, 0), "w90");
  EXPECT_THAT(
      chosen(8, 0),
      HasSubstr("error 2: no kernel in the library for sm_80, f16, "
                "D=64, causal=top_left, window_size=(16, 0) (library "));
}

TEST_F(Window, TopLeftOnAWindowKernelWhereNoTopLeftKernelFits) {
  Json tl = maskEntry("tl", "top_left");
  tl["grouped_kv"] = false;
  Json w = windowEntry("w");
  w["grouped_kv"] = true;
  open({tl, w});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(), "tl");
  // Grouped KV heads: only the window kernel takes them.
  args = problem(2, 6, 77, 131, 64);
  args.k.sizes[1] = args.v.sizes[1] = 2;
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(), "w");
  EXPECT_EQ(packedBand<int64_t>(), "[-76, 0]");
}

TEST_F(Window, NoMaskNeverRunsOnAWindowKernel) {
  open({windowEntry("w")});
  EXPECT_EQ(chosen(), "error 2: no kernel in the library for sm_90, f16, "
                      "D=64, causal=none (library " +
                          dir.path() +
                          ": available: w (sm_80, f16, D=64, "
                          "causal=window))");
  // Nor does a window that bounds nothing; the message says what would do.
  args.window = window(-1, 500, /*bottomRight=*/true);
  EXPECT_EQ(chosen(), "error 2: no kernel in the library for sm_90, f16, "
                      "D=64, causal=none, window_size=(-1, 500) bottom_right "
                      "(library " +
                          dir.path() +
                          ": available: w (sm_80, f16, D=64, "
                          "causal=window)); a kernel of causal=none would "
                          "compute it");
  // Named, neither.
  args.kernel = "w";
  EXPECT_THAT(chosen(), HasSubstr("causal=none, window_size=(-1, 500) "
                                  "bottom_right, name=w (library "));
}

TEST_F(Window, NoKernelMessagesNameTheMasksThatWouldDo) {
  open({maskEntry("none", "none")});
  const std::string available =
      " (library " + dir.path() +
      ": available: none (sm_80, f16, D=64, causal=none))";
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(chosen(), "error 2: no kernel in the library for sm_90, f16, "
                      "D=64, causal=bottom_right" +
                          available +
                          "; a kernel of causal=bottom_right or "
                          "causal=window would compute it");
  args = problem(2, 3, 100, 100, 64);
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(chosen(), "error 2: no kernel in the library for sm_90, f16, "
                      "D=64, causal=bottom_right" +
                          available +
                          "; a kernel of causal=bottom_right, causal=top_left "
                          "or causal=window would compute it");
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.window = window(4096, 0);
  EXPECT_EQ(chosen(), "error 2: no kernel in the library for sm_90, f16, "
                      "D=64, causal=top_left, window_size=(4096, 0)" +
                          available +
                          "; a kernel of causal=top_left or causal=window "
                          "would compute it");
  args.window = window(16, 0);
  EXPECT_EQ(chosen(), "error 2: no kernel in the library for sm_90, f16, "
                      "D=64, causal=top_left, window_size=(16, 0)" +
                          available +
                          "; a kernel of causal=window would compute it");
}

TEST_F(Window, NamedKernels) {
  open({maskEntry("none", "none"), maskEntry("tl", "top_left"),
        windowEntry("w")});
  // A window kernel computes any mask, by name too.
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.kernel = "w";
  ASSERT_EQ(chosen(), "w");
  EXPECT_EQ(packedBand<int64_t>(), "[-76, 0]");
  // A top_left kernel computes no window.
  args.kernel = "tl";
  args.window = window(8, 0);
  EXPECT_THAT(chosen(), HasSubstr("error 2: no kernel in the library for "
                                  "sm_90, f16, D=64, causal=top_left, "
                                  "window_size=(8, 0), name=tl (library "));
  // Nor a window kernel no mask.
  args = problem(2, 3, 77, 131, 64);
  args.kernel = "w";
  EXPECT_THAT(chosen(), HasSubstr("causal=none, name=w (library "));
}

TEST_F(Window, EmptyOutputPlansNothing) {
  open({windowEntry("w")});
  args = problem(2, 3, 0, 131, 64);
  args.q.data = args.o.data = 0;
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.window = window(3, 3);
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
      << lastError();
  EXPECT_EQ(plan.kernel, -1);
}

TEST_F(Window, LaunchPassesTheBand) {
  fakecuda::reset();
  open({windowEntry("w", "i32", "i32")});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.window = window(3, 3);
  ASSERT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_OK) << lastError();
  fakecuda::Launch launch = fakecuda::lastLaunch();
  ASSERT_EQ(launch.params.size(), 39u);
  int32_t lo = 0, hi = 0;
  ASSERT_EQ(launch.params[37].size(), 4u);
  std::memcpy(&lo, launch.params[37].data(), 4);
  std::memcpy(&hi, launch.params[38].data(), 4);
  EXPECT_EQ(lo, -3);
  EXPECT_EQ(hi, 0);
  fakecuda::reset();
}
