//===- BackwardTest.cpp - ta_sdpa_backward on the fake driver -------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The backward pass through the runtime: manifest entries of program
// "sdpa_backward" (read, described, and refused when malformed), the choice
// of the three kernels (the main kernel's mask as ta_sdpa chooses, softcap,
// varlen, arch), the plans' grids and parameters (the main kernel's grid
// over key blocks and K/V heads; the workspace's delta and accumulator
// views), the refusals of bad calls naming the argument, empty problems,
// and the launch of the three kernels in order.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

using namespace tatest;
using testing::HasSubstr;

namespace {

/// A view's base, sizes 0..2 and strides 0..2 (a rank-4 view's, whose
/// head dim is the kernel's) or 0..1 (a rank-3 view's, delta and lse), i64,
/// as the generator lists them; a rank-1 view's base and size.
void addView(Json &params, const char *name, int rank) {
  params.push_back({{"name", name}, {"kind", "base"}, {"type", "ptr"}});
  for (int dim = 0; dim < std::min(rank, 3); ++dim)
    params.push_back(
        {{"name", name}, {"kind", "size"}, {"dim", dim}, {"type", "i64"}});
  for (int dim = 0; dim < std::min(rank, 4) - 1; ++dim)
    params.push_back(
        {{"name", name}, {"kind", "stride"}, {"dim", dim}, {"type", "i64"}});
}

void addScalar(Json &params, const char *name, const char *type) {
  params.push_back({{"name", name}, {"kind", "scalar"}, {"type", type}});
}

/// A backward kernel's entry as tiled-attn-compile writes it (sm_80, f16,
/// D = 64, block_m = block_n = 64), of `phase` and, for the main kernel,
/// `mask` and `softcap`; with `varlen`, the sequences' offsets.
Json backwardEntry(const std::string &name, const std::string &phase,
                   const std::string &mask = "none", bool softcap = false,
                   bool varlen = false, const std::string &arch = "sm_80") {
  Json params = Json::array();
  if (phase == "preprocess") {
    for (const char *view : {"o", "do"})
      addView(params, view, 4);
    addView(params, "delta", 3);
    addView(params, "dq_accum", 4);
  } else if (phase == "main" || phase == "dq") {
    for (const char *view : {"q", "k", "v", "do"})
      addView(params, view, 4);
    addView(params, "lse", 3);
    addView(params, "delta", 3);
    if (phase == "main")
      for (const char *view : {"dq_accum", "dk", "dv"})
        addView(params, view, 4);
    else
      addView(params, "dq", 4);
    addScalar(params, "scale", "f32");
    if (mask == "window") {
      addScalar(params, "window_lo", "i64");
      addScalar(params, "window_hi", "i64");
    }
    if (softcap)
      addScalar(params, "softcap", "f32");
  } else {
    addView(params, "dq_accum", 4);
    addView(params, "dq", 4);
    addScalar(params, "scale", "f32");
  }
  const bool scores = phase == "main" || phase == "dq";
  if (varlen) {
    addView(params, "cu_seqlens_q", 1);
    if (scores)
      addView(params, "cu_seqlens_k", 1);
    if (scores && mask == "window")
      addScalar(params, "window_align", "i64");
  }
  const std::string symbol = phase == "main" ? "sdpa_bwd" : "sdpa_bwd_" + phase;
  return Json{{"name", name},
              {"program", "sdpa_backward"},
              {"phase", phase},
              {"arch", arch},
              {"dtype", "f16"},
              {"head_dim", 64},
              {"head_dim_v", 64},
              {"causal", mask},
              {"softcap", softcap},
              {"varlen", varlen},
              {"symbol", symbol},
              {"ptx", name + ".ptx"},
              {"block", {128, 1, 1}},
              {"block_m", 64},
              {"block_n", 64},
              {"shared_bytes", phase == "main" ? 92160 : 18432},
              {"abi", "tiled-attn-v2"},
              {"index_bits", 64},
              {"params", params}};
}

/// The pre- and postprocess kernels and the main kernels of the masks
/// none, top_left and window (one with a softcap), and the varlen ones of
/// no mask; plus a forward kernel of D = 64 (the library's head dims are
/// its forward kernels').
std::vector<Json> backwardLibrary() {
  return {kernelEntry("fwd"),
          backwardEntry("pre", "preprocess"),
          backwardEntry("post", "postprocess"),
          backwardEntry("main_none", "main"),
          backwardEntry("main_top_left", "main", "top_left"),
          backwardEntry("main_window", "main", "window"),
          backwardEntry("main_none_softcap", "main", "none", true),
          backwardEntry("pre_varlen", "preprocess", "none", false, true),
          backwardEntry("post_varlen", "postprocess", "none", false, true),
          backwardEntry("main_none_varlen", "main", "none", false, true)};
}

constexpr uint64_t kWorkspace = uint64_t(0x80) << 32;

class BackwardTest : public testing::Test {
protected:
  void open(const std::vector<Json> &entries = backwardLibrary()) {
    writeLibrary(dir, manifestOf(entries));
    ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  }

