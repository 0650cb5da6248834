//===- VarlenTest.cpp - Variable-length batches ---------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// ta_sdpa_args.varlen through ta_sdpa_plan and ta_sdpa: the band of each
// sequence from the longest lengths (varlenDiagonals, against the
// definition query by query), the checks, the kernel chosen (a
// variable-length batch only on "varlen" kernels, any other problem never
// on them), the packed parameters (the packed views, window_align, the
// offsets' views), the grid (query blocks, heads, sequences), the manifest's
// checks of the varlen parameters and the messages when no kernel fits.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestLibrary.h"
#include "Window.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>

using namespace tatest;
using namespace tiled_attn::runtime;
using testing::HasSubstr;

namespace {

constexpr uint64_t kCuQ = 0x600000000, kCuK = 0x600001000;

/// The parameters of the views cu_seqlens_q and cu_seqlens_k as the
/// compiler emits them: base and size 0 of each.
void addCuSeqlensParams(Json &params, const std::string &indexType = "i64") {
  for (const char *name : {"cu_seqlens_q", "cu_seqlens_k"}) {
    params.push_back({{"name", name}, {"kind", "base"}, {"type", "ptr"}});
    params.push_back(
        {{"name", name}, {"kind", "size"}, {"dim", 0}, {"type", indexType}});
  }
}

/// A varlen kernel of `causal` in the ABI's order: the standard parameters
/// of `indexType`, window_lo, window_hi and window_align for a "window"
/// kernel, then cu_seqlens_q and cu_seqlens_k.
Json varlenEntry(const std::string &name, const std::string &causal = "window",
                 const std::string &indexType = "i64") {
  Json e = kernelEntry(name);
  e["causal"] = causal;
  e["varlen"] = true;
  e["index_bits"] = indexType == "i32" ? 32 : 64;
  e["params"] = standardParams(indexType);
  if (causal == "window")
    for (const char *scalar : {"window_lo", "window_hi", "window_align"})
      e["params"].push_back(
          {{"name", scalar}, {"kind", "scalar"}, {"type", indexType}});
  addCuSeqlensParams(e["params"], indexType);
  return e;
}

/// A kernel of `causal` without varlen (window_lo and window_hi for a
/// "window" one).
Json maskEntry(const std::string &name, const std::string &causal) {
  Json e = kernelEntry(name);
  e["causal"] = causal;
  if (causal == "window")
    for (const char *bound : {"window_lo", "window_hi"})
      e["params"].push_back(
          {{"name", bound}, {"kind", "scalar"}, {"type", "i64"}});
  return e;
}

/// The [1, H, total, D] view of a packed [total, H, D] tensor at `data`.
void packed(ta_tensor &t, uint64_t data, int64_t total, int64_t heads,
            int64_t d) {
  t = ta_tensor{
      data, {1, heads, total, d}, {total * heads * d, d, heads * d, 1}};
}

/// The standard varlen problem: 4 sequences of at most 300 queries and 320
/// keys, packed into 500 query rows and 700 keys of 3 heads, D = 64.
class Varlen : public ChoiceTest {
protected:
  void SetUp() override {
    packed(args.q, 0x100000000, 500, 3, 64);
    packed(args.k, 0x200000000, 700, 3, 64);
    packed(args.v, 0x300000000, 700, 3, 64);
    packed(args.o, 0x400000000, 500, 3, 64);
    args.varlen = ta_varlen{1, 4, kCuQ, kCuK, 300, 320};
  }

  /// The last three parameters of a varlen window kernel before the
  /// offsets' views, "[lo, hi, align]".
  template <typename T> std::string packedBand() {
    EXPECT_EQ(plan.num_params, 44);
    return "[" + std::to_string(paramAs<T>(plan, 37)) + ", " +
           std::to_string(paramAs<T>(plan, 38)) + ", " +
           std::to_string(paramAs<T>(plan, 39)) + "]";
  }
};

/// The library's message for a varlen problem of the standard shape.
std::string noVarlenKernel(const std::string &mask) {
  return "error 2: no kernel in the library for sm_90, f16, D=64, causal=" +
         mask + ", varlen (num_seqs=4, max_seqlen_q=300, max_seqlen_k=320)";
}

} // namespace

