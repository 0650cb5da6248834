//===- SplitKvTest.cpp - Packed GQA and split-KV decode calls -------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The decode paths of the runtime on the fake driver: the split heuristic
// (Splits.h) on the shapes it is meant for; packed GQA (a call of one query
// row per head runs on H_kv heads of H_q / H_kv rows, where every row sees
// every key, and only there); and a split-KV call: the workspace's size,
// the split kernel's grid and parameters (its o and lse are the partial
// results in the workspace, num_splits its chunks), then the merge's
// (o_partial, lse_partial, num_splits, o, lse), and the refusals (a
// workspace too small or misaligned, overlapping an input; a negative
// num_splits). Fake devices: 0 is sm_90 (132 SMs unless set), 1 is sm_80.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "Splits.h"
#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

using namespace tatest;
using testing::HasSubstr;
using tiled_attn::runtime::chooseNumSplits;
using tiled_attn::runtime::SplitWorkspace;
using tiled_attn::runtime::splitWorkspace;

TEST(SplitHeuristic, SplitsOnlyWhereTheGridLeavesSmsIdle) {
  // Decode, batch 1, 8 KV heads packed: 8 programs on 132 SMs, 32k keys in
  // blocks of 128: the fewest chunks that keep 85% of the best wave busy
  // (15 x 8 = 120 of 132 SMs), balanced: 16 chunks of 16 blocks (one wave
  // and two merge steps as well) instead of 15 of up to 18.
  EXPECT_EQ(chooseNumSplits(8, 256, 132), 16);
  // 4k keys in blocks of 64: 15, balanced to 16 chunks of 4.
  EXPECT_EQ(chooseNumSplits(8, 64, 132), 16);
  // The grid fills 80% of the SMs already: no split.
  EXPECT_EQ(chooseNumSplits(106, 256, 132), 1);
  EXPECT_EQ(chooseNumSplits(128, 256, 132), 1);
  // 105 programs: 5 chunks fill 525 of 528 slots (2 to 4 only 79%).
  EXPECT_EQ(chooseNumSplits(105, 256, 132), 5);
  // Few keys: at least kMinBlocksPerSplit blocks per chunk, so 32 blocks
  // give at most 8 chunks (7 are within 85%, and 8 balance them), and 7
  // blocks none.
  EXPECT_EQ(chooseNumSplits(8, 32, 132), 8);
  EXPECT_EQ(chooseNumSplits(8, 7, 132), 1);
  // One program: at most kMaxSplits (128 of 132 SMs), 85% of that is 109,
  // balanced up to 112 (14 merge steps of 8).
  EXPECT_EQ(chooseNumSplits(1, 1 << 20, 132), 112);
  EXPECT_LE(chooseNumSplits(1, 1 << 20, 1000), tiled_attn::runtime::kMaxSplits);
  // Nonsense in, no split out.
  EXPECT_EQ(chooseNumSplits(0, 256, 132), 1);
  EXPECT_EQ(chooseNumSplits(8, 256, 0), 1);
  // Every choice keeps the last wave at least 85% as busy as the best.
  for (int64_t tiles : {1, 3, 8, 17, 40, 64, 100})
    for (int64_t blocks : {8, 64, 512})
      for (int64_t sms : {46, 108, 132, 148}) {
        int64_t s = chooseNumSplits(tiles, blocks, sms);
        ASSERT_GE(s, 1);
        ASSERT_LE(s, std::max<int64_t>(1, blocks / 4));
        if (s > 1)
          EXPECT_LT(tiles * 10, sms * 8);
        // Balanced: no more chunks of the same waves and merge steps has
        // a shorter longest chunk.
        for (int64_t t = s + 1; s > 1 && t <= blocks / 4; ++t)
          if ((tiles * t + sms - 1) / sms == (tiles * s + sms - 1) / sms &&
              (t + 7) / 8 == (s + 7) / 8)
            EXPECT_GE((blocks + t - 1) / t, (blocks + s - 1) / s)
                << tiles << " tiles, " << blocks << " blocks, " << sms
                << " SMs: " << s << " chunks, " << t << " shorter";
      }
}

TEST(SplitHeuristic, WorkspaceOfThePartialResults) {
  SplitWorkspace w;
  ASSERT_TRUE(splitWorkspace(2, 8, 4, 128, 14, w));
  EXPECT_EQ(w.partialOutputOffset, 0u);
  EXPECT_EQ(w.partialLseOffset, 2u * 8 * 14 * 4 * 128 * 4);
  EXPECT_EQ(w.bytes, w.partialLseOffset + 2u * 8 * 14 * 4 * 4);
  // 256-byte aligned parts.
  ASSERT_TRUE(splitWorkspace(1, 1, 3, 8, 3, w));
  EXPECT_EQ(w.partialLseOffset, 512u);
  EXPECT_EQ(w.bytes, 768u);
  EXPECT_FALSE(
      splitWorkspace(int64_t(1) << 40, int64_t(1) << 20, 64, 128, 64, w));
}

