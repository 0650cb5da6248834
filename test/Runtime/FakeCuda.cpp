//===- FakeCuda.cpp - A fake CUDA driver for the runtime's tests ----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// See FakeCuda.h. Device memory is host memory; kernels do nothing but be
// recorded. Every entry point can be made to fail with fakecuda::fail.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaState.h"

#include <cstring>

using namespace fakecuda::detail;

State &fakecuda::detail::state() {
  static State *s = new State;
  return *s;
}

thread_local std::vector<CUcontext> fakecuda::detail::contextStack;

CUresult fakecuda::detail::injected(const char *call) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.failures.find(call);
  return it == s.failures.end() ? CUDA_SUCCESS : it->second;
}

//===----------------------------------------------------------------------===//
// Control functions.
//===----------------------------------------------------------------------===//

void fakecuda::setDevices(const std::vector<std::pair<int, int>> &caps) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().devices = caps;
}

void fakecuda::reset() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.failures.clear();
  s.initCalls = s.moduleLoads = s.moduleUnloads = s.launches = 0;
  s.loadsPerContext.clear();
  s.lastImage.clear();
  s.maxDynamicShared = s.funcSetAttributeCalls = s.tensorMapCalls = 0;
  s.recording = true;
  s.lastLaunch = s.previousLaunch = Launch();
  s.smCount = 132;
  s.lastTensorMap = TensorMapCall();
}

void fakecuda::fail(const std::string &call, CUresult result) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (result == CUDA_SUCCESS)
    state().failures.erase(call);
  else
    state().failures[call] = result;
}

void fakecuda::setRecording(bool on) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().recording = on;
}

CUcontext fakecuda::createContext(int device) {
  auto *context = new Context;
  context->device = device;
  return reinterpret_cast<CUcontext>(context);
}

void fakecuda::destroyContext(CUcontext context) {
  reinterpret_cast<Context *>(context)->destroyed = true;
}

void fakecuda::setCurrent(CUcontext context) {
  if (contextStack.empty())
    contextStack.push_back(context);
  else
    contextStack.back() = context;
}

CUcontext fakecuda::current() {
  return contextStack.empty() ? nullptr : contextStack.back();
}

CUcontext fakecuda::primaryContext(int device) {
  std::lock_guard<std::mutex> lock(state().mutex);
  Context *&context = state().primary[device];
  if (!context) {
    context = new Context;
    context->device = device;
  }
  return reinterpret_cast<CUcontext>(context);
}

#define FAKE_COUNTER(name, field)                                              \
  int fakecuda::name() {                                                       \
    std::lock_guard<std::mutex> lock(state().mutex);                           \
    return state().field;                                                      \
  }
FAKE_COUNTER(initCalls, initCalls)
FAKE_COUNTER(moduleLoads, moduleLoads)
FAKE_COUNTER(moduleUnloads, moduleUnloads)
FAKE_COUNTER(launches, launches)
FAKE_COUNTER(maxDynamicShared, maxDynamicShared)
FAKE_COUNTER(funcSetAttributeCalls, funcSetAttributeCalls)
FAKE_COUNTER(tensorMapCalls, tensorMapCalls)

std::string fakecuda::lastModuleImage() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().lastImage;
}

int fakecuda::moduleLoads(CUcontext context) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().loadsPerContext[context];
}

fakecuda::Launch fakecuda::lastLaunch() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().lastLaunch;
}

fakecuda::Launch fakecuda::previousLaunch() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().previousLaunch;
}

void fakecuda::setSmCount(int count) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().smCount = count;
}

fakecuda::TensorMapCall fakecuda::lastTensorMap() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().lastTensorMap;
}

//===----------------------------------------------------------------------===//
// The last launch for callers without C++ (the Python tests, by ctypes).
//===----------------------------------------------------------------------===//

extern "C" __attribute__((visibility("default"))) void
fakecuda_last_launch_grid(unsigned grid[3]) {
  fakecuda::Launch launch = fakecuda::lastLaunch();
  for (int i = 0; i < 3; ++i)
    grid[i] = launch.grid[i];
}

extern "C" __attribute__((visibility("default"))) int
fakecuda_last_launch_param(int index, void *out, int capacity) {
  fakecuda::Launch launch = fakecuda::lastLaunch();
  if (index < 0 || index >= static_cast<int>(launch.params.size()))
    return -1;
  const std::vector<unsigned char> &bytes = launch.params[index];
  int size = static_cast<int>(bytes.size());
  if (size <= capacity)
    std::memcpy(out, bytes.data(), bytes.size());
  return size;
}
