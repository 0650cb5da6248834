//===- BadInputsTest.cpp - Bad inputs give an error and no launch ---------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every bad input of issue 17 through the C API: pointers, shapes, strides,
// outputs that share memory with the inputs, dtypes, damaged kernel files,
// corrupt manifests and devices the library has no kernel for. Each is
// refused by ta_sdpa_plan and by ta_sdpa with the same message (a damaged
// kernel file by ta_sdpa, which loads it), and the fake driver records no
// launch and no module load. The exact wording of most messages is
// ArgsTest's, ManifestTest's and PlanTest's; here the point is that nothing
// runs.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

using namespace tatest;
using testing::HasSubstr;

namespace {

constexpr uint64_t kCuQ = 0x600000000, kCuK = 0x600001000;

/// A varlen kernel of no mask: the standard parameters, then the offsets.
Json varlenEntry(const std::string &name) {
  Json e = kernelEntry(name);
  e["varlen"] = true;
  for (const char *view : {"cu_seqlens_q", "cu_seqlens_k"}) {
    e["params"].push_back({{"name", view}, {"kind", "base"}, {"type", "ptr"}});
    e["params"].push_back(
        {{"name", view}, {"kind", "size"}, {"dim", 0}, {"type", "i64"}});
  }
  return e;
}

/// A kernel that writes the log-sum-exps, of no mask.
Json lseEntry(const std::string &name) {
  Json e = kernelEntry(name);
  e["lse"] = true;
  e["params"].push_back({{"name", "lse"}, {"kind", "base"}, {"type", "ptr"}});
  return e;
}

/// The [1, H, total, D] view of a packed [total, H, D] tensor at `data`.
void packed(ta_tensor &t, uint64_t data, int64_t total, int64_t heads,
            int64_t d) {
  t = ta_tensor{
      data, {1, heads, total, d}, {total * heads * d, d, heads * d, 1}};
}

class BadInputs : public testing::Test {
protected:
  void SetUp() override {
    fakecuda::reset();
    Json d128 = kernelEntry("k128");
    d128["head_dim"] = 128;
    // A 32-bit-index kernel of a lower arch: asked for by name only.
    Json narrow = kernelEntry("narrow");
    narrow["arch"] = "sm_75";
    narrow["index_bits"] = 32;
    narrow["params"] = standardParams("i32");
    writeLibrary(dir, manifestOf({kernelEntry("k64"), d128, narrow,
                                  lseEntry("lse"), varlenEntry("varlen")}));
    ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  }
  void TearDown() override { fakecuda::reset(); }

  /// Expects ta_sdpa_plan (for device 0's capability, 9.0) and ta_sdpa (on
  /// device 0) to fail with `status` and the same message, which holds each
  /// of `parts`, and the fake driver to record no launch and no module load.
  void expectRefused(ta_status status, const std::vector<std::string> &parts) {
    int launches = fakecuda::launches(), loads = fakecuda::moduleLoads();
    ta_launch_plan plan;
    EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), status);
    std::string planned = lastError();
    for (const std::string &part : parts)
      EXPECT_THAT(planned, HasSubstr(part));
    EXPECT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), status);
    EXPECT_EQ(lastError(), planned);
    EXPECT_EQ(fakecuda::launches(), launches);
    EXPECT_EQ(fakecuda::moduleLoads(), loads);
  }
  void expectInvalid(const std::vector<std::string> &parts) {
    expectRefused(TA_ERROR_INVALID_ARGUMENT, parts);
  }

  /// Expects the arguments to launch once.
  void expectLaunch() {
    int launches = fakecuda::launches();
    EXPECT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_OK) << lastError();
    EXPECT_EQ(fakecuda::launches(), launches + 1);
  }

  /// The standard problem with varlen: 4 sequences packed into 500 query
  /// rows and 700 keys of 3 heads.
  void useVarlen() {
    packed(args.q, 0x100000000, 500, 3, 64);
    packed(args.k, 0x200000000, 700, 3, 64);
    packed(args.v, 0x300000000, 700, 3, 64);
    packed(args.o, 0x400000000, 500, 3, 64);
    args.varlen = ta_varlen{1, 4, kCuQ, kCuK, 300, 320};
  }

  TempDir dir;
  Library library;
  ta_sdpa_args args = problem(2, 3, 77, 131, 64);
};