namespace {

/// Base, sizes of dims 0-2 and strides of dims 0-2 of view `name` (rank
/// 4), or of dims 0-1 (rank 3), as the compiler emits them.
void addView(Json &params, const std::string &name, int rank) {
  params.push_back({{"name", name}, {"kind", "base"}, {"type", "ptr"}});
  for (int dim = 0; dim < 3; ++dim)
    params.push_back(
        {{"name", name}, {"kind", "size"}, {"dim", dim}, {"type", "i64"}});
  for (int dim = 0; dim < rank - 1; ++dim)
    params.push_back(
        {{"name", name}, {"kind", "stride"}, {"dim", dim}, {"type", "i64"}});
}

/// A grouped-KV kernel of mask `causal` (f16, D 64).
Json groupedEntry(const std::string &name, const std::string &causal) {
  Json e = kernelEntry(name);
  e["causal"] = causal;
  e["grouped_kv"] = true;
  return e;
}

/// A split-KV kernel: the standard parameters, lse, num_splits; sm_90,
/// block_m 64, block_n 128.
Json splitEntry(const std::string &name) {
  Json e = kernelEntry(name);
  e["arch"] = "sm_90";
  e["lse"] = true;
  e["split"] = true;
  e["grouped_kv"] = true;
  e["schedule"]["block_n"] = 128;
  addView(e["params"], "lse", 3);
  e["params"].push_back(
      {{"name", "num_splits"}, {"kind", "scalar"}, {"type", "i64"}});
  return e;
}

/// A merge kernel of f16 and D_v 64, 16 rows per program.
Json mergeEntry(const std::string &name, const std::string &arch = "sm_80") {
  Json params = Json::array();
  addView(params, "o_partial", 4);
  addView(params, "lse_partial", 3);
  params.push_back(
      {{"name", "num_splits"}, {"kind", "scalar"}, {"type", "i64"}});
  addView(params, "o", 4);
  addView(params, "lse", 3);
  return Json{{"name", name},           {"program", "split_merge"},
              {"arch", arch},           {"dtype", "f16"},
              {"head_dim_v", 64},       {"symbol", "split_merge"},
              {"ptx", name + ".ptx"},   {"block", {32, 1, 1}},
              {"block_m", 16},          {"shared_bytes", 2304},
              {"abi", "tiled-attn-v2"}, {"index_bits", 64},
              {"params", params}};
}

class SplitKv : public testing::Test {
protected:
  void SetUp() override { fakecuda::reset(); }
  void TearDown() override { fakecuda::reset(); }

  void open(const std::vector<Json> &entries) {
    writeLibrary(dir, manifestOf(entries));
    ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  }

  /// A decode step: B 2, 8 query heads on 2 KV heads, S_q 1, S_k 4096.
  void decode(int64_t b = 2, int64_t sk = 4096) {
    args = problem(b, 8, 1, sk, 64);
    contiguous(args.k, args.k.data, b, 2, sk, 64);
    contiguous(args.v, args.v.data, b, 2, sk, 64);
  }

  /// A decode step of batch 2 (8 query heads on 2 KV heads, D 64) on a
  /// paged cache of `pages` pages of `pageSize` keys: k and v [pages, 2,
  /// pageSize, 64], laid out as vLLM's [pages, pageSize, 2, 64]; lengths
  /// (seqused_k at kLengths) and a block table of 2 x 16 pages.
  void pagedDecode(int64_t pages, int64_t pageSize) {
    decode(/*b=*/2, /*sk=*/pageSize);
    for (ta_tensor *t : {&args.k, &args.v}) {
      t->sizes[0] = pages;
      t->strides[1] = 64;
      t->strides[3] = 1;
    }
    setPageSize(pageSize);
    args.seqused_k = kLengths;
    bindTable(2, 16);
  }

  /// k's and v's pages hold `pageSize` keys each.
  void setPageSize(int64_t pageSize) {
    for (ta_tensor *t : {&args.k, &args.v}) {
      t->sizes[2] = pageSize;
      t->strides[0] = pageSize * 2 * 64;
      t->strides[2] = 2 * 64;
    }
  }

  /// The call's one captured input: a block table of `rows` x `pages`.
  void bindTable(int64_t rows, int64_t pages) {
    table = viewCapture("block_table", TA_CAPTURE_I32, kFarAway + 0x900000,
                        {rows, pages}, {pages, 1});
    args.captures = &table;
    args.num_captures = 1;
  }

  static constexpr uint64_t kLengths = 0x700000000;

  uint64_t workspaceSize(int device = 0) {
    uint64_t bytes = ~uint64_t(0);
    EXPECT_EQ(ta_sdpa_workspace_size(library.get(), &args, device, &bytes),
              TA_OK)
        << lastError();
    return bytes;
  }