TEST(VarlenArgs, Layout) {
  // varlen follows the log-sum-exps' address (API version 6; the
  // functions' fields of version 8 follow it); zero-initialized, off.
  EXPECT_EQ(offsetof(ta_sdpa_args, varlen), offsetof(ta_sdpa_args, lse) + 8);
  EXPECT_EQ(offsetof(ta_sdpa_args, score_function),
            offsetof(ta_sdpa_args, varlen) + 48);
  EXPECT_EQ(offsetof(ta_varlen, num_seqs), 8u);
  EXPECT_EQ(offsetof(ta_varlen, cu_seqlens_q), 16u);
  EXPECT_EQ(offsetof(ta_varlen, cu_seqlens_k), 24u);
  EXPECT_EQ(offsetof(ta_varlen, max_seqlen_q), 32u);
  EXPECT_EQ(offsetof(ta_varlen, max_seqlen_k), 40u);
  EXPECT_EQ(offsetof(ta_kernel_info, varlen),
            offsetof(ta_kernel_info, lse) + sizeof(int32_t));
  ta_sdpa_args zero = {};
  EXPECT_EQ(zero.varlen.enabled, 0);
}

TEST(VarlenDiagonals, MatchTheDefinitionPerSequence) {
  // For every pair of longest lengths, every sequence within them (empty
  // ones too), each mask, alignment and window: the band the kernel
  // shifts by window_align * (len_k - len_q) sees exactly the keys
  // FlashAttention's definition does, and the mask found computes it.
  const int64_t bounds[] = {-1, 0, 1, 2, 3, 5, 8};
  int checked = 0;
  for (int64_t maxQ = 1; maxQ <= 6; ++maxQ)
    for (int64_t maxK = 1; maxK <= 6; ++maxK)
      for (bool causal : {false, true})
        for (bool bottomRight : {false, true})
          for (int64_t left : bounds)
            for (int64_t right : bounds) {
              Diagonals band =
                  varlenDiagonals(maxQ, maxK, causal, bottomRight, left, right);
              KernelMask mask = neededVarlenMask(band, maxQ, maxK, bottomRight);
              for (int64_t lenQ = 0; lenQ <= maxQ; ++lenQ)
                for (int64_t lenK = 0; lenK <= maxK; ++lenK) {
                  int64_t shift = bottomRight ? lenK - lenQ : 0;
                  for (int64_t i = 0; i < lenQ; ++i)
                    for (int64_t j = 0; j < lenK; ++j) {
                      bool sees = (left < 0 || j >= i + shift - left) &&
                                  (right < 0 || j <= i + shift + right) &&
                                  (!causal || j <= i + shift);
                      int64_t d = j - i - shift;
                      ASSERT_EQ(band.lo <= d && d <= band.hi, sees)
                          << "maxQ " << maxQ << " maxK " << maxK << " causal "
                          << causal << " bottomRight " << bottomRight
                          << " window (" << left << ", " << right << ") lenQ "
                          << lenQ << " lenK " << lenK << " i " << i << " j "
                          << j;
                      bool ofMask = mask == KernelMask::None      ? true
                                    : mask == KernelMask::TopLeft ? j <= i
                                    : mask == KernelMask::BottomRight
                                        ? j <= i + lenK - lenQ
                                        : sees;
                      ASSERT_EQ(ofMask, sees)
                          << "mask " << kernelMaskName(mask) << " maxQ " << maxQ
                          << " maxK " << maxK << " window (" << left << ", "
                          << right << ")";
                      ++checked;
                    }
                }
            }
  EXPECT_GT(checked, 100000);
}