  /// The backward of problem(b, h, sq, sk, 64) with h_kv K/V heads: the
  /// forward's lse, d_o, dq, dk, dv contiguous at addresses of their own,
  /// and a workspace of its size.
  void setProblem(int64_t b, int64_t h, int64_t hKv, int64_t sq, int64_t sk) {
    args = {};
    args.forward = problem(b, h, sq, sk, 64);
    contiguous(args.forward.k, 0x200000000, b, hKv, sk, 64);
    contiguous(args.forward.v, 0x300000000, b, hKv, sk, 64);
    args.forward.lse = 0x500000000;
    contiguous(args.d_o, 0x600000000, b, h, sq, 64);
    contiguous(args.dq, 0x700000000, b, h, sq, 64);
    contiguous(args.dk, 0x800000000, b, hKv, sk, 64);
    contiguous(args.dv, 0x900000000, b, hKv, sk, 64);
    args.workspace = kWorkspace;
    args.workspace_bytes = uint64_t(1) << 32;
  }

  /// The names of the three kernels planned for capability cc ("-" for a
  /// phase that does not run), or "error <status>: <message>".
  std::string planned(int major = 9, int minor = 0) {
    if (ta_sdpa_backward_plan(library.get(), &args, major, minor, plans) !=
        TA_OK)
      return "error: " + lastError();
    std::string names;
    for (const ta_launch_plan &plan : plans) {
      ta_kernel_info info = {};
      if (plan.kernel >= 0)
        EXPECT_EQ(ta_library_backward_kernel(library.get(), plan.kernel, &info),
                  TA_OK);
      names += (names.empty() ? "" : " ") +
               std::string(plan.kernel >= 0 ? info.name : "-");
    }
    return names;
  }

  /// The index of parameter `name` (its `kind`, dim `dim`) of backward
  /// kernel `index`'s entry in `entries`.
  static int paramIndex(const Json &entry, const std::string &name,
                        const std::string &kind, int dim = -1) {
    const Json &params = entry["params"];
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i]["name"] == name && params[i]["kind"] == kind &&
          (dim < 0 || params[i]["dim"] == dim))
        return static_cast<int>(i);
    ADD_FAILURE() << "no parameter " << name << " " << kind;
    return 0;
  }

  TempDir dir;
  Library library;
  ta_sdpa_backward_args args = {};
  ta_launch_plan plans[3];
};