  /// Runs `args` with a workspace of the size it needs (which must be some:
  /// the call splits); `split` gets the split kernel's launch.
  void runSplit(fakecuda::Launch &split) {
    const uint64_t bytes = workspaceSize();
    ASSERT_GT(bytes, 0u);
    args.workspace = kFarAway;
    args.workspace_bytes = bytes;
    ASSERT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_OK) << lastError();
    split = fakecuda::previousLaunch();
  }

  TempDir dir;
  Library library;
  ta_sdpa_args args = problem(2, 8, 1, 4096, 64);
  ta_capture table = {};
};

/// Parameter `i` of a launch, as T.
template <typename T> T launchParam(const fakecuda::Launch &launch, int i) {
  T value;
  EXPECT_EQ(launch.params.at(i).size(), sizeof(T));
  std::memcpy(&value, launch.params.at(i).data(), sizeof(T));
  return value;
}

} // namespace

TEST_F(SplitKv, PackedGqaReadsTheGroupAsRows) {
  open({groupedEntry("none", "none"), groupedEntry("br", "bottom_right"),
        groupedEntry("tl", "top_left")});
  decode();
  for (ta_mask mask : {TA_MASK_NONE, TA_MASK_CAUSAL_BOTTOM_RIGHT}) {
    args.mask = mask;
    ta_launch_plan plan;
    ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
        << lastError();
    // Every row sees every key: the kernel of no mask, on H_kv heads.
    EXPECT_EQ(plan.kernel, 0);
    EXPECT_EQ(plan.grid[0], 1u);
    EXPECT_EQ(plan.grid[1], 2u);
    EXPECT_EQ(plan.grid[2], 2u);
    // q as [B, H_kv, G, D]: sizes 2, 2, 4, 64; strides 512, 256, 64, 1.
    const int64_t sizes[4] = {2, 2, 4, 64}, strides[4] = {512, 256, 64, 1};
    for (int view : {0, 3})
      for (int dim = 0; dim < 4; ++dim) {
        EXPECT_EQ(paramAs<int64_t>(plan, view * 9 + 1 + dim), sizes[dim]);
        EXPECT_EQ(paramAs<int64_t>(plan, view * 9 + 5 + dim), strides[dim]);
      }
  }
  // Top-left causal with S_q 1 sees key 0 only: not packed.
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  ta_launch_plan plan;
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK);
  EXPECT_EQ(plan.kernel, 2);
  EXPECT_EQ(plan.grid[1], 8u);
  // A window that hides keys, a named kernel, equal heads: not packed.
  args.mask = TA_MASK_NONE;
  args.window = window(100, 0, /*bottomRight=*/true);
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan),
            TA_ERROR_NO_KERNEL);
  args.window = ta_window{};
  args.kernel = "none";
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK);
  EXPECT_EQ(plan.grid[1], 8u);
  args.kernel = nullptr;
  args = problem(2, 8, 1, 4096, 64);
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK);
  EXPECT_EQ(plan.grid[1], 8u);
  EXPECT_EQ(plan.grid[0], 1u);
}

TEST_F(SplitKv, NoWorkspaceWithoutSplitOrMergeKernels) {
  open({groupedEntry("none", "none"), splitEntry("split")});
  decode();
  // A split kernel but no merge: no split.
  EXPECT_EQ(workspaceSize(), 0u);
}

