//===- TrainLog.cpp - Metrics as JSON lines, a loss curve as SVG ----------===//
#include "runtime/training/TrainLog.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace llvm;

namespace modelc::runtime::training {

Expected<MetricsLog> MetricsLog::open(StringRef path, bool append) {
  std::error_code ec;
  auto out = std::make_unique<raw_fd_ostream>(
      path, ec, append ? sys::fs::OF_Append | sys::fs::OF_Text : sys::fs::OF_Text);
  if (ec)
    return createFileError(path, ec);
  MetricsLog log;
  log.Path = path.str();
  log.Out = std::move(out);
  return log;
}

MetricsLog::MetricsLog(MetricsLog &&) noexcept = default;
MetricsLog &MetricsLog::operator=(MetricsLog &&) noexcept = default;
MetricsLog::~MetricsLog() = default;

void MetricsLog::write(const json::Object &record) {
  *Out << json::Value(json::Object(record)) << "\n";
  Out->flush();
}

Expected<std::vector<Curve>> readCurves(StringRef logPath, ArrayRef<std::string> keys) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(logPath, /*IsText=*/true);
  if (!buffer)
    return createFileError(logPath, buffer.getError());
  std::vector<Curve> curves;
  for (const std::string &key : keys)
    curves.push_back({key, {}});
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines) {
    Expected<json::Value> value = json::parse(line);
    if (!value) {
      consumeError(value.takeError()); // a line cut by a crash
      continue;
    }
    const json::Object *record = value->getAsObject();
    if (!record)
      continue;
    std::optional<int64_t> step = record->getInteger("step");
    if (!step)
      continue;
    for (Curve &curve : curves)
      if (std::optional<double> v = record->getNumber(curve.name))
        curve.points.push_back({*step, *v});
  }
  return curves;
}

namespace {

/// "Nice" tick values covering [lo, hi]: steps of 1, 2 or 5 times a power
/// of ten, about `count` of them.
std::vector<double> ticks(double lo, double hi, int count) {
  double span = hi - lo;
  if (!(span > 0))
    return {lo};
  double raw = span / count;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  std::vector<double> out;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    out.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return out;
}

std::string label(double v) {
  if (v == 0)
    return "0";
  double a = std::abs(v);
  if (a >= 1e5 || a < 1e-3)
    return formatv("{0:e1}", v).str();
  std::string s = formatv("{0:g}", v).str();
  return s;
}

std::string escape(StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

} // namespace

std::string renderCurvesSvg(ArrayRef<Curve> curves, StringRef title) {
  constexpr double Width = 720, Height = 420, Left = 70, Right = 20, Top = 40, Bottom = 50;
  constexpr const char *Colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const Curve &curve : curves)
    for (const CurvePoint &p : curve.points)
      if (std::isfinite(p.value)) {
        x0 = std::min(x0, double(p.step));
        x1 = std::max(x1, double(p.step));
        y0 = std::min(y0, p.value);
        y1 = std::max(y1, p.value);
      }
  std::string svg;
  raw_string_ostream os(svg);
  os << formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n",
                Width, Height);
  os << formatv("<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n", Width, Height);
  os << formatv("<text x=\"{0}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{1}</text>\n",
                Width / 2, escape(title));
  if (!std::isfinite(x0)) {
    os << formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">no points</text>\n</svg>\n",
                  Width / 2, Height / 2);
    return svg;
  }
  bool logScale = y0 > 0 && y1 / y0 > 100;
  auto ty = [&](double v) { return logScale ? std::log10(v) : v; };
  double ly0 = ty(y0), ly1 = ty(y1);
  if (ly1 - ly0 < 1e-12) {
    ly0 -= 0.5;
    ly1 += 0.5;
  }
  if (x1 - x0 < 1) {
    x0 -= 0.5;
    x1 += 0.5;
  }
  double plotW = Width - Left - Right, plotH = Height - Top - Bottom;
  auto px = [&](double x) { return Left + (x - x0) / (x1 - x0) * plotW; };
  auto py = [&](double y) { return Top + (1 - (ty(y) - ly0) / (ly1 - ly0)) * plotH; };

  os << formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{3}\" fill=\"none\" "
                "stroke=\"#444\"/>\n",
                Left, Top, plotW, plotH);
  for (double t : ticks(x0, x1, 6)) {
    double x = px(t);
    os << formatv("<line x1=\"{0:f1}\" y1=\"{1}\" x2=\"{0:f1}\" y2=\"{2}\" stroke=\"#ddd\"/>\n", x,
                  Top, Top + plotH);
    os << formatv("<text x=\"{0:f1}\" y=\"{1}\" text-anchor=\"middle\">{2}</text>\n", x,
                  Top + plotH + 16, label(t));
  }
  for (double t : ticks(ly0, ly1, 6)) {
    double v = logScale ? std::pow(10.0, t) : t;
    double y = py(v);
    os << formatv("<line x1=\"{0}\" y1=\"{1:f1}\" x2=\"{2}\" y2=\"{1:f1}\" stroke=\"#ddd\"/>\n",
                  Left, y, Left + plotW);
    os << formatv("<text x=\"{0}\" y=\"{1:f1}\" text-anchor=\"end\">{2}</text>\n", Left - 6, y + 4,
                  label(v));
  }
  os << formatv("<text x=\"{0}\" y=\"{1}\" text-anchor=\"middle\">step</text>\n", Left + plotW / 2,
                Height - 12);
  for (size_t i = 0; i < curves.size(); ++i) {
    const Curve &curve = curves[i];
    const char *color = Colors[i % std::size(Colors)];
    std::string points;
    for (const CurvePoint &p : curve.points)
      if (std::isfinite(p.value) && (!logScale || p.value > 0))
        points += formatv("{0:f1},{1:f1} ", px(double(p.step)), py(p.value)).str();
    if (curve.points.size() == 1)
      os << formatv("<circle cx=\"{0:f1}\" cy=\"{1:f1}\" r=\"3\" fill=\"{2}\"/>\n",
                    px(double(curve.points[0].step)), py(curve.points[0].value), color);
    else if (!points.empty())
      os << formatv("<polyline fill=\"none\" stroke=\"{0}\" stroke-width=\"1.5\" "
                    "points=\"{1}\"/>\n",
                    color, StringRef(points).rtrim());
    double ly = Top + 16 + 16 * double(i);
    os << formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" "
                  "stroke-width=\"2\"/>\n",
                  Left + plotW - 130, ly - 4, Left + plotW - 110, color);
    os << formatv("<text x=\"{0}\" y=\"{1}\">{2}</text>\n", Left + plotW - 104, ly,
                  escape(curve.name));
  }
  os << "</svg>\n";
  return svg;
}

} // namespace modelc::runtime::training