TEST(VarlenDiagonals, TheMaskOfTheAlignment) {
  // Causal alone is the alignment's causal mask; a window that bounds
  // nothing in any sequence is none; with a bound inside, a window.
  auto mask = [](bool causal, bool bottomRight, int64_t left, int64_t right) {
    Diagonals band =
        varlenDiagonals(300, 320, causal, bottomRight, left, right);
    return kernelMaskName(neededVarlenMask(band, 300, 320, bottomRight));
  };
  EXPECT_STREQ(mask(true, false, -1, -1), "top_left");
  EXPECT_STREQ(mask(true, true, -1, -1), "bottom_right");
  EXPECT_STREQ(mask(false, false, -1, -1), "none");
  EXPECT_STREQ(mask(false, true, 319, 299), "none");
  EXPECT_STREQ(mask(false, true, 318, -1), "window");
  EXPECT_STREQ(mask(false, false, 299, 319), "none");
  EXPECT_STREQ(mask(false, false, -1, 318), "window");
  EXPECT_STREQ(mask(true, true, 400, 400), "bottom_right");
  EXPECT_STREQ(mask(true, false, 299, 0), "top_left");
  EXPECT_STREQ(mask(true, false, 298, 0), "window");
  // With one key at most, a causal mask bounds nothing.
  Diagonals band = varlenDiagonals(300, 1, true, false, -1, -1);
  EXPECT_EQ(neededVarlenMask(band, 300, 1, false), KernelMask::None);
  band = varlenDiagonals(1, 320, true, true, -1, -1);
  EXPECT_EQ(neededVarlenMask(band, 1, 320, true), KernelMask::None);
}

TEST_F(Varlen, KernelInfoSaysSo) {
  open({varlenEntry("vw"), maskEntry("none", "none")});
  ta_kernel_info info;
  ASSERT_EQ(ta_library_kernel(library.get(), 0, &info), TA_OK);
  EXPECT_EQ(info.varlen, 1);
  EXPECT_EQ(info.num_params, 44);
  ASSERT_EQ(ta_library_kernel(library.get(), 1, &info), TA_OK);
  EXPECT_EQ(info.varlen, 0);
}

TEST_F(Varlen, OnlyVarlenKernelsRunIt) {
  open({maskEntry("none", "none"), maskEntry("tl", "top_left"),
        maskEntry("w", "window"), varlenEntry("vnone", "none"),
        varlenEntry("vtl", "top_left"), varlenEntry("vw")});
  EXPECT_EQ(chosen(), "vnone");
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(), "vtl");
  // No bottom_right varlen kernel: the window one, aligned bottom-right.
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(chosen(), "vw");
  EXPECT_EQ(packedBand<int64_t>(), "[-319, 0, 1]");
  args.window = window(8, 8, true);
  EXPECT_EQ(chosen(), "vw");
  EXPECT_EQ(packedBand<int64_t>(), "[-8, 0, 1]");
  // Without varlen, the kernels without it, as before.
  args = problem(2, 3, 77, 131, 64);
  EXPECT_EQ(chosen(), "none");
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(), "tl");
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(chosen(), "w");
}

TEST_F(Varlen, TheBandOnAWindowKernel) {
  open({varlenEntry("vw")});
  struct Case {
    ta_mask mask;
    ta_window window;
    const char *band;
  } cases[] = {
      {TA_MASK_CAUSAL_TOP_LEFT, {}, "[-299, 0, 0]"},
      {TA_MASK_CAUSAL_BOTTOM_RIGHT, {}, "[-319, 0, 1]"},
      {TA_MASK_CAUSAL_TOP_LEFT, window(8, 8), "[-8, 0, 0]"},
      {TA_MASK_NONE, window(4, 2, true), "[-4, 2, 1]"},
      {TA_MASK_NONE, window(4, 2, false), "[-4, 2, 0]"},
      {TA_MASK_NONE, window(-1, 16, true), "[-319, 16, 1]"},
      {TA_MASK_CAUSAL_BOTTOM_RIGHT, window(INT64_MAX, 0, true), "[-319, 0, 1]"},
  };
  for (const Case &c : cases) {
    args.mask = c.mask;
    args.window = c.window;
    ASSERT_EQ(chosen(), "vw") << c.band;
    EXPECT_EQ(packedBand<int64_t>(), c.band);
  }
  // No mask and no window: none, which a window kernel does not run
  // (without a softcap or the log-sum-exps).
  args.mask = TA_MASK_NONE;
  args.window = window(-1, 500);
  std::string status = chosen();
  EXPECT_THAT(status, HasSubstr("causal=none, window_size=(-1, 500) "
                                "top_left, varlen (num_seqs=4, "));
  EXPECT_THAT(status, HasSubstr("; a kernel of causal=none, with varlen, "
                                "would compute it"));
}

