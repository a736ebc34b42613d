// Result<T>: a value or an Error, for the request path where exceptions are not used. The type is the
// client library's public one (client/include/siomq/result.h), so both sides speak the same.
#pragma once

#include <string>

#include "siomq/result.h"

namespace siomq {

inline Error make_error(std::string message, int code = 0) { return Error{code, std::move(message)}; }

}  // namespace siomq
