//===- TorchSourceMap.cpp - .mdl lines of an import back to Python --------===//

#include "TorchSourceMap.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace modelc::driver {

namespace {

/// `path` relative to the working directory when it lies below it, so that
/// diagnostics name files the way the user typed them.
std::string displayPath(llvm::StringRef path) {
  llvm::SmallString<256> cwd;
  if (!llvm::sys::fs::current_path(cwd)) {
    llvm::StringRef rest = path;
    if (rest.consume_front(cwd) && rest.consume_front("/"))
      return rest.str();
  }
  return path.str();
}

/// A device of the checked .mdl as PyTorch code spells it.
std::string pytorchDevice(llvm::StringRef device, llvm::StringRef inputName) {
  if (device == "D")
    return (inputName + ".device").str();
  return ("\"" + device + "\"").str();
}

/// The PyTorch method that converts to a .mdl dtype.
llvm::StringRef castMethod(llvm::StringRef dtype) {
  return llvm::StringSwitch<llvm::StringRef>(dtype)
      .Case("f32", ".float()")
      .Case("f16", ".half()")
      .Case("f64", ".double()")
      .Case("bf16", ".bfloat16()")
      .Case("i64", ".long()")
      .Case("i32", ".int()")
      .Case("bool", ".bool()")
      .Default("");
}

} // namespace

std::optional<unsigned> TorchSourceMap::pythonBuffer(llvm::StringRef path) {
  auto found = pythonBuffers_.find(path.str());
  if (found != pythonBuffers_.end())
    return found->second;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return std::nullopt;
  std::unique_ptr<llvm::MemoryBuffer> named =
      llvm::MemoryBuffer::getMemBufferCopy((*file)->getBuffer(), displayPath(path));
  unsigned id = sourceMgr_.AddNewSourceBuffer(std::move(named), llvm::SMLoc());
  pythonBuffers_[path.str()] = id;
  return id;
}

std::optional<Range> TorchSourceMap::pythonRange(const llvm::json::Object &location) {
  std::optional<llvm::StringRef> file = location.getString("file");
  std::optional<int64_t> line = location.getInteger("line");
  if (!file || !line || *line < 1)
    return std::nullopt;
  std::optional<unsigned> buffer = pythonBuffer(*file);
  if (!buffer)
    return std::nullopt;
  llvm::StringRef text = sourceMgr_.getMemoryBuffer(*buffer)->getBuffer();
  size_t start = 0;
  for (int64_t i = 1; i < *line; ++i) {
    size_t newline = text.find('\n', start);
    if (newline == llvm::StringRef::npos)
      return std::nullopt;
    start = newline + 1;
  }
  llvm::StringRef lineText = text.substr(start).split('\n').first.rtrim();
  size_t begin = lineText.size() - lineText.ltrim().size();
  size_t end = lineText.size();
  if (std::optional<int64_t> col = location.getInteger("col"))
    begin = std::min<size_t>(size_t(*col), lineText.size());
  if (std::optional<int64_t> endCol = location.getInteger("end_col"))
    end = std::clamp<size_t>(size_t(*endCol), begin, lineText.size());
  const char *base = lineText.data();
  return Range{llvm::SMLoc::getFromPointer(base + begin), llvm::SMLoc::getFromPointer(base + end)};
}

Diagnostic TorchSourceMap::importerError(const llvm::json::Object &result) {
  Diagnostic diag;
  llvm::StringRef code = result.getString("code").value_or("E0703");
  diag.id = lookupDiagCode(code).value_or(*lookupDiagCode("E0703"));
  diag.severity = Severity::Error;
  diag.message = result.getString("message").value_or("the import failed").str();
  if (const llvm::json::Object *location = result.getObject("location"))
    if (std::optional<Range> range = pythonRange(*location))
      diag.labels.push_back(
          Label{*range, result.getString("label").value_or("").str(), /*primary=*/true});
  if (const llvm::json::Array *notes = result.getArray("notes"))
    for (const llvm::json::Value &value : *notes) {
      const llvm::json::Object *note = value.getAsObject();
      if (!note)
        continue;
      Note out{note->getString("message").value_or("").str(), {}};
      if (const llvm::json::Object *location = note->getObject("location"))
        if (std::optional<Range> range = pythonRange(*location))
          out.labels.push_back(Label{*range, "", true});
      diag.notes.push_back(std::move(out));
    }
  llvm::StringRef help = result.getString("help").value_or("");
  if (!help.empty())
    diag.suggestions.push_back(Suggestion{help.str(), {}, Applicability::MaybeIncorrect});
  return diag;
}