const char *const kViews[4] = {"q", "k", "v", "o"};

ta_tensor &view(ta_sdpa_args &args, int t) {
  ta_tensor *views[4] = {&args.q, &args.k, &args.v, &args.o};
  return *views[t];
}

} // namespace

TEST_F(BadInputs, TheStandardProblemLaunches) {
  expectLaunch();
  useVarlen();
  expectLaunch();
}

TEST_F(BadInputs, NullPointers) {
  for (int t = 0; t < 4; ++t) {
    SCOPED_TRACE(kViews[t]);
    args = problem(2, 3, 77, 131, 64);
    view(args, t).data = 0;
    expectInvalid({std::string(kViews[t]) + " has a null data pointer"});
  }
  EXPECT_EQ(ta_sdpa(library.get(), nullptr, 0, nullptr),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(), "args is null");
  // lse 0 asks for no log-sum-exps: not an error.
  args = problem(2, 3, 77, 131, 64);
  args.lse = 0;
  expectLaunch();
  useVarlen();
  args.varlen.cu_seqlens_q = 0;
  expectInvalid({"varlen.cu_seqlens_q is null"});
  useVarlen();
  args.varlen.cu_seqlens_k = 0;
  expectInvalid({"varlen.cu_seqlens_k is null"});
  EXPECT_EQ(fakecuda::moduleLoads(), 1); // The one launch's.
}

TEST_F(BadInputs, Misaligned) {
  // The kernels load and store 16-byte row pieces (align_bytes 16).
  for (int t = 0; t < 4; ++t) {
    SCOPED_TRACE(kViews[t]);
    args = problem(2, 3, 77, 131, 64);
    view(args, t).data += 2;
    expectInvalid({std::string(kViews[t]) + " cannot be passed to kernel k64",
                   "is not 16-byte aligned"});
    args = problem(2, 3, 77, 131, 64);
    view(args, t).strides[2] = 68; // 136-byte rows
    view(args, t).strides[1] = 68 * view(args, t).sizes[2] + 4;
    view(args, t).strides[0] = 3 * view(args, t).strides[1];
    expectInvalid({"stride along dimension 2 (68 elements) is not a multiple "
                   "of 16 bytes"});
  }
  args = problem(2, 3, 77, 131, 64);
  args.lse = 0x500000002;
  expectInvalid({"lse (the rows' log-sum-exps, float32) must be 4-byte "
                 "aligned, got 0x500000002"});
  useVarlen();
  args.varlen.cu_seqlens_k = kCuK + 2;
  expectInvalid({"varlen.cu_seqlens_k (int32 offsets) must be 4-byte aligned"});
}