TEST_F(BackwardTest, EntriesAreReadApartFromTheForwardKernels) {
  open();
  EXPECT_EQ(ta_library_kernel_count(library.get()), 1);
  ASSERT_EQ(ta_library_backward_count(library.get()), 9);
  ta_kernel_info info = {};
  ASSERT_EQ(ta_library_kernel(library.get(), 0, &info), TA_OK);
  EXPECT_STREQ(info.phase, "");
  ASSERT_EQ(ta_library_backward_kernel(library.get(), 5, &info), TA_OK);
  EXPECT_STREQ(info.name, "main_none_softcap");
  EXPECT_STREQ(info.phase, "main");
  EXPECT_STREQ(info.mask, "none");
  EXPECT_EQ(info.softcap, 1);
  // It reads the forward's lse; it writes none.
  EXPECT_EQ(info.lse, 0);
  EXPECT_EQ(info.block_n, 64);
  ASSERT_EQ(ta_library_backward_kernel(library.get(), 6, &info), TA_OK);
  EXPECT_STREQ(info.phase, "preprocess");
  EXPECT_EQ(info.varlen, 1);
  EXPECT_EQ(ta_library_backward_kernel(library.get(), 9, &info),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("backward kernel index 9 is out of "
                                     "range: the library holds 9 kernels"));
}

TEST_F(BackwardTest, MalformedEntriesAreRefused) {
  Json entry = backwardEntry("pre", "preprocess");
  entry["phase"] = "forward";
  expectOpenError(manifestOf({entry}),
                  {"(pre): field 'phase' must be one of 'preprocess', "
                   "'main', 'postprocess'"});
  entry = backwardEntry("pre", "preprocess", "top_left");
  expectOpenError(manifestOf({entry}),
                  {"field 'causal' must be 'none' for a preprocess kernel"});
  // A window of a varlen batch takes its band's alignment per sequence.
  entry = backwardEntry("main", "main", "window", false, true);
  Json withoutAlign = Json::array();
  for (const Json &p : entry["params"])
    if (p["name"] != "window_align")
      withoutAlign.push_back(p);
  entry["params"] = withoutAlign;
  expectOpenError(manifestOf({entry}),
                  {"a kernel of 'causal' 'window' and 'varlen' true takes the "
                   "scalar 'window_align'"});
  // A main kernel without one of its views.
  entry = backwardEntry("main", "main");
  Json params = Json::array();
  for (const Json &p : entry["params"])
    if (p["name"] != "dk")
      params.push_back(p);
  entry["params"] = params;
  expectOpenError(manifestOf({entry}),
                  {"a backward main kernel takes the view 'dk' (the keys' "
                   "gradient), whose base field 'params' lacks"});
  // The backward's views are not a forward kernel's, nor seqused_k a
  // backward kernel's.
  entry = kernelEntry("fwd");
  entry["params"].push_back(
      {{"name", "dq"}, {"kind", "base"}, {"type", "ptr"}});
  expectOpenError(manifestOf({entry}), {"field 'params[37].name' must be one "
                                        "of 'q', 'k', 'v', 'o', 'lse'"});
  entry = backwardEntry("main", "main");
  entry["params"].push_back(
      {{"name", "seqused_k"}, {"kind", "base"}, {"type", "ptr"}});
  expectOpenError(manifestOf({entry}), {"'delta', 'dq_accum'", "seqused_k"});
  entry = backwardEntry("main", "main");
  entry.erase("block_n");
  expectOpenError(manifestOf({entry}), {"missing field 'block_n'"});
}