TEST_F(SplitKv, SplitKernelThenMerge) {
  open(
      {groupedEntry("none", "none"), splitEntry("split"), mergeEntry("merge")});
  decode(/*b=*/1, /*sk=*/4096);
  // B 1, 2 KV heads of 4 rows: 2 programs; 32 key blocks of 128: at most
  // 8 chunks (7 are within 85% of 8's wave; 8 balance them).
  const int64_t splits = chooseNumSplits(2, 32, 132);
  ASSERT_EQ(splits, 8);
  SplitWorkspace w;
  ASSERT_TRUE(splitWorkspace(1, 2, 4, 64, splits, w));
  EXPECT_EQ(workspaceSize(), w.bytes);
  // Without a workspace: the unsplit kernel.
  ASSERT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_OK) << lastError();
  EXPECT_EQ(fakecuda::launches(), 1);
  EXPECT_EQ(fakecuda::lastLaunch().grid[1], 2u);
  // With one: the split kernel, then the merge.
  const uint64_t workspace = kFarAway;
  args.workspace = workspace;
  args.workspace_bytes = w.bytes;
  ASSERT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_OK) << lastError();
  EXPECT_EQ(fakecuda::launches(), 3);
  fakecuda::Launch split = fakecuda::previousLaunch(),
                   merge = fakecuda::lastLaunch();
  EXPECT_EQ(split.symbol, "sdpa_fwd");
  EXPECT_EQ(split.grid[0], 1u);
  EXPECT_EQ(split.grid[1], 2u * splits);
  EXPECT_EQ(split.grid[2], 1u);
  // Its o (params 27-35) is the partial output [1, 2 * 8, 4, 64] f32.
  EXPECT_EQ(launchParam<uint64_t>(split, 27), workspace);
  const int64_t oSizes[4] = {1, 2 * splits, 4, 64};
  const int64_t oStrides[4] = {2 * splits * 4 * 64, 4 * 64, 64, 1};
  for (int dim = 0; dim < 4; ++dim) {
    EXPECT_EQ(launchParam<int64_t>(split, 28 + dim), oSizes[dim]);
    EXPECT_EQ(launchParam<int64_t>(split, 32 + dim), oStrides[dim]);
  }
  // Then scale, lse (the partial log-sum-exps), num_splits.
  EXPECT_EQ(launchParam<uint64_t>(split, 37), workspace + w.partialLseOffset);
  EXPECT_EQ(launchParam<int64_t>(split, 39), 2 * splits);
  EXPECT_EQ(launchParam<int64_t>(split, 43), splits);
  // The merge: one program per 16 rows of each (KV head, batch entry).
  EXPECT_EQ(merge.symbol, "split_merge");
  EXPECT_EQ(merge.grid[0], 1u);
  EXPECT_EQ(merge.grid[1], 2u);
  EXPECT_EQ(merge.grid[2], 1u);
  // o_partial (params 0-6), lse_partial (7-12), num_splits, o (14-20),
  // lse (21-26).
  EXPECT_EQ(launchParam<uint64_t>(merge, 0), workspace);
  EXPECT_EQ(launchParam<int64_t>(merge, 2), 2 * splits);
  EXPECT_EQ(launchParam<uint64_t>(merge, 7), workspace + w.partialLseOffset);
  EXPECT_EQ(launchParam<int64_t>(merge, 13), splits);
  EXPECT_EQ(launchParam<uint64_t>(merge, 14), args.o.data);
  // o as the packed [1, 2, 4, 64] view; no lse asked: a view of no rows.
  EXPECT_EQ(launchParam<int64_t>(merge, 16), 2);
  EXPECT_EQ(launchParam<int64_t>(merge, 17), 4);
  EXPECT_EQ(launchParam<int64_t>(merge, 19), 256);
  EXPECT_EQ(launchParam<int64_t>(merge, 24), 0);
  // num_splits: 1 never splits, n asks for n (at most the key blocks).
  args.num_splits = 1;
  EXPECT_EQ(workspaceSize(), 0u);
  args.num_splits = 3;
  ASSERT_TRUE(splitWorkspace(1, 2, 4, 64, 3, w));
  EXPECT_EQ(workspaceSize(), w.bytes);
  args.num_splits = 1000;
  ASSERT_TRUE(splitWorkspace(1, 2, 4, 64, 32, w));
  EXPECT_EQ(workspaceSize(), w.bytes);
  // On more SMs, more chunks; a full grid none.
  args.num_splits = 0;
  decode(/*b=*/64, /*sk=*/4096);
  EXPECT_EQ(workspaceSize(), 0u);
  // A merge of two programs per block of rows (a block of columns each:
  // the manifest's programs_per_row_block) is launched with twice the x.
  Json wide = mergeEntry("merge");
  wide["programs_per_row_block"] = 2;
  open({groupedEntry("none", "none"), splitEntry("split"), wide});
  decode(/*b=*/1, /*sk=*/4096);
  args.workspace = workspace;
  args.workspace_bytes = workspaceSize();
  ASSERT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_OK) << lastError();
  EXPECT_EQ(fakecuda::lastLaunch().symbol, "split_merge");
  EXPECT_EQ(fakecuda::lastLaunch().grid[0], 2u);
  EXPECT_EQ(fakecuda::lastLaunch().grid[1], 2u);
}

TEST_F(SplitKv, AWaitingMergeIsLaunchedAsTheSplitKernelsDependent) {
  // A merge that waits for the grid before it (waits_prior_grids: its
  // griddepcontrol.wait) goes by cuLaunchKernelEx with programmatic stream
  // serialization; the split kernel, and a merge that does not wait, by
  // cuLaunchKernel.
  Json waiting = mergeEntry("merge", "sm_90a");
  waiting["waits_prior_grids"] = true;
  open({groupedEntry("none", "none"), splitEntry("split"), waiting});
  decode(/*b=*/1, /*sk=*/4096);
  args.workspace = kFarAway;
  args.workspace_bytes = workspaceSize();
  ASSERT_GT(args.workspace_bytes, 0u);
  ASSERT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_OK) << lastError();
  EXPECT_EQ(fakecuda::previousLaunch().symbol, "sdpa_fwd");
  EXPECT_FALSE(fakecuda::previousLaunch().programmatic);
  EXPECT_EQ(fakecuda::lastLaunch().symbol, "split_merge");
  EXPECT_TRUE(fakecuda::lastLaunch().programmatic);
  // The same grid and parameters as a plain launch's.
  EXPECT_EQ(fakecuda::lastLaunch().grid[1], 2u);
  EXPECT_EQ(launchParam<uint64_t>(fakecuda::lastLaunch(), 0), kFarAway);

  open({groupedEntry("none", "none"), splitEntry("split"),
        mergeEntry("merge", "sm_90a")});
  ASSERT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_OK) << lastError();
  EXPECT_EQ(fakecuda::lastLaunch().symbol, "split_merge");
  EXPECT_FALSE(fakecuda::lastLaunch().programmatic);
}