TEST_F(BadInputs, Shapes) {
  struct Case {
    std::function<void(ta_sdpa_args &)> change;
    const char *message;
  } cases[] = {
      {[](ta_sdpa_args &a) { a.k.sizes[2] = a.v.sizes[2] = 0; },
       "k has sequence length 0; tiled-attn needs at least one key"},
      {[](ta_sdpa_args &a) { a.v.sizes[0] = -1; },
       "v has a negative size along dimension 0: -1"},
      {[](ta_sdpa_args &a) { a.o.sizes[3] = INT64_MIN; },
       "o has a negative size along dimension 3"},
      {[](ta_sdpa_args &a) { a.k.sizes[0] = a.v.sizes[0] = 1; },
       "k has batch size 1 but q has 2"},
      {[](ta_sdpa_args &a) { a.o.sizes[1] = 4; },
       "o has shape [2, 4, 77, 64] but q has [2, 3, 77, 64]"},
      {[](ta_sdpa_args &a) { a.k.sizes[1] = a.v.sizes[1] = 2; },
       "k has head count 2 but q has 3; q's head count must be a multiple of "
       "k's and v's"},
      {[](ta_sdpa_args &a) { a.v.sizes[2] = 130; },
       "v has sequence length 130 but k has 131"},
      {[](ta_sdpa_args &a) { a.o.sizes[2] = 76; },
       "o has shape [2, 3, 76, 64] but q has [2, 3, 77, 64]"},
      {[](ta_sdpa_args &a) {
         for (ta_tensor *t : {&a.q, &a.k, &a.v, &a.o})
           contiguous(*t, t->data, 2, 3, t->sizes[2], 96);
       },
       "head dim D=96 is not supported; the kernel library has head dims 64, "
       "128"},
      {[](ta_sdpa_args &a) { a.v.sizes[3] = a.o.sizes[3] = 128; },
       "head dim D=64 (D_v=128) is not supported"},
      {[](ta_sdpa_args &a) { a.q.sizes[0] = a.k.sizes[0] = 0; },
       "v has batch size 2 but q has 0"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    args = problem(2, 3, 77, 131, 64);
    c.change(args);
    expectInvalid({c.message});
  }
}

TEST_F(BadInputs, VarlenShapes) {
  struct Case {
    std::function<void(ta_sdpa_args &)> change;
    const char *message;
  } cases[] = {
      {[](ta_sdpa_args &a) { a.varlen.num_seqs = 0; },
       "varlen.num_seqs must be >= 1, got 0"},
      {[](ta_sdpa_args &a) { a.varlen.num_seqs = -3; },
       "varlen.num_seqs must be >= 1, got -3"},
      {[](ta_sdpa_args &a) { a.varlen.max_seqlen_q = 501; },
       "varlen.max_seqlen_q is 501 but q holds 500 query rows in all"},
      {[](ta_sdpa_args &a) { a.varlen.max_seqlen_k = 0; },
       "varlen.max_seqlen_k must be >= 1, got 0"},
      // The total rows of q and o, and of k and v, disagree.
      {[](ta_sdpa_args &a) { packed(a.o, 0x400000000, 499, 3, 64); },
       "o has shape [1, 3, 499, 64] but q has [1, 3, 500, 64]"},
      {[](ta_sdpa_args &a) { packed(a.v, 0x300000000, 699, 3, 64); },
       "v has total length 699 but k has 700"},
      {[](ta_sdpa_args &a) { a.k.sizes[0] = a.v.sizes[0] = 2; },
       "k has batch size 2 but q has 1"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    useVarlen();
    c.change(args);
    expectInvalid({c.message});
  }
}

TEST_F(BadInputs, HugeShapes) {
  // Grid extents.
  args = problem(70000, 1, 77, 131, 64);
  expectInvalid({"q has batch size 70000; tiled-attn launches one block row "
                 "per head and batch entry, at most 65535"});
  // Element offsets past an int64: (2^62 - 1) * 64.
  args = problem(1, 1, 1, 131, 64);
  for (ta_tensor *t : {&args.q, &args.o}) {
    t->sizes[2] = int64_t(1) << 62;
    t->strides[0] = t->strides[1] = 0;
  }
  args.o.data = kFarAway;
  expectInvalid({"q [1, 1, 4611686018427387904, 64] with strides [0, 0, 64, 1] "
                 "at 0x100000000 does not fit the 64-bit address space"});
  // Byte offsets past an int64: 2^62 elements of 2 bytes.
  args = problem(1, 1, 77, 131, 64);
  args.k.sizes[2] = args.v.sizes[2] = 2;
  args.k.strides[2] = int64_t(1) << 62;
  expectInvalid({"k [1, 1, 2, 64] with strides", "does not fit the 64-bit "
                                                 "address space"});
  // Addresses past 2^64 - 1, and below 0.
  args = problem(2, 3, 77, 131, 64);
  args.v.data = UINT64_MAX - 4095;
  expectInvalid({"v [2, 3, 131, 64]", "at 0xfffffffffffff000 does not fit the "
                                      "64-bit address space"});
  args = problem(2, 3, 77, 131, 64);
  args.k.strides[0] = -(int64_t(1) << 40);
  expectInvalid({"k [2, 3, 131, 64]", "does not fit the 64-bit address space"});
  // A 32-bit-index kernel, asked for by name, on offsets past 2^31.
  args = problem(2, 3, 77, 131, 64);
  args.kernel = "narrow";
  args.v.strides[0] = int64_t(1) << 31;
  args.o.data = kFarAway; // Clear of v's 4 GiB.
  expectRefused(TA_ERROR_NO_KERNEL,
                {"64-bit indices (an element offset reaches 2**31)"});
  // The kernels the runtime chooses itself: the 64-bit one.
  args.kernel = nullptr;
  expectLaunch();
  EXPECT_EQ(fakecuda::lastLaunch().params.size(), 37u);
}

TEST_F(BadInputs, OutputsThatShareMemory) {
  // o on q, on k, on v: exactly, or a row into them.
  for (int t = 0; t < 3; ++t)
    for (uint64_t shift : {uint64_t(0), uint64_t(128)}) {
      SCOPED_TRACE(std::string(kViews[t]) + " + " + std::to_string(shift));
      args = problem(2, 3, 77, 77, 64);
      args.o.data = view(args, t).data + shift;
      expectInvalid({std::string("o overlaps ") + kViews[t] + " in memory",
                     "the outputs (o, lse, and split-KV's workspace) must "
                     "not share memory with the inputs (q, k, v, the "
                     "sequences' offsets) nor with each other"});
    }
  // o's last 16 bytes on q's first.
  args = problem(2, 3, 77, 131, 64);
  args.o.data = args.q.data - 2 * 3 * 77 * 64 * 2 + 16;
  expectInvalid({"o overlaps q in memory (o: bytes 0xffff1910 to "
                 "0x10000000f, q: bytes 0x100000000 to 0x10000e6ff)"});
  // o right before q is fine.
  args.o.data -= 16;
  expectLaunch();
  // lse on o, on q; an lse over the sequences' offsets.
  args = problem(2, 3, 77, 131, 64);
  args.lse = args.o.data + 256;
  expectInvalid({"o overlaps lse in memory"});
  args.lse = args.q.data;
  expectInvalid({"lse overlaps q in memory"});
  useVarlen();
  args.o.data = kCuQ - 64;
  expectInvalid({"o overlaps cu_seqlens_q in memory"});
  // Inputs may share memory: k and v one tensor, q too.
  args = problem(2, 3, 77, 77, 64);
  args.k.data = args.v.data = args.q.data;
  expectLaunch();
}

TEST_F(BadInputs, OutputsWhoseElementsShareAnAddress) {
  const char *shares = "has elements that share an address; the kernels "
                       "write each element of the output once";
  // A broadcast output (stride 0), along each dimension.
  for (int dim = 0; dim < 4; ++dim) {
    SCOPED_TRACE(dim);
    args = problem(2, 3, 77, 131, 64);
    args.o.strides[dim] = 0;
    expectInvalid({std::string("o [2, 3, 77, 64] with strides"), shares});
  }
  // Rows that overlap their neighbours; heads that overlap.
  args = problem(2, 3, 77, 131, 64);
  args.o.strides[2] = 32;
  expectInvalid({"with strides [14784, 4928, 32, 1]", shares});
  args = problem(2, 3, 77, 131, 64);
  args.o.strides[1] = 64 * 76;
  expectInvalid({shares});
  // A broadcast input is fine (GQA-style k and v, one batch entry).
  args = problem(2, 3, 77, 131, 64);
  args.k.strides[0] = args.v.strides[0] = 0;
  expectLaunch();
  // Layouts that do not overlap are fine: transposed ([B, S, H, D]),
  // padded, reversed along S.
  args = problem(2, 3, 77, 131, 64);
  args.o.strides[0] = 77 * 3 * 64;
  args.o.strides[1] = 64;
  args.o.strides[2] = 3 * 64;
  expectLaunch();
  args = problem(2, 3, 77, 131, 64);
  args.o.strides[2] = 72;
  args.o.strides[1] = 77 * 72;
  args.o.strides[0] = 3 * 77 * 72;
  expectLaunch();
  args = problem(2, 3, 77, 131, 64);
  args.o.data += 76 * 64 * 2;
  args.o.strides[2] = -64;
  expectLaunch();
}

TEST_F(BadInputs, Strides) {
  for (int t = 0; t < 4; ++t) {
    SCOPED_TRACE(kViews[t]);
    args = problem(2, 3, 77, 131, 64);
    view(args, t).strides[3] = 2;
    view(args, t).strides[2] = 128;
    view(args, t).strides[1] *= 2;
    view(args, t).strides[0] *= 2;
    expectInvalid({std::string(kViews[t]) + " cannot be passed to kernel k64",
                   "its last-dimension stride is 2, not 1"});
  }
  // A zero last-dimension stride of o is an overlap first.
  args = problem(2, 3, 77, 131, 64);
  args.o.strides[3] = 0;
  expectInvalid({"o [2, 3, 77, 64] with strides [14784, 4928, 64, 0] has "
                 "elements that share an address"});
  args = problem(2, 3, 77, 131, 64);
  args.q.strides[3] = -1;
  expectInvalid({"q cannot be passed to kernel k64 as it is: its "
                 "last-dimension stride is -1, not 1"});
}

TEST_F(BadInputs, TmaStrides) {
  // A kernel that loads k through a TMA descriptor: 16-byte byte strides.
  Json e = kernelEntry("tma");
  e["arch"] = "sm_90a";
  e["align_bytes"] = 2;
  e["params"] = Json::array({{{"name", "k"},
                              {"kind", "tensor_map"},
                              {"type", "tensor_map"},
                              {"box", {64, 64}},
                              {"swizzle", 128}}});
  writeLibrary(dir, manifestOf({e}));
  ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  args.k.strides[2] = 68;
  args.k.strides[1] = 68 * 131;
  args.k.strides[0] = 3 * 68 * 131;
  expectInvalid({"k's stride along dimension 2 (68 elements, 136 bytes) is "
                 "not a multiple of 16 bytes, which the TMA descriptor of "
                 "kernel tma needs"});
  args = problem(2, 3, 77, 131, 64);
  args.k.data += 8;
  expectInvalid({"k's data pointer 0x200000008 is not 16-byte aligned"});
  args = problem(2, 3, 77, 131, 64);
  args.k.strides[2] = -64;
  args.k.data += 130 * 64 * 2;
  expectInvalid({"k's stride along dimension 2 (-64 elements) must be "
                 "positive"});
  EXPECT_EQ(fakecuda::moduleLoads(), 0);
}

TEST_F(BadInputs, Dtypes) {
  for (int dtype : {-1, 2, 3, 255, INT32_MAX}) {
    SCOPED_TRACE(dtype);
    args.dtype = static_cast<ta_dtype>(dtype);
    expectInvalid({"dtype must be TA_DTYPE_F16 (0) or TA_DTYPE_BF16 (1), got " +
                   std::to_string(dtype)});
  }
  // bf16 is a dtype, which this library has no kernel of.
  args.dtype = TA_DTYPE_BF16;
  expectRefused(TA_ERROR_NO_KERNEL, {"no kernel in the library for sm_90, "
                                     "bf16, D=64, causal=none"});
  args.dtype = TA_DTYPE_F16;
  args.mask = static_cast<ta_mask>(3);
  expectInvalid({"mask must be TA_MASK_NONE (0)"});
  EXPECT_EQ(fakecuda::moduleLoads(), 0);
}

TEST_F(BadInputs, UnknownArchitecture) {
  Json hopper = kernelEntry("hopper");
  hopper["arch"] = "sm_90a";
  Json blackwell = kernelEntry("blackwell");
  blackwell["arch"] = "sm_100f";
  writeLibrary(dir, manifestOf({blackwell, hopper}));
  ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  int launches = fakecuda::launches();
  // Device 1 is an sm_80.
  EXPECT_EQ(ta_sdpa(library.get(), &args, 1, nullptr), TA_ERROR_NO_KERNEL);
  EXPECT_EQ(lastError(), "no kernel in the library for sm_80, f16, D=64, "
                         "causal=none (library " +
                             dir.path() +
                             ": none of its kernels runs on a device of "
                             "compute capability 8.0: it has kernels for "
                             "sm_90a, sm_100f only)");
  EXPECT_EQ(fakecuda::launches(), launches);
  EXPECT_EQ(fakecuda::moduleLoads(), 0);
  ta_launch_plan plan;
  const std::pair<int, int> capabilities[] = {{7, 5}, {9, 1}, {12, 0}};
  for (auto [major, minor] : capabilities) {
    EXPECT_EQ(ta_sdpa_plan(library.get(), &args, major, minor, &plan),
              TA_ERROR_NO_KERNEL);
    EXPECT_THAT(lastError(),
                HasSubstr("compute capability " + std::to_string(major) + "." +
                          std::to_string(minor) +
                          ": it has kernels for sm_90a, sm_100f only"));
  }
  // Where some kernel runs, the message lists the kernels as before.
  args.dtype = TA_DTYPE_BF16;
  EXPECT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_ERROR_NO_KERNEL);
  EXPECT_THAT(lastError(), HasSubstr("available: blackwell (sm_100f, f16, "
                                     "D=64, causal=none); hopper (sm_90a"));
}

TEST_F(BadInputs, ALargeLibraryIsSummarized) {
  std::vector<Json> entries;
  for (int i = 0; i < 20; ++i) {
    Json e = kernelEntry("k" + std::to_string(i));
    e["arch"] = i % 2 ? "sm_90a" : "sm_80";
    e["dtype"] = i % 4 < 2 ? "f16" : "bf16";
    e["head_dim"] = i < 10 ? 64 : 128;
    entries.push_back(e);
  }
  writeLibrary(dir, manifestOf(entries));
  ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  expectRefused(TA_ERROR_NO_KERNEL,
                {"no kernel in the library for sm_90, f16, D=64, "
                 "causal=top_left (library " +
                 dir.path() +
                 ": 20 kernels for sm_80, sm_90a; f16, bf16; D=64, 128 "
                 "(ta_library_kernel describes each))"});
}

TEST_F(BadInputs, DamagedKernelFiles) {
  Json e = kernelEntry("k");
  e["cubin"] = {{"sm_90", "k.sm_90.cubin"}};
  writeLibrary(dir, manifestOf({e}));
  ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  std::string garbage = std::string("\x01\x02\0\xff garbage", 12);
  int launches = fakecuda::launches();
  // A cubin of garbage bytes, for device 0 (9.0). Planning reads no file.
  dir.write("k.sm_90.cubin", garbage);
  EXPECT_EQ(ta_sdpa(library.get(), &args, 0, nullptr), TA_ERROR_LIBRARY);
  EXPECT_EQ(lastError(), "kernel file " + dir.path() +
                             "/k.sm_90.cubin is damaged: it is not a cubin: "
                             "it does not start with an ELF header; rebuild "
                             "the kernel library");
  // PTX of garbage bytes, for device 1 (8.0, no cubin).
  dir.write("k.ptx", garbage);
  EXPECT_EQ(ta_sdpa(library.get(), &args, 1, nullptr), TA_ERROR_LIBRARY);
  EXPECT_EQ(lastError(), "kernel file " + dir.path() +
                             "/k.ptx is damaged: it is not PTX text: it "
                             "holds a NUL byte at offset 2; rebuild the "
                             "kernel library");
  // Emptied after the library opened.
  dir.write("k.ptx", "");
  EXPECT_EQ(ta_sdpa(library.get(), &args, 1, nullptr), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("k.ptx is damaged: it is empty"));
  EXPECT_EQ(fakecuda::launches(), launches);
  EXPECT_EQ(fakecuda::moduleLoads(), 0);
  // A failed load is not remembered: the repaired file runs.
  writeLibrary(dir, manifestOf({e}));
  expectLaunch();
  // An empty file is refused when the library opens.
  dir.write("k.sm_90.cubin", "");
  EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("kernel #0 (k): field 'cubin.sm_90' "
                                     "names k.sm_90.cubin, which is empty"));
}

