//===- TrainLog.h - Metrics as JSON lines, a loss curve as SVG ---*- C++ -*-===//
//
// `modelc train --log FILE` writes one JSON object per line per logged step
// (`{"step": 120, "epoch": 0, "loss": 0.41, "lr": 0.1, "samples_per_s": 5120,
// "elapsed_s": 3.2}`; validation lines carry `"val_loss"` and, for a
// classifier, `"val_accuracy"`), flushed as written so a crash loses nothing
// logged. At the end the curve of those points is drawn as a standalone SVG
// beside the log, which a browser or an image viewer shows.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_TRAINING_TRAINLOG_H
#define MODELC_RUNTIME_TRAINING_TRAINLOG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_fd_ostream;
}

namespace modelc::runtime::training {

/// One point of a curve.
struct CurvePoint {
  int64_t step;
  double value;
};

/// A named curve of a plot (`train loss`, `val loss`).
struct Curve {
  std::string name;
  std::vector<CurvePoint> points;
};

class MetricsLog {
public:
  /// Opens `path` for writing (appending when `append`, as a resumed run
  /// does).
  static llvm::Expected<MetricsLog> open(llvm::StringRef path, bool append);
  MetricsLog(MetricsLog &&) noexcept;
  MetricsLog &operator=(MetricsLog &&) noexcept;
  ~MetricsLog();

  /// Writes `record` as one line and flushes it.
  void write(const llvm::json::Object &record);
  llvm::StringRef path() const { return Path; }

private:
  MetricsLog() = default;
  std::string Path;
  std::unique_ptr<llvm::raw_fd_ostream> Out;
};

/// Reads the curves `keys` (e.g. "loss", "val_loss") back from a metrics
/// log, one point per line that has the key and a "step".
llvm::Expected<std::vector<Curve>> readCurves(llvm::StringRef logPath,
                                              llvm::ArrayRef<std::string> keys);

/// A standalone SVG of `curves` against the step: axes with ticks and
/// labels, a legend, a log-scaled y axis when the values span more than two
/// decades.
std::string renderCurvesSvg(llvm::ArrayRef<Curve> curves, llvm::StringRef title);

} // namespace modelc::runtime::training

#endif // MODELC_RUNTIME_TRAINING_TRAINLOG_H
