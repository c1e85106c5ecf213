//===- TrainLogTest.cpp - Metrics logs and loss curves --------------------===//
#include "runtime/training/TrainLog.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

using namespace modelc::runtime::training;

namespace {

TEST(TrainLogTest, LinesAreReadBackAsCurvesAndAppendingKeepsThem) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("metrics", "jsonl", path));
  {
    llvm::Expected<MetricsLog> log = MetricsLog::open(path, /*append=*/false);
    ASSERT_TRUE(bool(log)) << llvm::toString(log.takeError());
    log->write(llvm::json::Object{{"step", 1}, {"loss", 2.5}});
    log->write(llvm::json::Object{{"step", 2}, {"loss", 1.5}, {"val_loss", 1.75}});
  }
  {
    llvm::Expected<MetricsLog> log = MetricsLog::open(path, /*append=*/true);
    ASSERT_TRUE(bool(log));
    log->write(llvm::json::Object{{"step", 3}, {"loss", 0.5}});
  }
  llvm::Expected<std::vector<Curve>> curves = readCurves(path, {"loss", "val_loss"});
  ASSERT_TRUE(bool(curves)) << llvm::toString(curves.takeError());
  ASSERT_EQ((*curves)[0].points.size(), 3u);
  EXPECT_EQ((*curves)[0].points[2].step, 3);
  EXPECT_EQ((*curves)[0].points[2].value, 0.5);
  ASSERT_EQ((*curves)[1].points.size(), 1u);
  EXPECT_EQ((*curves)[1].points[0].value, 1.75);
  llvm::sys::fs::remove(path);
}

TEST(TrainLogTest, TheSvgDrawsOnePolylinePerCurveWithItsPoints) {
  Curve loss{"loss", {{0, 2.0}, {10, 1.0}, {20, 0.5}}};
  Curve val{"val_loss", {{20, 0.75}}};
  std::string svg = renderCurvesSvg({loss, val}, "mlp <train>");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("mlp &lt;train&gt;"), std::string::npos);
  size_t polyline = svg.find("<polyline");
  ASSERT_NE(polyline, std::string::npos);
  EXPECT_EQ(svg.find("<polyline", polyline + 1), std::string::npos);
  EXPECT_NE(svg.find("<circle"), std::string::npos); // the one-point curve
  // Three points: x from the left edge (70) to the right one (700).
  EXPECT_NE(svg.find("points=\"70.0,"), std::string::npos) << svg;
  EXPECT_NE(svg.find(" 700.0,"), std::string::npos) << svg;
}

TEST(TrainLogTest, AnEmptyPlotSaysSo) {
  EXPECT_NE(renderCurvesSvg({}, "t").find("no points"), std::string::npos);
}

} // namespace
