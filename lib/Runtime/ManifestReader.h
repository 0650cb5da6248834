//===- ManifestReader.h - Checked access to manifest fields -----*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Typed access to the fields of one JSON object of the manifest. Every
// failure is a TA_ERROR_LIBRARY that starts with `where` (the manifest path
// and the kernel's number and name) and names the field, what it must be
// and what it is.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_LIB_RUNTIME_MANIFESTREADER_H
#define TILED_ATTN_LIB_RUNTIME_MANIFESTREADER_H

#include "Manifest.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tiled_attn::runtime {

using Json = nlohmann::ordered_json;

/// A JSON value as the message shows it (shortened when long).
std::string showJson(const Json &value);

/// Reads the fields of `object`, the entry (or part of one) that `where`
/// names; `prefix` goes before each field name ("params[2]." for a
/// parameter's fields).
class FieldReader {
public:
  FieldReader(const Json &object, const std::string &where,
              std::string prefix = "")
      : object_(object), where_(where), prefix_(std::move(prefix)) {}

  const std::string &where() const { return where_; }
  /// The full name of field `key`, e.g. "params[2].dim".
  std::string field(const std::string &key) const { return prefix_ + key; }

  /// "<where>: field '<key>' must be <expected>, got <value>".
  Status fail(const std::string &key, const std::string &expected,
              const Json &value) const;
  /// "<where>: missing field '<key>'".
  Status missing(const std::string &key) const;

  /// The field, or null when absent.
  const Json *find(const std::string &key) const;

  /// A non-empty string.
  Status string(const std::string &key, std::string &out) const;
  /// One of `choices`; `index` is its position.
  Status choice(const std::string &key,
                const std::vector<const char *> &choices, int &index) const;
  /// true or false; false when absent.
  Status flag(const std::string &key, bool &out) const;
  /// An integer in [minimum, maximum]; `fallback` when absent, if given.
  Status integer(const std::string &key, int64_t minimum, int64_t maximum,
                 int64_t &out, const int64_t *fallback = nullptr) const;

private:
  const Json &object_;
  const std::string &where_;
  std::string prefix_;
};

/// Whether `value` is an integer in [minimum, maximum] (stored in `out`).
bool readInteger(const Json &value, int64_t minimum, int64_t maximum,
                 int64_t &out);

/// Reads `entry`'s "params" into `kernel.params` and lays them out.
Status readParams(const FieldReader &entry, KernelEntry &kernel);

} // namespace tiled_attn::runtime

#endif // TILED_ATTN_LIB_RUNTIME_MANIFESTREADER_H