TEST_F(Varlen, PackedViewsOffsetsAndGrid) {
  open({varlenEntry("vw", "window", "i32")});
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  ASSERT_EQ(chosen(), "vw");
  // (ceil(300 / 64), H, num_seqs).
  EXPECT_EQ(plan.grid[0], 5u);
  EXPECT_EQ(plan.grid[1], 3u);
  EXPECT_EQ(plan.grid[2], 4u);
  ASSERT_EQ(plan.num_params, 44);
  // q: [1, 3, 500, 64], strides of the packed [500, 3, 64] (the batch's
  // is unused: its dimension has size 1).
  const int32_t q[8] = {1, 3, 500, 64, 96000, 64, 192, 1};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(paramAs<int32_t>(plan, 1 + i), q[i]) << "q param " << 1 + i;
  EXPECT_EQ(paramAs<int32_t>(plan, 9 + 3), 700); // k's total
  EXPECT_EQ(packedBand<int32_t>(), "[-299, 0, 0]");
  EXPECT_EQ(paramAs<uint64_t>(plan, 40), kCuQ);
  EXPECT_EQ(paramAs<int32_t>(plan, 41), 5);
  EXPECT_EQ(paramAs<uint64_t>(plan, 42), kCuK);
  EXPECT_EQ(paramAs<int32_t>(plan, 43), 5);
  // i32 parameters after the scale (offset 160): window_lo at 164, the
  // offsets' base pointers 8-byte aligned.
  EXPECT_EQ(plan.param_offsets[37], 164u);
  EXPECT_EQ(plan.param_offsets[39], 172u);
  EXPECT_EQ(plan.param_offsets[40], 176u);
  EXPECT_EQ(plan.param_offsets[42], 192u);
  EXPECT_EQ(plan.param_sizes[43], 4u);
  // A query sequence of one block: one block row per sequence.
  args.varlen.max_seqlen_q = 64;
  ASSERT_EQ(chosen(), "vw");
  EXPECT_EQ(plan.grid[0], 1u);
}

TEST_F(Varlen, WithSoftcapGroupedHeadsAndLse) {
  // A softcap lse varlen window kernel with grouped heads, in the ABI's
  // order: ... window_lo, window_hi, window_align, softcap, lse, offsets.
  Json e = varlenEntry("vwsl");
  e["softcap"] = true;
  e["lse"] = true;
  e["grouped_kv"] = true;
  Json params = standardParams();
  for (const char *scalar : {"window_lo", "window_hi", "window_align"})
    params.push_back({{"name", scalar}, {"kind", "scalar"}, {"type", "i64"}});
  params.push_back({{"name", "softcap"}, {"kind", "scalar"}, {"type", "f32"}});
  params.push_back({{"name", "lse"}, {"kind", "base"}, {"type", "ptr"}});
  for (int dim = 0; dim < 3; ++dim)
    params.push_back(
        {{"name", "lse"}, {"kind", "size"}, {"dim", dim}, {"type", "i64"}});
  for (int dim = 0; dim < 2; ++dim)
    params.push_back(
        {{"name", "lse"}, {"kind", "stride"}, {"dim", dim}, {"type", "i64"}});
  addCuSeqlensParams(params);
  e["params"] = params;
  open({e});
  packed(args.k, 0x200000000, 700, 1, 64);
  packed(args.v, 0x300000000, 700, 1, 64);
  args.softcap = 30.0f;
  args.lse = 0x500000000;
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  ASSERT_EQ(chosen(), "vwsl");
  ASSERT_EQ(plan.num_params, 51);
  EXPECT_EQ(paramAs<int64_t>(plan, 10), 1); // k's heads
  EXPECT_EQ(paramAs<int64_t>(plan, 37), -319);
  EXPECT_EQ(paramAs<int64_t>(plan, 38), 0);
  EXPECT_EQ(paramAs<int64_t>(plan, 39), 1);
  EXPECT_EQ(paramAs<float>(plan, 40), 30.0f);
  // lse: [1, H, total_q] contiguous, FlashAttention's [H, total_q].
  const int64_t lse[6] = {0x500000000, 1, 3, 500, 1500, 500};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(paramAs<int64_t>(plan, 41 + i), lse[i]) << "lse param " << i;
  EXPECT_EQ(paramAs<uint64_t>(plan, 47), kCuQ);
  EXPECT_EQ(paramAs<int64_t>(plan, 48), 5);
  EXPECT_EQ(paramAs<uint64_t>(plan, 49), kCuK);
  EXPECT_EQ(paramAs<int64_t>(plan, 50), 5);
}