TEST_F(SplitKv, BadWorkspacesAreRefused) {
  open(
      {groupedEntry("none", "none"), splitEntry("split"), mergeEntry("merge")});
  decode(1, 4096);
  const uint64_t bytes = workspaceSize();
  ASSERT_GT(bytes, 0u);
  args.workspace = kFarAway;
  args.workspace_bytes = bytes - 1;
  EXPECT_EQ(ta_sdpa(library.get(), &args, 0, nullptr),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(),
              HasSubstr("workspace_bytes is " + std::to_string(bytes - 1)));
  EXPECT_THAT(lastError(), HasSubstr("needs " + std::to_string(bytes) +
                                     " bytes (ta_sdpa_workspace_size)"));
  args.workspace_bytes = bytes;
  args.workspace = kFarAway + 64;
  EXPECT_EQ(ta_sdpa(library.get(), &args, 0, nullptr),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("workspace must be 256-byte aligned"));
  // Over k.
  args.workspace = args.k.data;
  EXPECT_EQ(ta_sdpa(library.get(), &args, 0, nullptr),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("o_partial overlaps k in memory"));
  args.workspace = kFarAway;
  args.num_splits = -2;
  EXPECT_EQ(ta_sdpa(library.get(), &args, 0, nullptr),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("num_splits is -2"));
  EXPECT_EQ(fakecuda::launches(), 0);
}

TEST_F(SplitKv, ManifestEntriesAreChecked) {
  Json noSplits = splitEntry("split");
  noSplits["params"].erase(noSplits["params"].size() - 1);
  expectOpenError(manifestOf({noSplits}),
                  {"takes the scalar 'num_splits', which field 'params' "
                   "lacks"});
  Json noLse = splitEntry("split");
  noLse["lse"] = false;
  expectOpenError(manifestOf({noLse}), {"'lse' true takes"});
  Json stray = kernelEntry("k");
  stray["params"].push_back(
      {{"name", "num_splits"}, {"kind", "scalar"}, {"type", "i64"}});
  expectOpenError(manifestOf({stray}),
                  {"is the scalar 'num_splits', which only a split-KV"});
  Json mergeWithQ = mergeEntry("m");
  mergeWithQ["params"][0]["name"] = "q";
  expectOpenError(manifestOf({mergeWithQ}),
                  {"one of 'o_partial', 'lse_partial', 'o', 'lse'"});
  // Grid dependency control is sm_90's and later's.
  Json waitingOnAmpere = mergeEntry("m");
  waitingOnAmpere["waits_prior_grids"] = true;
  expectOpenError(manifestOf({waitingOnAmpere}),
                  {"field 'waits_prior_grids' must be false for sm_80"});
  Json notAFlag = mergeEntry("m", "sm_90a");
  notAFlag["waits_prior_grids"] = 1;
  expectOpenError(manifestOf({notAFlag}),
                  {"field 'waits_prior_grids' must be true or false"});
  Json sdpaWithPartial = kernelEntry("k");
  sdpaWithPartial["params"][0]["name"] = "o_partial";
  expectOpenError(manifestOf({sdpaWithPartial}), {"one of 'q', 'k', 'v'"});
}

namespace {

/// A seqused kernel: the standard parameters, then seqused_k (base, size).
Json seqUsedEntry(const std::string &name, const std::string &causal,
                  bool split = false) {
  Json e = split ? splitEntry(name) : groupedEntry(name, causal);
  e["seqused"] = true;
  e["params"].push_back(
      {{"name", "seqused_k"}, {"kind", "base"}, {"type", "ptr"}});
  e["params"].push_back(
      {{"name", "seqused_k"}, {"kind", "size"}, {"dim", 0}, {"type", "i64"}});
  return e;
}

} // namespace