TEST_F(BackwardTest, PlansGridsAndParameters) {
  open();
  // B 2, H 4 on 2 K/V heads, S_q 77, S_k 131.
  setProblem(2, 4, 2, 77, 131);
  ASSERT_EQ(planned(), "pre main_none post");
  // Preprocess and postprocess over query blocks, heads and batch; main
  // over key blocks, K/V heads and batch.
  const unsigned rows[3] = {2, 4, 2}, keys[3] = {3, 2, 2};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(plans[0].grid[i], rows[i]);
    EXPECT_EQ(plans[1].grid[i], keys[i]);
    EXPECT_EQ(plans[2].grid[i], rows[i]);
  }
  EXPECT_EQ(plans[1].shared_bytes, 92160u);
  // The workspace: delta [2, 4, 77] at its start, the accumulator
  // [2, 4, 77, 64] at the next 256 bytes past delta's 2464.
  const Json pre = backwardEntry("pre", "preprocess");
  EXPECT_EQ(paramAs<uint64_t>(plans[0], paramIndex(pre, "delta", "base")),
            kWorkspace);
  EXPECT_EQ(paramAs<int64_t>(plans[0], paramIndex(pre, "delta", "size", 2)),
            77);
  EXPECT_EQ(paramAs<int64_t>(plans[0], paramIndex(pre, "delta", "stride", 0)),
            4 * 77);
  EXPECT_EQ(paramAs<uint64_t>(plans[0], paramIndex(pre, "dq_accum", "base")),
            kWorkspace + 2560);
  EXPECT_EQ(
      paramAs<int64_t>(plans[0], paramIndex(pre, "dq_accum", "stride", 1)),
      77 * 64);
  EXPECT_EQ(paramAs<uint64_t>(plans[0], paramIndex(pre, "do", "base")),
            0x600000000u);
  EXPECT_EQ(paramAs<uint64_t>(plans[0], paramIndex(pre, "o", "base")),
            0x400000000u);
  const Json main = backwardEntry("main_none", "main");
  EXPECT_EQ(paramAs<uint64_t>(plans[1], paramIndex(main, "lse", "base")),
            0x500000000u);
  EXPECT_EQ(paramAs<int64_t>(plans[1], paramIndex(main, "lse", "stride", 0)),
            4 * 77);
  EXPECT_EQ(paramAs<uint64_t>(plans[1], paramIndex(main, "dk", "base")),
            0x800000000u);
  EXPECT_EQ(paramAs<int64_t>(plans[1], paramIndex(main, "dk", "size", 1)), 2);
  EXPECT_EQ(paramAs<uint64_t>(plans[1], paramIndex(main, "dv", "base")),
            0x900000000u);
  EXPECT_EQ(paramAs<float>(plans[1], paramIndex(main, "scale", "scalar")),
            0.125f);
  const Json post = backwardEntry("post", "postprocess");
  EXPECT_EQ(paramAs<uint64_t>(plans[2], paramIndex(post, "dq", "base")),
            0x700000000u);
  // The workspace's size.
  uint64_t bytes = 0;
  ASSERT_EQ(ta_sdpa_backward_workspace_size(library.get(), &args, &bytes),
            TA_OK)
      << lastError();
  EXPECT_EQ(bytes, 2560u + 2 * 4 * 77 * 64 * 4);
}