TEST_F(BadInputs, ManifestFilesThatAreNotManifests) {
  struct Case {
    std::string text;
    const char *message;
  } cases[] = {
      {"", "is not valid JSON: parse error at line 1, column 1"},
      {std::string("\0\x01\x02\xff", 4), "is not valid JSON"},
      {"\xff\xfe{}", "is not valid JSON"},
      {"[{\"version\": 2}]", "expected a JSON object at the top, got array"},
      {"\"manifest\"", "expected a JSON object at the top, got string"},
      {"null", "expected a JSON object at the top, got null"},
      {"{\"version\": 2, \"kernels\": null}",
       "field 'kernels' must be a list, got null"},
      {"{\"version\": 2, \"kernels\": [null]}",
       "kernel #0: expected an object, got null"},
      {"{\"version\": 2.0, \"kernels\": []}",
       "unsupported manifest version 2.0"},
      {"{\"version\": -2, \"kernels\": []}", "unsupported manifest version -2"},
      {"{\"version\": 18446744073709551615, \"kernels\": []}",
       "unsupported manifest version 18446744073709551615"},
      {"{\"version\": 1e400, \"kernels\": []}", "number overflow"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    dir.write("manifest.json", c.text);
    EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
    EXPECT_THAT(lastError(), HasSubstr(dir.path() + "/manifest.json"));
    EXPECT_THAT(lastError(), HasSubstr(c.message));
  }
  // A manifest.json that is a folder.
  TempDir other;
  other.write("manifest.json/x", "");
  EXPECT_EQ(library.open(other.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("manifest.json is missing"));
}

TEST_F(BadInputs, DeeplyNestedJsonDoesNotCrash) {
  // A million levels, where the parser would copy (by recursion) what it
  // has read so far: refused past 64 levels, while it is parsed.
  const int depth = 1000000;
  std::string nested = std::string(depth, '[') + std::string(depth, ']');
  for (const char *format :
       {"{\"version\": %s, \"kernels\": []}",
        "{\"version\": 2, \"kernels\": %s}",
        "{\"version\": 2, \"kernels\": [], \"x\": %s, \"y\": 1}"}) {
    SCOPED_TRACE(format);
    std::string text = format;
    text.replace(text.find("%s"), 2, nested);
    dir.write("manifest.json", text);
    EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
    EXPECT_EQ(lastError(), dir.path() + "/manifest.json is not a manifest: "
                                        "its JSON nests more than 64 levels "
                                        "deep");
  }
  // As a kernel's field, 60 levels: read, and refused by the field.
  Json entry = kernelEntry("k");
  std::string text = manifestOf({entry}).dump();
  text.replace(text.find("\"head_dim\":64"), 13,
               "\"head_dim\":" + std::string(60, '[') + std::string(60, ']'));
  dir.write("manifest.json", text);
  EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("kernel #0 (k): field 'head_dim' must be "
                                     "an integer >= 1, got [[[["));
}

TEST_F(BadInputs, TruncatedManifestsAreRefused) {
  Json manifest = manifestOf({kernelEntry("k0"), varlenEntry("v")});
  writeLibrary(dir, manifest);
  std::string text = manifest.dump();
  // Cut every 37 bytes, and in each of the last 40.
  for (size_t length = 0; length < text.size();
       length += length + 40 < text.size() ? 37 : 1) {
    dir.write("manifest.json", text.substr(0, length));
    ASSERT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY) << length;
    ASSERT_THAT(lastError(), HasSubstr("is not valid JSON")) << length;
  }
  dir.write("manifest.json", text);
  EXPECT_EQ(library.open(dir.path()), TA_OK) << lastError();
}