// seqused_k is an optional view of KernelVariant.def's seqused feature (its
// argument): only a seqused kernel takes it, as a rank-1 view, and it must.
TEST_F(SplitKv, SeqUsedViewIsChecked) {
  Json stray = groupedEntry("stray", "none");
  stray["params"].push_back(
      {{"name", "seqused_k"}, {"kind", "base"}, {"type", "ptr"}});
  expectOpenError(manifestOf({stray}),
                  {"belongs to the view 'seqused_k', which only a kernel of "
                   "'seqused' true takes (this one's 'seqused' is absent)"});
  Json lacking = groupedEntry("lacking", "none");
  lacking["seqused"] = true;
  expectOpenError(manifestOf({lacking}),
                  {"a kernel of 'seqused' true takes the view 'seqused_k' "
                   "(the entries' key lengths), whose base field 'params' "
                   "lacks"});
  Json deep = seqUsedEntry("deep", "none");
  deep["params"].push_back(
      {{"name", "seqused_k"}, {"kind", "stride"}, {"dim", 1}, {"type", "i64"}});
  expectOpenError(manifestOf({deep}),
                  {"must be the base, a size or a stride of the rank-1 view "
                   "'seqused_k' (dim 0, no tensor map)"});
}

TEST_F(SplitKv, SeqUsedKernelsRunCallsWithLengthsOnly) {
  open({groupedEntry("none", "none"), seqUsedEntry("none_used", "none"),
        seqUsedEntry("br_used", "bottom_right"),
        seqUsedEntry("split_used", "none", /*split=*/true),
        mergeEntry("merge")});
  decode(/*b=*/2, /*sk=*/4096);
  ta_launch_plan plan;
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK);
  EXPECT_EQ(plan.kernel, 0);
  // With lengths: the seqused kernel, packed (every row one query, which
  // sees every key of its entry), and seqused_k after the standard views.
  const uint64_t lengths = 0x700000000;
  args.seqused_k = lengths;
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
      << lastError();
  EXPECT_EQ(plan.kernel, 1);
  EXPECT_EQ(plan.grid[1], 2u);
  EXPECT_EQ(paramAs<uint64_t>(plan, 37), lengths);
  EXPECT_EQ(paramAs<int64_t>(plan, 38), 2);
  // Several query rows, bottom-right: aligned by each entry's length, so
  // the bottom-right kernel (the band of the longest length says nothing).
  args = problem(2, 8, 4, 4096, 64);
  contiguous(args.k, args.k.data, 2, 2, 4096, 64);
  contiguous(args.v, args.v.data, 2, 2, 4096, 64);
  args.seqused_k = lengths;
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK);
  EXPECT_EQ(plan.kernel, 2);
  // Top-left: no such kernel here.
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan),
            TA_ERROR_NO_KERNEL);
  EXPECT_THAT(lastError(), HasSubstr("with seqused"));
  // A window, misaligned lengths: refused.
  args.mask = TA_MASK_NONE;
  args.window = window(100, 0);
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("seqused_k with a sliding window"));
  args.window = ta_window{};
  args.seqused_k = lengths + 2;
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("seqused_k (int32 key lengths) must be "
                                     "4-byte aligned"));
  // A decode step of batch 1 with lengths splits on the seqused split
  // kernel, which takes the lengths too.
  decode(/*b=*/1, /*sk=*/32768);
  args.seqused_k = lengths;
  fakecuda::Launch split;
  ASSERT_NO_FATAL_FAILURE(runSplit(split));
  EXPECT_EQ(launchParam<int64_t>(split, 43), split.grid[1] / 2);
  EXPECT_EQ(launchParam<uint64_t>(split, 44), lengths);
  EXPECT_EQ(fakecuda::lastLaunch().symbol, "split_merge");
}

namespace {

/// A paged kernel (KernelVariant.def's paged): seqused's, and the block
/// table, a captured rank-2 i32 view, after it; block_n 64.
Json pagedEntry(const std::string &name, const std::string &causal,
                bool split = false) {
  Json e = seqUsedEntry(name, causal, split);
  e["paged"] = true;
  e["schedule"]["block_n"] = 64;
  e["captures"] = Json::array({{{"name", "block_table"},
                                {"function", "paged"},
                                {"kind", "view"},
                                {"dtype", "i32"},
                                {"rank", 2}}});
  e["params"].push_back(
      {{"name", "block_table"}, {"kind", "base"}, {"type", "ptr"}});
  for (int dim = 0; dim < 2; ++dim)
    e["params"].push_back({{"name", "block_table"},
                           {"kind", "size"},
                           {"dim", dim},
                           {"type", "i64"}});
  e["params"].push_back({{"name", "block_table"},
                         {"kind", "stride"},
                         {"dim", 0},
                         {"type", "i64"}});
  return e;
}

/// A paged kernel of vLLM's varlen form: the packed sequences' offsets too.
Json varlenPagedEntry(const std::string &name, const std::string &causal) {
  Json e = pagedEntry(name, causal);
  e["varlen"] = true;
  for (const char *offsets : {"cu_seqlens_q", "cu_seqlens_k"}) {
    e["params"].push_back(
        {{"name", offsets}, {"kind", "base"}, {"type", "ptr"}});
    e["params"].push_back(
        {{"name", offsets}, {"kind", "size"}, {"dim", 0}, {"type", "i64"}});
  }
  return e;
}

} // namespace