TEST_F(BackwardTest, TheMainKernelOfTheMaskSoftcapAndVarlen) {
  open();
  setProblem(1, 2, 2, 100, 150);
  args.forward.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(planned(), "pre main_top_left post");
  // Bottom-right, with no kernel of its own: the window kernel, given the
  // band (the causal diagonal j - i <= S_k - S_q).
  args.forward.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(planned(), "pre main_window post");
  const Json window = backwardEntry("main_window", "main", "window");
  EXPECT_EQ(
      paramAs<int64_t>(plans[1], paramIndex(window, "window_hi", "scalar")),
      50);
  args.forward.mask = TA_MASK_NONE;
  args.forward.window = tatest::window(10, 5);
  EXPECT_EQ(planned(), "pre main_window post");
  EXPECT_EQ(
      paramAs<int64_t>(plans[1], paramIndex(window, "window_lo", "scalar")),
      -10);
  EXPECT_EQ(
      paramAs<int64_t>(plans[1], paramIndex(window, "window_hi", "scalar")), 5);
  args.forward.window = {};
  args.forward.softcap = 30.0f;
  EXPECT_EQ(planned(), "pre main_none_softcap post");
  // A causal softcap: no kernel of its mask and softcap, nor a window one
  // with softcap.
  args.forward.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_THAT(planned(),
              HasSubstr("no backward main kernel for sm_90, f16, D=64, "
                        "causal=top_left or window, softcap; available: "));
  args.forward.mask = TA_MASK_NONE;
  args.forward.softcap = 0.0f;
  // Varlen: 3 packed sequences, 300 query and 500 key rows.
  args.forward.varlen = ta_varlen{1, 3, 0xa00000000, 0xb00000000, 128, 256};
  contiguous(args.forward.q, 0x100000000, 1, 2, 300, 64);
  contiguous(args.forward.o, 0x400000000, 1, 2, 300, 64);
  contiguous(args.d_o, 0x600000000, 1, 2, 300, 64);
  contiguous(args.dq, 0x700000000, 1, 2, 300, 64);
  for (ta_tensor *t : {&args.forward.k, &args.forward.v, &args.dk, &args.dv})
    contiguous(*t, t->data, 1, 2, 500, 64);
  ASSERT_EQ(planned(), "pre_varlen main_none_varlen post_varlen");
  // Grids over the longest sequences and the sequences.
  EXPECT_EQ(plans[0].grid[0], 2u);
  EXPECT_EQ(plans[0].grid[2], 3u);
  EXPECT_EQ(plans[1].grid[0], 4u);
  EXPECT_EQ(plans[1].grid[2], 3u);
  args.forward.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_THAT(planned(), HasSubstr("no backward main kernel for sm_90, f16, "
                                   "D=64, causal=top_left or window, varlen"));
  // With a window kernel of varlen: causal masks and windows, the band's
  // alignment per sequence as window_align (1: bottom-right).
  std::vector<Json> entries = backwardLibrary();
  const Json windowVarlen =
      backwardEntry("main_window_varlen", "main", "window", false, true);
  entries.push_back(windowVarlen);
  open(entries);
  EXPECT_EQ(planned(), "pre_varlen main_window_varlen post_varlen");
  auto param = [&](const char *name) {
    return paramAs<int64_t>(plans[1], paramIndex(windowVarlen, name, "scalar"));
  };
  EXPECT_EQ(param("window_hi"), 0);
  EXPECT_EQ(param("window_align"), 0);
  args.forward.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(planned(), "pre_varlen main_window_varlen post_varlen");
  EXPECT_EQ(param("window_hi"), 0);
  EXPECT_EQ(param("window_align"), 1);
  args.forward.mask = TA_MASK_NONE;
  args.forward.window = tatest::window(16, 0, /*bottomRight=*/true);
  EXPECT_EQ(planned(), "pre_varlen main_window_varlen post_varlen");
  EXPECT_EQ(param("window_lo"), -16);
  EXPECT_EQ(param("window_align"), 1);
}

// The deterministic mode: the dq kernel of the main kernel's mask, softcap
// and varlen in the third launch, over the query blocks.
TEST_F(BackwardTest, TheDeterministicModesDqKernel) {
  std::vector<Json> entries = backwardLibrary();
  const Json dqNone = backwardEntry("dq_none", "dq");
  entries.push_back(dqNone);
  entries.push_back(backwardEntry("dq_window", "dq", "window"));
  open(entries);
  ta_kernel_info info = {};
  ASSERT_EQ(ta_library_backward_kernel(library.get(), 9, &info), TA_OK);
  EXPECT_STREQ(info.phase, "dq");
  EXPECT_STREQ(info.mask, "none");
  setProblem(2, 4, 2, 77, 131);
  args.deterministic = 1;
  ASSERT_EQ(planned(), "pre main_none dq_none");
  // Its grid: the query blocks of every query head and batch entry.
  EXPECT_EQ(plans[2].grid[0], 2u);
  EXPECT_EQ(plans[2].grid[1], 4u);
  EXPECT_EQ(plans[2].grid[2], 2u);
  // It reads what the main kernel reads and writes dq itself.
  EXPECT_EQ(paramAs<uint64_t>(plans[2], paramIndex(dqNone, "dq", "base")),
            args.dq.data);
  EXPECT_EQ(paramAs<uint64_t>(plans[2], paramIndex(dqNone, "lse", "base")),
            args.forward.lse);
  // Causal: its own mask's kernel, else the window one with the band.
  args.forward.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(planned(), "pre main_top_left dq_window");
  // None of the softcap: said, naming the phase.
  args.forward.mask = TA_MASK_NONE;
  args.forward.softcap = 30.0f;
  EXPECT_THAT(planned(), HasSubstr("no backward dq kernel for sm_90, f16, "
                                   "D=64, causal=none or window, softcap"));
  // Without the mode: the postprocess, as before.
  args.forward.softcap = 0.0f;
  args.deterministic = 0;
  EXPECT_EQ(planned(), "pre main_none post");
  // A dq kernel masks as the main kernel does; not a preprocess.
  Json entry = backwardEntry("dq", "dq", "top_left", true);
  Json pre = backwardEntry("pre", "preprocess");
  pre["softcap"] = true;
  expectOpenError(manifestOf({pre}),
                  {"field 'softcap' must be false for a preprocess kernel "
                   "(only the main and dq kernels mask or cap)"});
  // A dq kernel that lacks dq.
  Json params = Json::array();
  for (const Json &p : entry["params"])
    if (p["name"] != "dq")
      params.push_back(p);
  entry["params"] = params;
  expectOpenError(manifestOf({entry}),
                  {"a backward dq kernel takes the view 'dq'"});
  // A varlen dq kernel reads the keys' offsets, as the main kernel does.
  entry = backwardEntry("dq_varlen", "dq", "none", false, true);
  params = Json::array();
  for (const Json &p : entry["params"])
    if (p["name"] != "cu_seqlens_k")
      params.push_back(p);
  entry["params"] = params;
  expectOpenError(manifestOf({entry}),
                  {"a kernel of 'varlen' true takes the view 'cu_seqlens_k'"});
}

