// status_macros.h: early-return helpers for absl::Status and absl::StatusOr.
//
// Debian 12's Abseil (20220623) ships neither absl/log nor the
// RETURN_IF_ERROR / ASSIGN_OR_RETURN macros, so invariant-serve keeps its own.
//
//   RETURN_IF_ERROR(expr);              // returns expr's status if it is not OK
//   ASSIGN_OR_RETURN(auto v, expr);     // v = *expr, or returns expr.status()
#ifndef INVARIANT_CORE_BASE_STATUS_MACROS_H_
#define INVARIANT_CORE_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define INVARIANT_CONCAT_INNER_(a, b) a##b
#define INVARIANT_CONCAT_(a, b) INVARIANT_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                              \
  do {                                                     \
    const ::absl::Status _invariant_status = (expr);       \
    if (!_invariant_status.ok()) return _invariant_status; \
  } while (0)

#define INVARIANT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                     \
  if (!tmp.ok()) return tmp.status();                    \
  lhs = std::move(*tmp)

#define ASSIGN_OR_RETURN(lhs, expr) \
  INVARIANT_ASSIGN_OR_RETURN_IMPL_(INVARIANT_CONCAT_(_invariant_statusor_, __LINE__), lhs, expr)

#endif  // INVARIANT_CORE_BASE_STATUS_MACROS_H_