TEST_F(SplitKv, PagedKernelsRunCallsWithABlockTableOnly) {
  open({seqUsedEntry("none_used", "none"), pagedEntry("none_paged", "none"),
        pagedEntry("split_paged", "none", /*split=*/true),
        mergeEntry("merge")});
  // A decode step of batch 2 on a cache of 100 pages of 128 keys, 2 KV
  // heads: k and v [100, 2, 128, 64], laid out as vLLM's [100, 128, 2, 64].
  const int64_t pages = 100, pageSize = 128;
  pagedDecode(pages, pageSize);
  const uint64_t lengths = kLengths;
  ta_launch_plan plan;
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
      << lastError();
  EXPECT_EQ(plan.kernel, 1);
  // Packed GQA (a program per KV head) on k's pages as they are.
  EXPECT_EQ(plan.grid[1], 2u);
  EXPECT_EQ(paramAs<int64_t>(plan, 10), pages);
  EXPECT_EQ(paramAs<int64_t>(plan, 12), pageSize);
  EXPECT_EQ(paramAs<uint64_t>(plan, 37), lengths);
  EXPECT_EQ(paramAs<uint64_t>(plan, 39), kFarAway + 0x900000);
  EXPECT_EQ(paramAs<int64_t>(plan, 41), 16); // the table's pages per entry
  // Batch 1 on 256 pages of the table (32k keys): split, the paged split
  // kernel taking the table too, then the merge.
  bindTable(1, 256);
  args.q.sizes[0] = args.o.sizes[0] = 1;
  fakecuda::Launch split;
  ASSERT_NO_FATAL_FAILURE(runSplit(split));
  EXPECT_EQ(split.params.size(), 50u); // the split kernel's, table included
  EXPECT_EQ(launchParam<uint64_t>(split, 44), lengths);
  EXPECT_EQ(launchParam<uint64_t>(split, 46), kFarAway + 0x900000);
  EXPECT_EQ(fakecuda::lastLaunch().symbol, "split_merge");
  args.workspace = args.workspace_bytes = 0;
  bindTable(2, 16);
  args.q.sizes[0] = args.o.sizes[0] = 2;

  // A page size no kernel's block_n divides.
  args.k.sizes[2] = args.v.sizes[2] = 96;
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan),
            TA_ERROR_NO_KERNEL);
  EXPECT_THAT(lastError(), HasSubstr("page_size=96 (paged kernels whose "
                                     "block_n divides it, or of that page "
                                     "size)"));
  args.k.sizes[2] = args.v.sizes[2] = pageSize;
  // v's pages differ from k's.
  args.v.sizes[0] = pages - 1;
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("v has 99 pages but k has 100"));
  args.v.sizes[0] = pages;
  // A table of another batch size, or of another rank or type.
  table.sizes[0] = 3;
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(),
              HasSubstr("block_table has 3 rows but q has batch size 2"));
  table.sizes[0] = 2;
  table.type = TA_CAPTURE_F32;
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("block_table must be a rank-2 int32"));
  table.type = TA_CAPTURE_I32;
  // No lengths.
  args.seqused_k = 0;
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("needs seqused_k"));
  args.seqused_k = lengths;
  // Without a table, k's pages are a batch size: refused as before.
  args.num_captures = 0;
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("k has batch size 100 but q has 2"));

  // vLLM's form: packed query sequences (varlen, q and o [1, H, total, D])
  // against the pages, a table row per sequence; cu_seqlens_k is not read
  // (null) and the table's rows are the sequences'.
  open({seqUsedEntry("none_used", "none"), pagedEntry("none_paged", "none"),
        varlenPagedEntry("varlen_paged", "none")});
  for (ta_tensor *t : {&args.q, &args.o}) {
    t->sizes[0] = 1, t->sizes[2] = 5; // packed [5, 8, 64]
    t->strides[0] = 5 * 8 * 64, t->strides[1] = 64, t->strides[2] = 8 * 64;
  }
  args.varlen = ta_varlen{1, 2, 0x800000000, 0, 4, 1};
  args.num_captures = 1;
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
      << lastError();
  EXPECT_EQ(plan.kernel, 2);
  EXPECT_EQ(plan.grid[2], 2u);
  table.sizes[0] = 3;
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(),
              HasSubstr("block_table has 3 rows but varlen.num_seqs is 2"));
}

