//===- KernelVariant.cpp - What a kernel computes -------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Kernels/KernelVariant.h"

#include <algorithm>
#include <iterator>

using namespace tiled_attn;

std::optional<KernelMask> tiled_attn::parseKernelMask(std::string_view name) {
  for (size_t i = 0; i < std::size(kKernelMaskNames); ++i)
    if (name == kKernelMaskNames[i])
      return static_cast<KernelMask>(i);
  return std::nullopt;
}

bool KernelVariant::operator==(const KernelVariant &other) const {
  return mask == other.mask &&
         kernelFeatureBits(*this) == kernelFeatureBits(other) &&
         functions == other.functions;
}

std::string tiled_attn::kernelVariantGrammar() {
  std::string text = "<";
  for (const char *mask : kKernelMaskNames)
    text += std::string(text.size() > 1 ? "|" : "") + mask;
  text += ">";
  for (const KernelFeature &feature : kKernelFeatures)
    text += std::string("[_") + feature.name + "]";
  return text + "[+function...]";
}

/// A C identifier: how the manifest and the callers name a function.
static bool isIdentifier(std::string_view name) {
  auto alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  auto alnum = [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); };
  return !name.empty() && alpha(name.front()) &&
         std::all_of(name.begin(), name.end(), alnum);
}

/// Removes `word` from the front of `text` if it is there as a whole word:
/// followed by '_', '+' or nothing.
static bool consumeWord(std::string_view &text, std::string_view word) {
  if (text.substr(0, word.size()) != word ||
      (text.size() > word.size() && text[word.size()] != '_' &&
       text[word.size()] != '+'))
    return false;
  text.remove_prefix(word.size());
  return true;
}

std::optional<KernelVariant>
tiled_attn::parseKernelVariant(std::string_view name) {
  KernelVariant variant;
  std::string_view rest = name;
  std::optional<KernelMask> mask;
  for (size_t i = 0; i < std::size(kKernelMaskNames) && !mask; ++i)
    if (consumeWord(rest, kKernelMaskNames[i]))
      mask = static_cast<KernelMask>(i);
  if (!mask)
    return std::nullopt;
  variant.mask = *mask;
  for (const KernelFeature &feature : kKernelFeatures)
    variant.*feature.member =
        consumeWord(rest, std::string("_") + feature.name);
  if (!rest.empty() && rest.front() == '+') {
    rest.remove_prefix(1);
    while (true) {
      size_t plus = rest.find('+');
      std::string_view function = rest.substr(0, plus);
      if (!isIdentifier(function) ||
          std::find(variant.functions.begin(), variant.functions.end(),
                    function) != variant.functions.end())
        return std::nullopt;
      variant.functions.emplace_back(function);
      if (plus == std::string_view::npos)
        break;
      rest.remove_prefix(plus + 1);
    }
    rest = {};
  }
  if (!rest.empty())
    return std::nullopt;
  return variant;
}

std::string tiled_attn::kernelVariantName(const KernelVariant &variant) {
  std::string name = kernelMaskName(variant.mask);
  for (const KernelFeature &feature : kKernelFeatures)
    if (variant.*feature.member)
      name += std::string("_") + feature.name;
  for (const std::string &function : variant.functions)
    name += "+" + function;
  return name;
}

std::string tiled_attn::kernelFeaturesText(const KernelVariant &variant) {
  std::string text;
  for (const KernelFeature &feature : kKernelFeatures)
    if (variant.*feature.member)
      text += std::string(", ") + feature.name;
  return text;
}

bool tiled_attn::kernelFeaturesFit(const KernelVariant &kernel,
                                   const KernelVariant &asked) {
  for (const KernelFeature &feature : kKernelFeatures) {
    bool has = kernel.*feature.member, wants = asked.*feature.member;
    if (feature.use == FeatureUse::Exact ? has != wants : wants && !has)
      return false;
  }
  return true;
}

int tiled_attn::kernelExtraOutputs(const KernelVariant &kernel,
                                   const KernelVariant &asked) {
  int extra = 0;
  for (const KernelFeature &feature : kKernelFeatures)
    if (feature.use == FeatureUse::Output && kernel.*feature.member &&
        !(asked.*feature.member))
      ++extra;
  return extra;
}