TEST_F(Varlen, Checks) {
  open({varlenEntry("vw"), varlenEntry("vnone", "none")});
  struct Case {
    void (*change)(ta_sdpa_args &);
    const char *message;
  } cases[] = {
      {[](ta_sdpa_args &a) {
         for (ta_tensor *t : {&a.q, &a.k, &a.v, &a.o})
           t->sizes[0] = 2;
       },
       "with varlen, q must be a [1, H, total, D] view of the packed "
       "[total, H, D] sequences, got batch size 2 (q [2, 3, 500, 64])"},
      {[](ta_sdpa_args &a) { a.varlen.num_seqs = 0; },
       "varlen.num_seqs must be >= 1, got 0"},
      {[](ta_sdpa_args &a) { a.varlen.cu_seqlens_q = 0; },
       "varlen.cu_seqlens_q is null"},
      {[](ta_sdpa_args &a) { a.varlen.cu_seqlens_k = 0x600001002; },
       "varlen.cu_seqlens_k (int32 offsets) must be 4-byte aligned, got "
       "0x600001002"},
      {[](ta_sdpa_args &a) { a.varlen.max_seqlen_q = 0; },
       "varlen.max_seqlen_q must be >= 1, got 0"},
      {[](ta_sdpa_args &a) { a.varlen.max_seqlen_k = -3; },
       "varlen.max_seqlen_k must be >= 1, got -3"},
      {[](ta_sdpa_args &a) { a.varlen.max_seqlen_q = 501; },
       "varlen.max_seqlen_q is 501 but q holds 500 query rows in all (q "
       "[1, 3, 500, 64]); no sequence is longer than the total"},
      {[](ta_sdpa_args &a) { a.varlen.max_seqlen_k = 701; },
       "varlen.max_seqlen_k is 701 but k holds 700 keys in all (k "
       "[1, 3, 700, 64]); no sequence is longer than the total"},
      {[](ta_sdpa_args &a) { a.v.sizes[2] = 699; },
       "v has total length 699 but k has 700 (k [1, 3, 700, 64], v "
       "[1, 3, 699, 64])"},
      {[](ta_sdpa_args &a) { a.k.sizes[2] = a.v.sizes[2] = 0; },
       "k has total length 0; tiled-attn needs at least one key"},
      {[](ta_sdpa_args &a) { a.varlen.num_seqs = 65536; },
       "varlen.num_seqs is 65536; tiled-attn launches one block row per "
       "head and sequence, at most 65535"},
      {[](ta_sdpa_args &a) { a.varlen.num_seqs = INT64_MAX; },
       "varlen.num_seqs is 9223372036854775807; tiled-attn launches one "
       "block row per head and sequence, at most 65535"},
  };
  for (const Case &c : cases) {
    SetUp();
    c.change(args);
    EXPECT_EQ(chosen(), std::string("error 1: ") + c.message);
  }
  // Disabled, the other fields are not read.
  args = problem(2, 3, 77, 131, 64);
  args.varlen = ta_varlen{0, -5, 0, 3, 0, 0};
  EXPECT_THAT(chosen(), HasSubstr("error 2: no kernel in the library for "
                                  "sm_90, f16, D=64, causal=none (library "));
}