TEST_F(BackwardTest, TheHighestArchThatRunsOnTheDevice) {
  std::vector<Json> entries = backwardLibrary();
  entries.push_back(
      backwardEntry("main_none_sm90", "main", "none", false, false, "sm_90a"));
  open(entries);
  setProblem(1, 2, 2, 64, 64);
  EXPECT_EQ(planned(9, 0), "pre main_none_sm90 post");
  EXPECT_EQ(planned(8, 0), "pre main_none post");
  EXPECT_THAT(planned(7, 5), HasSubstr("no backward preprocess kernel for "
                                       "sm_75"));
}

// A main kernel of score and mask functions (its captured inputs among
// its parameters) is read, never chosen for a call without them, and
// chosen for a call of them.
TEST_F(BackwardTest, TheMainKernelOfTheForwardsFunctions) {
  std::vector<Json> entries = backwardLibrary();
  Json alibi =
      backwardEntry("main_none_alibi", "main", "none", false, false, "sm_90a");
  alibi["variant"] = "none+alibi";
  alibi["score_function"] = "alibi";
  alibi["mask_function"] = "";
  alibi["captures"] = Json::array({{{"name", "slopes"},
                                    {"function", "alibi"},
                                    {"kind", "view"},
                                    {"dtype", "f32"},
                                    {"rank", 1}}});
  addView(alibi["params"], "slopes", 1);
  entries.push_back(alibi);
  open(entries);
  ASSERT_EQ(ta_library_backward_count(library.get()), 10);
  setProblem(1, 2, 2, 64, 64);
  EXPECT_EQ(planned(9, 0), "pre main_none post");

  // A call of the forward's score function takes it, its captured input
  // packed among the main kernel's parameters (the others take none).
  ta_capture slopes = {};
  slopes.name = "slopes";
  slopes.type = TA_CAPTURE_F32;
  slopes.rank = 1;
  slopes.data = 0xa00000000;
  slopes.sizes[0] = 2;
  slopes.strides[0] = 1;
  args.forward.score_function = "alibi";
  args.forward.captures = &slopes;
  args.forward.num_captures = 1;
  EXPECT_EQ(planned(9, 0), "pre main_none_alibi post");
  const int base = paramIndex(alibi, "slopes", "base");
  uint64_t packed = 0;
  std::memcpy(&packed, plans[1].param_data + plans[1].param_offsets[base],
              sizeof(packed));
  EXPECT_EQ(packed, uint64_t(0xa00000000));
  // Not on a GPU older than its arch, nor without its captured input, nor
  // with one it does not take.
  EXPECT_THAT(planned(8, 0),
              HasSubstr("no backward main kernel for sm_80, f16, D=64, "
                        "causal=none or window, score function 'alibi'"));
  args.forward.num_captures = 0;
  args.forward.captures = nullptr;
  EXPECT_THAT(planned(9, 0), HasSubstr("takes the captured input 'slopes', "
                                       "which captures lacks"));
  ta_capture both[2] = {slopes, slopes};
  both[1].name = "document_ids";
  args.forward.captures = both;
  args.forward.num_captures = 2;
  EXPECT_THAT(planned(9, 0), HasSubstr("captured input 'document_ids' is not "
                                       "one kernel main_none_alibi takes"));
}

