//===- Status.h - Errors of the runtime library -----------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every fallible function of the runtime returns a Status: TA_OK, or a
// ta_status code with the message that ta_last_error() will show. A
// successful Status holds an empty string and costs no allocation, so the
// launch path can return them freely.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_LIB_RUNTIME_STATUS_H
#define TILED_ATTN_LIB_RUNTIME_STATUS_H

#include "tiled_attn/Runtime/TiledAttn.h"

#include <sstream>
#include <string>
#include <utility>

namespace tiled_attn::runtime {

/// TA_OK, or an error code and its message.
class [[nodiscard]] Status {
public:
  Status() = default;

  static Status error(ta_status code, std::string message) {
    Status status;
    status.code_ = code;
    status.message_ = std::move(message);
    return status;
  }

  bool ok() const { return code_ == TA_OK; }
  ta_status code() const { return code_; }
  const std::string &message() const { return message_; }

private:
  ta_status code_ = TA_OK;
  std::string message_;
};

/// Returns from the enclosing function when `expr` is an error.
#define TA_RETURN_IF_ERROR(expr)                                               \
  do {                                                                         \
    ::tiled_attn::runtime::Status taStatus_ = (expr);                          \
    if (!taStatus_.ok())                                                       \
      return taStatus_;                                                        \
  } while (false)

/// The parts written one after the other, as `operator<<` writes them. For
/// error messages only: it allocates.
template <typename... Parts> std::string concat(const Parts &...parts) {
  std::ostringstream stream;
  (stream << ... << parts);
  return stream.str();
}

/// Shorthands for the three kinds of error the runtime reports itself.
template <typename... Parts> Status invalidArgument(const Parts &...parts) {
  return Status::error(TA_ERROR_INVALID_ARGUMENT, concat(parts...));
}
template <typename... Parts> Status libraryError(const Parts &...parts) {
  return Status::error(TA_ERROR_LIBRARY, concat(parts...));
}
template <typename... Parts> Status driverError(const Parts &...parts) {
  return Status::error(TA_ERROR_DRIVER, concat(parts...));
}

} // namespace tiled_attn::runtime

#endif // TILED_ATTN_LIB_RUNTIME_STATUS_H