void TorchSourceMap::load(const llvm::json::Object &result, unsigned mdlBuffer,
                          llvm::StringRef device) {
  mdlBuffer_ = mdlBuffer;
  device_ = device.str();
  inputName_ = result.getString("input_name").value_or("x").str();
  const llvm::json::Array *map = result.getArray("map");
  if (!map)
    return;
  for (const llvm::json::Value &value : *map) {
    const llvm::json::Object *entry = value.getAsObject();
    if (!entry)
      continue;
    std::optional<int64_t> line = entry->getInteger("line");
    llvm::json::Object location{{"file", entry->getString("file").value_or("")},
                                {"line", entry->getInteger("py_line").value_or(0)}};
    if (std::optional<int64_t> col = entry->getInteger("col"))
      location["col"] = *col;
    if (std::optional<int64_t> endCol = entry->getInteger("end_col"))
      location["end_col"] = *endCol;
    std::optional<Range> range = pythonRange(location);
    if (!line || !range)
      continue;
    entries_[unsigned(*line)] = Entry{*range, entry->getString("fix").value_or("").str(),
                                      entry->getString("redundant_fix").value_or("").str()};
  }
}

const TorchSourceMap::Entry *TorchSourceMap::entryAt(llvm::SMLoc loc) const {
  if (!loc.isValid() || sourceMgr_.FindBufferContainingLoc(loc) != mdlBuffer_)
    return nullptr;
  unsigned line = sourceMgr_.getLineAndColumn(loc, mdlBuffer_).first;
  auto found = entries_.find(line);
  return found == entries_.end() ? nullptr : &found->second;
}

std::optional<std::string> TorchSourceMap::pytorchEdit(const Edit &edit) const {
  llvm::StringRef replacement = edit.replacement;
  if (replacement.consume_front(".to(") && replacement.consume_back(")")) {
    // The model's own device is where its input is: say `x.device`.
    bool modelDevice = replacement == "D" || replacement == device_;
    std::string target = pytorchDevice(modelDevice ? "D" : replacement, inputName_);
    return "move it with `.to(" + target + ")`";
  }
  if (replacement.consume_front(", ") && replacement.consume_back(")")) {
    llvm::StringRef method = castMethod(replacement);
    if (!method.empty())
      return ("convert it with `" + method + "`").str();
  }
  return std::nullopt;
}

Diagnostic TorchSourceMap::toPython(const Diagnostic &diag) {
  const Entry *primary = entryAt(diag.primaryRange().begin);
  if (!primary)
    return diag;
  Diagnostic out;
  out.id = diag.id;
  out.severity = diag.severity;
  out.message = diag.message;
  out.labels.push_back(Label{primary->python, "", /*primary=*/true});

  std::string where = "in the import";
  if (device_ != "D")
    where += " (checked with the model on " + device_ + ")";
  out.notes.push_back(Note{where, diag.labels});
  for (const Note &note : diag.notes) {
    Note mapped = note;
    for (Label &label : mapped.labels)
      if (const Entry *entry = entryAt(label.range.begin))
        label.range = entry->python;
    out.notes.push_back(std::move(mapped));
  }

  // First what to change in the PyTorch code where a value got its device
  // (the fixes the importer wrote for those lines), then the `.to()` or
  // conversion that works around it where the values meet.
  bool redundant = diag.code() == "W0310";
  std::vector<std::string> fixes, workarounds;
  auto add = [](std::vector<std::string> &to, const std::string &message) {
    if (!llvm::is_contained(to, message))
      to.push_back(message);
  };
  auto fixAt = [&](llvm::SMLoc loc) {
    if (const Entry *entry = entryAt(loc)) {
      const std::string &fix = redundant ? entry->redundantFix : entry->fix;
      if (!fix.empty())
        add(fixes, fix);
    }
  };
  for (const Suggestion &suggestion : diag.suggestions) {
    std::optional<std::string> workaround;
    for (const Edit &edit : suggestion.edits)
      if ((workaround = pytorchEdit(edit)))
        break;
    if (workaround)
      add(workarounds, *workaround);
    else if (suggestion.edits.empty())
      add(workarounds, suggestion.message);
    else
      for (const Edit &edit : suggestion.edits)
        fixAt(edit.range.begin);
  }
  if (!redundant)
    for (const Note &note : diag.notes)
      for (const Label &label : note.labels)
        fixAt(label.range.begin);
  for (const std::string &message : fixes)
    out.suggestions.push_back(Suggestion{message, {}, Applicability::MaybeIncorrect});
  for (const std::string &message : workarounds)
    if (!llvm::is_contained(fixes, message))
      out.suggestions.push_back(
          Suggestion{(fixes.empty() ? "" : "or ") + message, {}, Applicability::MaybeIncorrect});
  return out;
}

} // namespace modelc::driver