TEST_F(BackwardTest, BadCallsAreRefusedNamingTheArgument) {
  open();
  auto refused = [&](const std::string &part) {
    EXPECT_THAT(planned(), HasSubstr(part));
    setProblem(2, 4, 2, 77, 131);
  };
  setProblem(2, 4, 2, 77, 131);
  args.forward.lse = 0;
  refused("forward.lse is 0: the backward pass reads the forward's "
          "log-sum-exps");
  args.forward.score_function = "alibi";
  refused("no backward main kernel for sm_90, f16, D=64, causal=none or "
          "window, score function 'alibi'");
  args.forward.kernel = "main_none";
  refused("forward.kernel is set");
  args.forward.seqused_k = 0x1000;
  refused("forward.seqused_k is set");
  args.d_o.sizes[3] = 32;
  refused("d_o has sizes [2, 4, 77, 32], but o has [2, 4, 77, 64]");
  args.dk.sizes[2] = 130;
  refused("dk has sizes [2, 2, 130, 64], but k has [2, 2, 131, 64]");
  args.dq.data = 0;
  refused("dq has a null data pointer");
  args.dv.sizes[2] = -1;
  refused("dv has a negative size along dimension 2");
  // Gradients that share memory with an input, or with the workspace.
  args.dq.data = args.forward.q.data;
  refused("dq overlaps q in memory");
  args.dk.data = kWorkspace + 4096;
  refused("dk overlaps dq_accum in memory");
  args.dv.strides[2] = 0;
  refused("dv [2, 2, 131, 64] with strides [16768, 8384, 0, 1] has elements "
          "that share an address");
  args.d_o.strides[3] = 2;
  refused("do cannot be passed to kernel pre as it is: its last-dimension "
          "stride is 2");
  // The workspace: aligned, and as large as the call needs.
  args.workspace = kWorkspace + 16;
  refused("workspace must be a 256-byte aligned device address");
  args.workspace_bytes = 1000;
  refused("workspace_bytes is 1000, but this call needs 160256 bytes");
  args.forward.scale = -1.0f;
  refused("scale");
  // The backward reads o, lse and d_o: they may share memory (d_o = o, a
  // loss of sum(o^2) / 2), and o's elements one another (a broadcast).
  args.d_o = args.forward.o;
  EXPECT_EQ(planned(), "pre main_none post");
  args.forward.o.strides[0] = 0;
  args.d_o = args.forward.o;
  EXPECT_EQ(planned(), "pre main_none post");
}

TEST_F(BackwardTest, EmptyProblems) {
  open();
  // No query rows: dk and dv are zeros, which the main kernel writes.
  setProblem(2, 4, 2, 0, 131);
  EXPECT_EQ(planned(), "- main_none -");
  uint64_t bytes = 1;
  ASSERT_EQ(ta_sdpa_backward_workspace_size(library.get(), &args, &bytes),
            TA_OK);
  EXPECT_EQ(bytes, 0u);
  args.workspace = 0;
  args.workspace_bytes = 0;
  EXPECT_EQ(planned(), "- main_none -");
  // No batch: nothing at all.
  setProblem(0, 4, 2, 77, 131);
  EXPECT_EQ(planned(), "- - -");
  EXPECT_EQ(plans[1].grid[0], 0u);
}