TEST_F(Varlen, TooManySequencesWhateverTheLibraryHolds) {
  // Only 32-bit kernels: a count past 2^31 is still the grid's limit (not
  // a call for 64-bit indices, nor "no kernel").
  open({varlenEntry("v32", "none", "i32")});
  args.varlen.num_seqs = int64_t(1) << 31;
  EXPECT_EQ(chosen(), "error 1: varlen.num_seqs is 2147483648; tiled-attn "
                      "launches one block row per head and sequence, at "
                      "most 65535");
  // No kernel of the mask either: the same.
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.varlen.num_seqs = 70000;
  EXPECT_EQ(chosen(), "error 1: varlen.num_seqs is 70000; tiled-attn "
                      "launches one block row per head and sequence, at "
                      "most 65535");
}

TEST_F(Varlen, EmptyOutputPlansNothing) {
  open({varlenEntry("vnone", "none")});
  // No query rows in all: max_seqlen_q is not bounded by the total.
  packed(args.q, 0x100000000, 0, 3, 64);
  packed(args.o, 0x400000000, 0, 3, 64);
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
      << lastError();
  EXPECT_EQ(plan.kernel, -1);
  EXPECT_EQ(plan.grid[0], 0u);
  SetUp();
  for (ta_tensor *t : {&args.q, &args.k, &args.v, &args.o})
    t->sizes[1] = 0;
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
      << lastError();
  EXPECT_EQ(plan.kernel, -1);
}

TEST_F(Varlen, NoKernelMessagesNameIt) {
  open({maskEntry("none", "none"), maskEntry("w", "window")});
  std::string status = chosen();
  EXPECT_THAT(status, HasSubstr(noVarlenKernel("none") + " (library "));
  EXPECT_THAT(status, HasSubstr("; a kernel of causal=none, with varlen, "
                                "would compute it"));
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_THAT(chosen(), HasSubstr("; a kernel of causal=bottom_right or "
                                  "causal=window, with varlen, would compute "
                                  "it"));
  args.kernel = "w";
  EXPECT_THAT(chosen(),
              HasSubstr(noVarlenKernel("bottom_right") + ", name=w (library "));
  // A problem without varlen on a library of varlen kernels only.
  open({varlenEntry("vnone", "none")});
  args = problem(2, 3, 77, 131, 64);
  EXPECT_EQ(chosen(), "error 2: no kernel in the library for sm_90, f16, "
                      "D=64, causal=none (library " +
                          dir.path() +
                          ": available: vnone (sm_80, f16, D=64, "
                          "causal=none, varlen))");
  args.kernel = "vnone";
  EXPECT_THAT(chosen(), HasSubstr("causal=none, name=vnone (library "));
}

