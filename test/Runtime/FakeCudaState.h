//===- FakeCudaState.h - The fake driver's state ----------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_TEST_RUNTIME_FAKECUDASTATE_H
#define TILED_ATTN_TEST_RUNTIME_FAKECUDASTATE_H

#include "FakeCuda.h"

#include <map>
#include <mutex>

namespace fakecuda::detail {

struct Context {
  int device = 0;
  bool destroyed = false;
};

struct Module {
  std::string image;
  CUcontext context = nullptr;
};

struct Function {
  std::string symbol;
  std::vector<unsigned> paramSizes;
};

struct State {
  std::mutex mutex;
  bool initialized = false;
  int initCalls = 0;
  std::vector<std::pair<int, int>> devices = {{9, 0}, {8, 0}};
  std::map<int, Context *> primary;
  std::map<std::string, CUresult> failures;
  int moduleLoads = 0, moduleUnloads = 0, launches = 0;
  std::map<CUcontext, int> loadsPerContext;
  std::string lastImage;
  int maxDynamicShared = 0, funcSetAttributeCalls = 0;
  bool recording = true;
  fakecuda::Launch lastLaunch, previousLaunch;
  int smCount = 132;
  int tensorMapCalls = 0;
  fakecuda::TensorMapCall lastTensorMap;
};

/// The process-wide state (never freed).
State &state();

/// The calling thread's context stack, top last.
extern thread_local std::vector<CUcontext> contextStack;

/// The injected result of `call`, or CUDA_SUCCESS.
CUresult injected(const char *call);

#define FAKE_ENTRY(call)                                                       \
  do {                                                                         \
    if (CUresult r = injected(call))                                           \
      return r;                                                                \
  } while (false)

#define FAKE_NEEDS_INIT()                                                      \
  do {                                                                         \
    if (!state().initialized)                                                  \
      return CUDA_ERROR_NOT_INITIALIZED;                                       \
  } while (false)

} // namespace fakecuda::detail

#endif // TILED_ATTN_TEST_RUNTIME_FAKECUDASTATE_H