TEST_F(BackwardTest, LaunchesTheThreeKernelsInOrder) {
  open();
  fakecuda::reset();
  setProblem(2, 4, 2, 77, 131);
  const int before = fakecuda::launches();
  CUstream stream = reinterpret_cast<CUstream>(0x5);
  ASSERT_EQ(ta_sdpa_backward(library.get(), &args, 0, stream), TA_OK)
      << lastError();
  EXPECT_EQ(fakecuda::launches(), before + 3);
  fakecuda::Launch main = fakecuda::previousLaunch();
  fakecuda::Launch post = fakecuda::lastLaunch();
  EXPECT_EQ(main.symbol, "sdpa_bwd");
  EXPECT_EQ(main.grid[0], 3u);
  EXPECT_EQ(main.grid[1], 2u);
  EXPECT_EQ(main.sharedBytes, 92160u);
  EXPECT_EQ(post.symbol, "sdpa_bwd_postprocess");
  EXPECT_EQ(post.stream, stream);
  // A call that fails launches nothing.
  args.forward.mask = TA_MASK_CAUSAL_TOP_LEFT;
  args.forward.softcap = 5.0f;
  EXPECT_EQ(ta_sdpa_backward(library.get(), &args, 0, stream),
            TA_ERROR_NO_KERNEL);
  EXPECT_EQ(fakecuda::launches(), before + 3);
}

/// An sm_90a library (wgmma with TMA): the descriptors of the call's
/// 16-bit views take its dtype; dQ's float32 accumulator in the workspace
/// (the postprocess kernel reads it by TMA) takes float32, 4-byte
/// elements.
TEST_F(BackwardTest, TensorMapsOfTheWorkspaceAreFloat32) {
  auto withMap = [](Json entry, const char *view, int64_t rows, int64_t cols) {
    entry["params"].push_back({{"name", view},
                               {"kind", "tensor_map"},
                               {"type", "tensor_map"},
                               {"box", {rows, cols}},
                               {"swizzle", 128}});
    return entry;
  };
  std::vector<Json> entries = {
      kernelEntry("fwd"),
      withMap(
          backwardEntry("pre90", "preprocess", "none", false, false, "sm_90a"),
          "do", 64, 64),
      withMap(backwardEntry("main90", "main", "none", false, false, "sm_90a"),
              "q", 64, 64),
      withMap(backwardEntry("post90", "postprocess", "none", false, false,
                            "sm_90a"),
              "dq_accum", 64, 32)};
  open(entries);
  fakecuda::reset();
  setProblem(2, 4, 2, 77, 131);
  ASSERT_EQ(ta_sdpa_backward(library.get(), &args, 0, nullptr), TA_OK)
      << lastError();
  ASSERT_EQ(fakecuda::tensorMapCalls(), 3);
  fakecuda::TensorMapCall post = fakecuda::lastTensorMap();
  EXPECT_EQ(post.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  // dq_accum [2, 4, 77, 64] float32: 256-byte rows.
  const uint64_t dims[4] = {64, 77, 4, 2};
  const uint64_t strides[3] = {64 * 4, 77 * 64 * 4, 4 * 77 * 64 * 4};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(post.globalDim[i], dims[i]) << i;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(post.globalStrides[i], strides[i]) << i;
  EXPECT_EQ(post.boxDim[0], 32u);
  EXPECT_EQ(post.boxDim[1], 64u);
  // Planned without a launch (ta_sdpa_backward_plan), in a context of any
  // device: the same descriptors; a capability with no sm_90a kernel
  // plans none.
  fakecuda::setCurrent(nullptr);
  EXPECT_EQ(planned(9, 0), "pre90 main90 post90");
  EXPECT_EQ(fakecuda::tensorMapCalls(), 6);
  EXPECT_EQ(fakecuda::lastTensorMap().dataType,
            CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_THAT(planned(8, 0), HasSubstr("no backward preprocess kernel for "
                                       "sm_80"));
}

} // namespace