TEST_F(SplitKv, GatheringKernelsTakeTheirPageSizeOnly) {
  // A kernel that gathers its key blocks of 64 from pages of 16
  // (schedule.page_size) runs calls with pages of 16 only; one of 16-key
  // blocks takes every multiple of 16. The manifest's order decides
  // between them where both fit.
  Json gathered = pagedEntry("gathered_p16", "none");
  gathered["schedule"]["page_size"] = 16;
  Json blocks16 = pagedEntry("blocks16", "none");
  blocks16["schedule"]["block_n"] = 16;
  open({gathered, blocks16});
  ta_kernel_info info;
  ASSERT_EQ(ta_library_kernel(library.get(), 0, &info), TA_OK);
  EXPECT_EQ(info.page_size, 16);
  EXPECT_EQ(info.block_n, 64);
  ASSERT_EQ(ta_library_kernel(library.get(), 1, &info), TA_OK);
  EXPECT_EQ(info.page_size, 0);
  pagedDecode(/*pages=*/100, /*pageSize=*/16);
  ta_launch_plan plan;
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
      << lastError();
  EXPECT_EQ(plan.kernel, 0);
  // Pages of 32: not the gathering kernel's.
  setPageSize(32);
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
      << lastError();
  EXPECT_EQ(plan.kernel, 1);
  // Pages of 8: neither's.
  setPageSize(8);
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan),
            TA_ERROR_NO_KERNEL);
  EXPECT_THAT(lastError(), HasSubstr("page_size=8"));
  // A page size on a kernel that is not paged, or one block_n does not
  // split into, is a bad manifest entry.
  Json plain = groupedEntry("plain", "none");
  plain["schedule"]["page_size"] = 16;
  writeLibrary(dir, manifestOf({plain}));
  EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("page_size"));
  gathered["schedule"]["page_size"] = 24;
  writeLibrary(dir, manifestOf({gathered}));
  EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("a page size smaller than block_n that "
                                     "divides it"));
}

TEST_F(SplitKv, VarlenDecodeStepsRunAsTheirBatch) {
  // vLLM's decode step: a varlen call against paged caches with one query
  // per sequence (total_q = num_seqs, max_seqlen_q 1) runs on the paged
  // kernels without varlen, as the batch of num_seqs entries it is: packed
  // GQA, and split-KV where it pays.
  open({pagedEntry("none_paged", "none"),
        varlenPagedEntry("varlen_paged", "bottom_right"),
        pagedEntry("split_paged", "none", /*split=*/true),
        mergeEntry("merge")});
  const int64_t pages = 100, pageSize = 128;
  pagedDecode(pages, pageSize);
  // q and o packed [2, 8, 64]: one token per sequence.
  for (ta_tensor *t : {&args.q, &args.o}) {
    t->sizes[0] = 1, t->sizes[2] = 2;
    t->strides[0] = 2 * 8 * 64, t->strides[1] = 64, t->strides[2] = 8 * 64;
  }
  args.varlen = ta_varlen{1, 2, 0x800000000, 0, 1, pages * pageSize};
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  ta_launch_plan plan;
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
      << lastError();
  EXPECT_EQ(plan.kernel, 0);
  // A program per (KV head, sequence); q read as [2, 2, 4, 64]: a token's
  // stride is the batch's, a group of 4 heads a KV head's rows.
  EXPECT_EQ(plan.grid[1], 2u);
  EXPECT_EQ(plan.grid[2], 2u);
  EXPECT_EQ(paramAs<int64_t>(plan, 1), 2);
  EXPECT_EQ(paramAs<int64_t>(plan, 2), 2);
  EXPECT_EQ(paramAs<int64_t>(plan, 3), 4);
  EXPECT_EQ(paramAs<int64_t>(plan, 5), 8 * 64);
  EXPECT_EQ(paramAs<int64_t>(plan, 6), 4 * 64);
  EXPECT_EQ(paramAs<int64_t>(plan, 7), 64);
  // One sequence on 256 pages: split, then the merge.
  bindTable(1, 256);
  for (ta_tensor *t : {&args.q, &args.o})
    t->sizes[2] = 1;
  args.varlen.num_seqs = 1;
  fakecuda::Launch split;
  ASSERT_NO_FATAL_FAILURE(runSplit(split));
  EXPECT_EQ(fakecuda::lastLaunch().symbol, "split_merge");
  args.workspace = args.workspace_bytes = 0;
  // Two queries in one sequence (total_q 2, max_seqlen_q 2), or a top-left
  // mask: the varlen kernel, as given.
  bindTable(2, 16);
  for (ta_tensor *t : {&args.q, &args.o})
    t->sizes[2] = 2;
  args.varlen.num_seqs = 2;
  args.varlen.max_seqlen_q = 2;
  ASSERT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
      << lastError();
  EXPECT_EQ(plan.kernel, 1);
  args.varlen.max_seqlen_q = 1;
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_NE(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK);
  EXPECT_THAT(lastError(), HasSubstr("causal=top_left, varlen (num_seqs=2, "
                                     "max_seqlen_q=1"));
}
