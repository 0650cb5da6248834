//===- TestLibrary.h - Kernel libraries for the runtime's tests -*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Small kernel libraries written to temporary folders: a manifest built from
// JSON entries, and for each kernel a PTX-like file whose ".entry" declares
// the parameters of its manifest entry (so that the fake driver copies each
// parameter's bytes at launch). And the arguments of a contiguous
// [B, H, S, D] problem at made-up device addresses.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_TEST_RUNTIME_TESTLIBRARY_H
#define TILED_ATTN_TEST_RUNTIME_TESTLIBRARY_H

#include "tiled_attn/Runtime/TiledAttn.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tatest {

using Json = nlohmann::ordered_json;

/// A temporary folder, removed with its contents on destruction.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  /// Writes `text` to `path()/name` (creating folders).
  void write(const std::string &name, const std::string &text) const;

private:
  std::string path_;
};

/// The parameters of the standard ABI: for q, k, v, o the base pointer,
/// sizes[0..3] and strides[0..3] (`indexType` "i32" or "i64"), then scale.
Json standardParams(const std::string &indexType = "i64");

/// A valid manifest entry: sm_80, f16, D=64, no mask, 64-bit indices, the
/// standard parameters, block 128, block_m 64, 16 KiB of shared memory.
Json kernelEntry(const std::string &name);

/// The PTX-like text of a kernel taking `params` (an entry's "params").
std::string fakePtx(const std::string &symbol, const Json &params,
                    const std::string &marker = "ptx");

/// What a fake cubin starts with: an ELF header's magic, which the runtime
/// checks (no NUL byte: the fake driver reads the image as text).
constexpr const char *kFakeCubinHeader = "\x7f"
                                         "ELF\n";

/// Writes `manifest` to `dir` and, for each entry with a "ptx" field, the
/// fake PTX file it names (and its cubins, marked by arch, after
/// kFakeCubinHeader) unless `writeImages` is false.
void writeLibrary(const TempDir &dir, const Json &manifest,
                  bool writeImages = true);

/// {"version": 2, "generator": "test", "kernels": [entries...]}.
Json manifestOf(const std::vector<Json> &entries);

/// An open library that closes itself.
class Library {
public:
  Library() = default;
  ~Library() { ta_library_close(library_); }
  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;

  /// ta_library_open(dir); the status.
  ta_status open(const std::string &dir);
  ta_library *get() const { return library_; }
  void close() {
    ta_library_close(library_);
    library_ = nullptr;
  }

private:
  ta_library *library_ = nullptr;
};

/// Arguments of a contiguous problem, f16, no mask, scale 1/8, q/k/v/o at
/// distinct 256-byte aligned addresses 4 GiB apart (0x100000000 to
/// 0x400000000).
ta_sdpa_args problem(int64_t b, int64_t h, int64_t sq, int64_t sk, int64_t d);

/// An address 1 TiB up, for an output clear of inputs that span more than
/// problem()'s 4 GiB (the runtime refuses an output that overlaps them).
constexpr uint64_t kFarAway = uint64_t(1) << 40;

/// Sets a contiguous [B, H, S, D] view.
void contiguous(ta_tensor &t, uint64_t data, int64_t b, int64_t h, int64_t s,
                int64_t d);

/// The value of parameter `i` of `plan`, read as T.
template <typename T> T paramAs(const ta_launch_plan &plan, int i) {
  T value;
  __builtin_memcpy(&value, plan.param_data + plan.param_offsets[i], sizeof(T));
  return value;
}

/// ta_last_error() as a string.
std::string lastError();

/// Opens a library of `manifest` and expects TA_ERROR_LIBRARY with a message
/// holding the manifest path and each of `parts`.
void expectOpenError(const Json &manifest,
                     const std::vector<std::string> &parts,
                     bool writeImages = true);

/// A captured view `name` of `type` at `data`, of the given sizes and
/// strides (its rank is their count).
ta_capture viewCapture(const char *name, ta_capture_type type, uint64_t data,
                       const std::vector<int64_t> &sizes,
                       const std::vector<int64_t> &strides);

/// The path of the fake driver (also in $TILED_ATTN_LIBCUDA during tests).
const char *fakeCudaPath();

/// A window of FlashAttention's window_size (left, right), enabled.
ta_window window(int64_t left, int64_t right, bool bottomRight = false);

/// A fixture that opens a library of fake entries and plans `args` (the
/// standard problem: B 2, H 3, S_q 77, S_k 131, D 64) on it.
class ChoiceTest : public testing::Test {
protected:
  void open(const std::vector<Json> &entries);
  /// The name of the kernel planned for capability cc, or
  /// "error <status>: <message>".
  std::string chosen(int major = 9, int minor = 0);

  TempDir dir;
  Library library;
  ta_sdpa_args args = problem(2, 3, 77, 131, 64);
  ta_launch_plan plan;
};

} // namespace tatest

#endif // TILED_ATTN_TEST_RUNTIME_TESTLIBRARY_H
