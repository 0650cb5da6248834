//===- TargetInfo.cpp - What the compiler knows of each chip --------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Target/TargetInfo.h"

#include "llvm/ADT/STLExtras.h"

using namespace tiled_attn;
using tilegpu::Family;

namespace {

/// Shared memory per block from the CUDA programming guide's table of
/// compute capabilities (the opt-in maximum).
const TargetInfo kTargets[] = {
    {"sm_80", {Family::MmaSync}, "+ptx80", 163 * 1024},
    {"sm_86", {Family::MmaSync}, "+ptx80", 99 * 1024},
    {"sm_89", {Family::MmaSync}, "+ptx80", 99 * 1024},
    {"sm_90", {Family::MmaSync}, "+ptx80", 227 * 1024, 65536, 255, true},
    {"sm_90a",
     {Family::Wgmma, Family::MmaSync},
     "+ptx80",
     227 * 1024,
     65536,
     255,
     true,
     true},
    {"sm_100a",
     {Family::Tcgen05, Family::MmaSync},
     "+ptx86",
     227 * 1024,
     65536,
     255,
     true,
     true},
    // B200 and B300 (10.0 and 10.3) both run sm_100f code.
    {"sm_100f",
     {Family::Tcgen05, Family::MmaSync},
     "+ptx88",
     227 * 1024,
     65536,
     255,
     true,
     true,
     "sm_100a"},
    {"sm_120a", {Family::MmaSync}, "+ptx87", 99 * 1024, 65536, 255, true},
    {"sm_121a", {Family::MmaSync}, "+ptx88", 99 * 1024, 65536, 255, true},
};

} // namespace

std::optional<TargetInfo> TargetInfo::lookup(llvm::StringRef chip) {
  for (const TargetInfo &t : kTargets)
    if (t.chip == chip)
      return t;
  return std::nullopt;
}

std::string TargetInfo::knownChips() {
  std::string s;
  for (const TargetInfo &t : kTargets)
    s += (s.empty() ? "" : ", ") + t.chip.str();
  return s;
}
