//===- DiagnosticEngine.cpp - Collects diagnostics for one run ------------===//

#include "diagnostics/DiagnosticEngine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/SourceMgr.h"

using namespace modelc;

std::string modelc::formatHeadline(llvm::StringRef format, llvm::ArrayRef<std::string> args) {
  std::string result;
  while (!format.empty()) {
    size_t open = format.find('{');
    result += format.take_front(open);
    if (open == llvm::StringRef::npos)
      break;
    format = format.drop_front(open);
    size_t close = format.find('}');
    unsigned index;
    if (close != llvm::StringRef::npos && !format.slice(1, close).getAsInteger(10, index) &&
        index < args.size()) {
      result += args[index];
    } else {
      close = close == llvm::StringRef::npos ? format.size() - 1 : close;
      result += format.take_front(close + 1); // not a placeholder, or no argument
    }
    format = format.drop_front(close + 1);
  }
  return result;
}

DiagnosticBuilder::~DiagnosticBuilder() {
  if (engine_)
    engine_->add(std::move(diag_));
}

/// The index of the primary label, or nullopt.
static std::optional<size_t> primaryIndex(const Diagnostic &diag) {
  for (size_t i = 0; i < diag.labels.size(); ++i)
    if (diag.labels[i].primary)
      return i;
  return std::nullopt;
}

DiagnosticBuilder &DiagnosticBuilder::primary(std::string message) {
  if (auto index = primaryIndex(diag_))
    diag_.labels[*index].message = std::move(message);
  return *this;
}

DiagnosticBuilder &DiagnosticBuilder::primary(Range range, std::string message) {
  if (auto index = primaryIndex(diag_))
    diag_.labels.erase(diag_.labels.begin() + *index);
  if (range.isValid())
    diag_.labels.insert(diag_.labels.begin(), Label{range, std::move(message), true});
  return *this;
}

DiagnosticBuilder &DiagnosticBuilder::label(Range range, std::string message) {
  if (range.isValid())
    diag_.labels.push_back(Label{range, std::move(message), false});
  return *this;
}

DiagnosticBuilder &DiagnosticBuilder::note(std::string message) {
  diag_.notes.push_back(Note{std::move(message), {}});
  return *this;
}

DiagnosticBuilder &DiagnosticBuilder::note(std::string message, Range at,
                                           std::string labelMessage) {
  Note note{std::move(message), {}};
  if (at.isValid())
    note.labels.push_back(Label{at, std::move(labelMessage), true});
  diag_.notes.push_back(std::move(note));
  return *this;
}

DiagnosticBuilder &DiagnosticBuilder::help(std::string message, std::vector<Edit> edits,
                                           Applicability applicability) {
  diag_.suggestions.push_back(Suggestion{std::move(message), std::move(edits), applicability});
  return *this;
}

DiagnosticBuilder DiagnosticEngine::begin(DiagId id, Range at, std::string message) {
  Diagnostic diag;
  diag.id = id;
  diag.severity = getDiagInfo(id).severity;
  diag.message = std::move(message);
  if (at.isValid())
    diag.labels.push_back(Label{at, {}, true});
  return DiagnosticBuilder(*this, std::move(diag));
}

void DiagnosticEngine::add(Diagnostic diag) {
  Range primary = diag.primaryRange();
  if (!seen_.insert({diag.id, primary.begin.getPointer(), primary.end.getPointer()}).second)
    return;
  count(diag);
  diags_.push_back(std::move(diag));
}

void DiagnosticEngine::count(const Diagnostic &diag) {
  if (diag.severity == Severity::Error)
    ++errors_;
  else if (diag.severity == Severity::Warning)
    ++warnings_;
}

void DiagnosticEngine::eraseIf(llvm::function_ref<bool(const Diagnostic &)> drop) {
  std::vector<Diagnostic> kept;
  errors_ = warnings_ = 0;
  for (Diagnostic &diag : diags_) {
    if (drop(diag))
      continue;
    count(diag);
    kept.push_back(std::move(diag));
  }
  diags_ = std::move(kept);
}

void DiagnosticEngine::sortByLocation() {
  // Key: (buffer, byte offset). File-level diagnostics (no range, or a range
  // outside every buffer) have buffer 0 and come first.
  auto key = [this](const Diagnostic &diag) -> std::pair<unsigned, size_t> {
    llvm::SMLoc loc = diag.primaryRange().begin;
    if (!loc.isValid())
      return {0, 0};
    unsigned buffer = sourceMgr_.FindBufferContainingLoc(loc);
    if (buffer == 0)
      return {0, 0};
    const char *start = sourceMgr_.getMemoryBuffer(buffer)->getBufferStart();
    return {buffer, size_t(loc.getPointer() - start)};
  };
  // (key, report order) sorted, then applied: stable without std::stable_sort,
  // whose libstdc++ implementation warns under clang in C++20.
  std::vector<std::pair<std::pair<unsigned, size_t>, size_t>> order;
  for (size_t i = 0; i < diags_.size(); ++i)
    order.push_back({key(diags_[i]), i});
  llvm::sort(order);
  std::vector<Diagnostic> sorted;
  sorted.reserve(diags_.size());
  for (auto &entry : order)
    sorted.push_back(std::move(diags_[entry.second]));
  diags_ = std::move(sorted);
}

void DiagnosticEngine::clear() {
  diags_.clear();
  seen_.clear();
  errors_ = warnings_ = 0;
}
