//===- LogicalResult.h - Success/failure result type ------------*- C++ -*-===//
//
// A must-check success/failure value, as in MLIR: library functions report
// details through the DiagnosticEngine and return only whether they worked.
//
//===----------------------------------------------------------------------===//
#ifndef FUEL_SUPPORT_LOGICALRESULT_H
#define FUEL_SUPPORT_LOGICALRESULT_H

namespace fuel {

class [[nodiscard]] LogicalResult {
public:
  static LogicalResult success() { return LogicalResult(true); }
  static LogicalResult failure() { return LogicalResult(false); }
  bool succeeded() const { return ok; }
  bool failed() const { return !ok; }

private:
  explicit LogicalResult(bool ok) : ok(ok) {}
  bool ok;
};

inline LogicalResult success() { return LogicalResult::success(); }
inline LogicalResult failure() { return LogicalResult::failure(); }
inline LogicalResult success(bool cond) {
  return cond ? success() : failure();
}
inline bool succeeded(LogicalResult r) { return r.succeeded(); }
inline bool failed(LogicalResult r) { return r.failed(); }

} // namespace fuel

#endif // FUEL_SUPPORT_LOGICALRESULT_H