TEST_F(Varlen, ManifestChecksTheParameters) {
  auto openError = [&](const Json &entry) {
    writeLibrary(dir, manifestOf({entry}));
    EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
    return lastError();
  };
  // Offsets on a kernel without "varlen".
  Json stray = maskEntry("stray", "none");
  addCuSeqlensParams(stray["params"]);
  EXPECT_THAT(openError(stray),
              HasSubstr("field 'params[37]' belongs to the view "
                        "'cu_seqlens_q', which only a kernel of 'varlen' "
                        "true takes (this one's 'varlen' is absent)"));
  // "varlen": true without them.
  Json missing = maskEntry("missing", "none");
  missing["varlen"] = true;
  EXPECT_THAT(openError(missing),
              HasSubstr("a kernel of 'varlen' true takes the view "
                        "'cu_seqlens_q' (the query sequences' offsets), whose "
                        "base field 'params' lacks"));
  Json half = varlenEntry("half", "none");
  half["params"].erase(half["params"].size() - 2);
  EXPECT_THAT(openError(half),
              HasSubstr("takes the view 'cu_seqlens_k' (the key sequences' "
                        "offsets), whose base field 'params' lacks"));
  // A second dimension.
  Json deep = varlenEntry("deep", "none");
  deep["params"].push_back({{"name", "cu_seqlens_k"},
                            {"kind", "stride"},
                            {"dim", 1},
                            {"type", "i64"}});
  EXPECT_THAT(openError(deep),
              HasSubstr("field 'params[41]' must be the base, a size or a "
                        "stride of the rank-1 view 'cu_seqlens_k' (dim 0, no "
                        "tensor map)"));
  // window_align: on a varlen window kernel, and only there.
  Json noAlign = varlenEntry("noalign");
  noAlign["params"].erase(39);
  EXPECT_THAT(openError(noAlign),
              HasSubstr("a kernel of 'causal' 'window' and 'varlen' true "
                        "takes the scalar 'window_align' (the alignment of "
                        "its band per sequence), which field 'params' "
                        "lacks"));
  Json plainAlign = maskEntry("plainalign", "window");
  plainAlign["params"].push_back(
      {{"name", "window_align"}, {"kind", "scalar"}, {"type", "i64"}});
  EXPECT_THAT(openError(plainAlign),
              HasSubstr("field 'params[39]' is the scalar 'window_align', "
                        "which only a kernel of 'causal' 'window' and "
                        "'varlen' true takes (this one is 'window', not "
                        "varlen)"));
  Json causalAlign = varlenEntry("causalalign", "top_left");
  causalAlign["params"].push_back(
      {{"name", "window_align"}, {"kind", "scalar"}, {"type", "i32"}});
  EXPECT_THAT(openError(causalAlign),
              HasSubstr("field 'params[41]' is the scalar 'window_align', "
                        "which only a kernel of 'causal' 'window' and "
                        "'varlen' true takes (this one is 'top_left')"));
  Json floatAlign = varlenEntry("floatalign");
  floatAlign["params"][39]["type"] = "f32";
  EXPECT_THAT(openError(floatAlign),
              HasSubstr("field 'params[39].type' must be 'i32' or 'i64' for "
                        "scalar 'window_align', got \"f32\""));
  // Not heavy-first.
  Json heavy = varlenEntry("heavy", "top_left");
  heavy["schedule"]["options"] = "block-m=64 heavy-first=1 stages=2";
  EXPECT_THAT(openError(heavy),
              HasSubstr("kernel #0 (heavy): field 'schedule.options' must be "
                        "a schedule without heavy-first for a kernel of "
                        "'varlen' true (its programs go by query block, head "
                        "and sequence), got \"block-m=64 heavy-first=1 "
                        "stages=2\""));
  heavy["schedule"]["options"] = "heavy-first";
  EXPECT_THAT(openError(heavy), HasSubstr("without heavy-first"));
  // heavy-first=0, and heavy-first on a kernel without varlen, are fine.
  heavy["schedule"]["options"] = "block-m=64 heavy-first=0 heavy-first-heads=8";
  Json plainHeavy = maskEntry("plainheavy", "top_left");
  plainHeavy["schedule"]["options"] = "heavy-first=1";
  writeLibrary(dir, manifestOf({heavy, plainHeavy}));
  EXPECT_EQ(library.open(dir.path()), TA_OK) << lastError();
}

TEST_F(Varlen, LaunchGetsTheGridAndTheOffsets) {
  fakecuda::reset();
  open({varlenEntry("vw")});
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  ASSERT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_OK) << lastError();
  fakecuda::Launch launch = fakecuda::lastLaunch();
  EXPECT_EQ(launch.grid[0], 5u);
  EXPECT_EQ(launch.grid[1], 3u);
  EXPECT_EQ(launch.grid[2], 4u);
  ASSERT_EQ(launch.params.size(), 44u);
  auto as = [&](int i, auto value) {
    decltype(value) got;
    EXPECT_EQ(launch.params[i].size(), sizeof(got)) << "param " << i;
    __builtin_memcpy(&got, launch.params[i].data(), sizeof(got));
    return got;
  };
  EXPECT_EQ(as(39, int64_t()), 1); // window_align
  EXPECT_EQ(as(40, uint64_t()), kCuQ);
  EXPECT_EQ(as(41, int64_t()), 5);
  EXPECT_EQ(as(42, uint64_t()), kCuK);
  EXPECT_EQ(as(43, int64_t()), 5);
  fakecuda::reset();
}