TEST_F(BadInputs, FieldsOfEveryWrongType) {
  // Each field of an entry replaced by values of other types and by
  // numbers out of range: a TA_ERROR_LIBRARY naming the field, or (for an
  // optional field that ignores it) an open library; never a crash.
  const Json values[] = {nullptr,
                         true,
                         -1,
                         0,
                         int64_t(1) << 40,
                         uint64_t(18446744073709551615ull),
                         1e300,
                         -0.5,
                         "",
                         "sm_80",
                         Json::array(),
                         Json::array({1, 2, 3}),
                         Json::object(),
                         Json::parse("[[[[[[[[[[]]]]]]]]]]")};
  Json entry = kernelEntry("k");
  int refused = 0;
  for (const auto &[field, good] : entry.items()) {
    for (const Json &value : values) {
      SCOPED_TRACE(field + " = " + value.dump());
      Json bad = entry;
      bad[field] = value;
      writeLibrary(dir, manifestOf({bad}));
      ta_status status = library.open(dir.path());
      if (status == TA_OK)
        continue;
      ++refused;
      EXPECT_EQ(status, TA_ERROR_LIBRARY);
      EXPECT_THAT(lastError(), HasSubstr(dir.path() + "/manifest.json"));
      EXPECT_THAT(lastError(), HasSubstr("field '" + field));
    }
  }
  EXPECT_GT(refused, 100);
}
