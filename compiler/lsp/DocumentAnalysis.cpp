//===- DocumentAnalysis.cpp - One checked snapshot of a document ----------===//

#include "lsp/DocumentAnalysis.h"
#include "lsp/SourceText.h"
#include "sema/BuiltinList.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <numeric>

using namespace llvm;
namespace modelc::lsp {

namespace proto = llvm::lsp;

namespace {

proto::DiagnosticSeverity toLspSeverity(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return proto::DiagnosticSeverity::Error;
  case Severity::Warning:
    return proto::DiagnosticSeverity::Warning;
  case Severity::Note:
    return proto::DiagnosticSeverity::Information;
  case Severity::Help:
    return proto::DiagnosticSeverity::Hint;
  }
  return proto::DiagnosticSeverity::Error;
}

bool contains(Range range, SMLoc loc) {
  return range.isValid() && range.begin.getPointer() <= loc.getPointer() &&
         loc.getPointer() <= range.end.getPointer();
}

bool overlaps(const proto::Range &a, const proto::Range &b) {
  return !(a.end < b.start) && !(b.end < a.start);
}

/// `url` with each `{0}` replaced by `code`. (Not formatv: the URL comes
/// from the command line, and a stray brace must not break the server.)
std::string explanationLink(StringRef url, StringRef code) {
  std::string link;
  while (true) {
    auto [before, after] = url.split("{0}");
    link += before;
    if (before.size() == url.size())
      return link;
    link += code;
    url = after;
  }
}

/// The signature of a model as written: `Linear<D: device>(in: int, out: int)`.
std::string modelSignature(const ast::ModelDecl &model) {
  std::string text = model.name.name;
  if (!model.deviceParams.empty()) {
    text += '<';
    ListSeparator sep;
    for (const ast::DeviceParam &param : model.deviceParams)
      text += (Twine(sep) + param.name.name + ": device").str();
    text += '>';
  }
  text += '(';
  ListSeparator sep;
  for (const ast::ValueParam &param : model.valueParams)
    text += (Twine(sep) + param.name.name + ": " + ast::valueParamTypeText(param)).str();
  return text + ')';
}

std::string fnSignature(const ast::FnDecl &fn) {
  std::string text = "fn " + fn.name.name + "(";
  ListSeparator sep;
  for (const ast::FnParam &param : fn.params)
    text +=
        (Twine(sep) + param.name.name + ": " + (param.type ? param.type->range.text() : "")).str();
  text += ')';
  if (fn.result)
    text += (" -> " + fn.result->range.text()).str();
  return text;
}

std::string typeText(const std::unique_ptr<ast::TypeExpr> &type) {
  return type ? type->range.text().str() : std::string();
}

/// The name of the model a submodel initializer creates: `nn.Linear(...)`,
/// `Encoder(...)` or `Encoder<cuda:0>(...)`.
std::optional<std::string> createdModelName(const ast::Expr *init) {
  if (const auto *inst = dyn_cast_or_null<ast::InstantiateExpr>(init))
    return inst->model.name;
  const auto *call = dyn_cast_or_null<ast::CallExpr>(init);
  if (!call)
    return std::nullopt;
  if (const auto *name = dyn_cast<ast::NameExpr>(call->callee.get()))
    return name->name;
  if (const auto *member = dyn_cast<ast::MemberExpr>(call->callee.get()))
    return member->member.name;
  return std::nullopt;
}

/// Collects the `let`s and loop variables visible at `loc` in `body`.
void collectLocals(const std::vector<ast::StmtPtr> &body, SMLoc loc,
                   std::vector<std::pair<std::string, std::string>> &out) {
  for (const ast::StmtPtr &stmt : body) {
    if (!stmt)
      continue;
    if (const auto *let = dyn_cast<ast::LetStmt>(stmt.get())) {
      if (let->range.end.getPointer() <= loc.getPointer())
        out.emplace_back(let->name.name, typeText(let->type));
    } else if (const auto *let = dyn_cast<ast::LetTupleStmt>(stmt.get())) {
      if (let->range.end.getPointer() <= loc.getPointer())
        for (const ast::Ident &name : let->names)
          if (name.name != "_")
            out.emplace_back(name.name, "");
    } else if (const auto *loop = dyn_cast<ast::ForStmt>(stmt.get())) {
      if (contains(loop->range, loc)) {
        out.emplace_back(loop->var.name, loop->isRange() ? "int" : "");
        collectLocals(loop->body, loc, out);
      }
    } else if (const auto *branch = dyn_cast<ast::IfStmt>(stmt.get())) {
      if (contains(branch->range, loc)) {
        collectLocals(branch->thenBody, loc, out);
        collectLocals(branch->elseBody, loc, out);
      }
    }
  }
}

} // namespace

json::Value locationToJSON(const proto::Location &location) {
  return json::Object{{"uri", location.uri.uri().str()}, {"range", toJSON(location.range)}};
}

DocumentAnalysis::DocumentAnalysis(CompileOptions options, std::string path, int64_t version,
                                   StringRef text, StringRef explainUrl)
    : path_(std::move(path)), version_(version),
      compilation_(std::make_unique<Compilation>(std::move(options))) {
  mainBuffer_ = compilation_->addBuffer(path_, text);
  compilation_->check();
  compilation_->diagnostics().sortByLocation();
  for (const ast::Module *module : compilation_->modules())
    if (module && module->bufferId != mainBuffer_)
      deps_.push_back(module->fileName);
  convertDiagnostics(explainUrl);
}

DocumentAnalysis::~DocumentAnalysis() = default;

std::optional<proto::Location> DocumentAnalysis::toLocation(Range range) const {
  if (!range.isValid())
    return std::nullopt;
  const SourceMgr &mgr = compilation_->sourceMgr();
  unsigned buffer = mgr.FindBufferContainingLoc(range.begin);
  if (buffer == 0)
    return std::nullopt;
  const MemoryBuffer *memory = mgr.getMemoryBuffer(buffer);
  // SourceMgr caches line starts, so this stays cheap in huge files.
  auto position = [&](SMLoc loc) {
    auto [line, column] = mgr.getLineAndColumn(loc, buffer);
    StringRef lineBefore(loc.getPointer() - (column - 1), column - 1);
    return proto::Position(int(line) - 1, positionOf(lineBefore, lineBefore.size()).character);
  };
  SMLoc end = range.end.isValid() && range.end.getPointer() >= range.begin.getPointer() &&
                      mgr.FindBufferContainingLoc(range.end) == buffer
                  ? range.end
                  : range.begin;
  StringRef file = memory->getBufferIdentifier();
  Expected<proto::URIForFile> uri = proto::URIForFile::fromFile(file);
  if (!uri) {
    consumeError(uri.takeError());
    return std::nullopt;
  }
  return proto::Location(*uri, proto::Range(position(range.begin), position(end)));
}

void DocumentAnalysis::convertDiagnostics(StringRef explainUrl) {
  const ast::Module *main = compilation_->mainModule();
  for (const Diagnostic &diag : compilation_->diagnostics().diagnostics()) {
    std::optional<proto::Location> primary = toLocation(diag.primaryRange());
    std::string message = diag.message;
    if (!diag.labels.empty() && !diag.labels[0].message.empty())
      message += "\n" + diag.labels[0].message;

    // A diagnostic in an imported file shows on the import that reads it,
    // unless that file is open: its own check publishes it there.
    proto::Range range;
    if (primary && primary->uri.file() == path_) {
      range = primary->range;
    } else if (primary && llvm::any_of(compilation_->options().overlays, [&](const auto &open) {
                 return open.first == primary->uri.file();
               })) {
      continue;
    } else {
      if (primary)
        message = formatv("in {0}:{1}:{2}: {3}", primary->uri.file(), primary->range.start.line + 1,
                          primary->range.start.character + 1, message);
      if (main && primary)
        for (const ast::ImportDecl &import : main->imports)
          if (const ast::Module *module = moduleForImport(import);
              module && module->fileName == primary->uri.file())
            if (std::optional<proto::Location> at = toLocation(import.range))
              range = at->range;
    }

    json::Array related;
    auto relate = [&](Range at, const Twine &text) {
      std::optional<proto::Location> location = toLocation(at);
      if (!location && primary)
        location = primary;
      if (location)
        related.push_back(
            json::Object{{"location", locationToJSON(*location)}, {"message", text.str()}});
    };
    for (const Label &label : llvm::drop_begin(diag.labels))
      relate(label.range, label.message);
    for (const Note &note : diag.notes) {
      if (note.labels.empty())
        relate(Range(), "note: " + note.message);
      for (const Label &label : note.labels)
        relate(label.range,
               "note: " + note.message + (label.message.empty() ? "" : " (" + label.message + ")"));
    }
    for (const Suggestion &suggestion : diag.suggestions)
      relate(suggestion.edits.empty() ? Range() : suggestion.edits[0].range,
             "help: " + suggestion.message);

    proto::Diagnostic lspDiag;
    lspDiag.range = range;
    lspDiag.severity = toLspSeverity(diag.severity);
    lspDiag.source = "modelc";
    lspDiag.message = message;
    json::Value value = toJSON(lspDiag);
    json::Object &object = *value.getAsObject();
    object["code"] = diag.code().str();
    object["codeDescription"] = json::Object{{"href", explanationLink(explainUrl, diag.code())}};
    if (!related.empty())
      object["relatedInformation"] = std::move(related);

    PublishedDiagnostic published{range, std::move(value), {}};
    for (const Suggestion &suggestion : diag.suggestions) {
      if (suggestion.applicability != Applicability::MachineApplicable || suggestion.edits.empty())
        continue;
      QuickFix fix{suggestion.message, {}};
      bool mapped = true;
      for (const Edit &edit : suggestion.edits) {
        std::optional<proto::Location> at = toLocation(edit.range);
        if (!at) {
          mapped = false;
          break;
        }
        fix.edit.changes[at->uri.uri().str()].push_back(
            proto::TextEdit{at->range, edit.replacement});
      }
      if (mapped)
        published.fixes.push_back(std::move(fix));
    }
    diags_.push_back(std::move(published));
  }
}

json::Value DocumentAnalysis::publishParams(const proto::URIForFile &uri) const {
  json::Array diagnostics;
  for (const PublishedDiagnostic &diag : diags_)
    diagnostics.push_back(diag.json);
  return json::Object{
      {"uri", uri.uri().str()}, {"version", version_}, {"diagnostics", std::move(diagnostics)}};
}

Expected<SMLoc> DocumentAnalysis::locate(proto::Position pos) const {
  StringRef text = compilation_->sourceMgr().getMemoryBuffer(mainBuffer_)->getBuffer();
  std::optional<size_t> offset = offsetOf(text, pos);
  if (!offset)
    return make_error<proto::LSPError>(formatv("position {0} is outside the document", pos).str(),
                                       proto::ErrorCode::InvalidParams);
  return SMLoc::getFromPointer(text.data() + *offset);
}

const ast::Module *DocumentAnalysis::moduleForImport(const ast::ImportDecl &import) const {
  if (import.path.empty())
    return nullptr;
  // `import std.nn` reads <stdlib>/nn.mdl; `import a.b` reads .../a/b.mdl.
  SmallString<64> suffix;
  for (const ast::Ident &part : import.path) {
    if (&part == &import.path.front() && part.name == "std" && import.path.size() > 1)
      continue;
    sys::path::append(suffix, part.name);
  }
  suffix += ".mdl";
  for (const ast::Module *module : compilation_->modules()) {
    if (!module || module->bufferId == mainBuffer_)
      continue;
    StringRef file = module->fileName;
    if (file == suffix ||
        (file.ends_with(suffix) && sys::path::is_separator(file[file.size() - suffix.size() - 1])))
      return module;
  }
  return nullptr;
}

const ast::ModelDecl *DocumentAnalysis::findModel(StringRef name) const {
  for (const ast::Module *module : compilation_->modules())
    if (module)
      for (const ast::ModelDecl &model : module->models)
        if (model.name.name == name)
          return &model;
  return nullptr;
}

std::optional<proto::Hover> DocumentAnalysis::hover(SMLoc loc) const {
  std::optional<SymbolInfo> info = compilation_->symbolAt(loc);
  if (!info || (info->type.empty() && info->doc.empty()))
    return std::nullopt;
  std::optional<proto::Location> at = toLocation(info->range);
  proto::Hover hover(at ? at->range : proto::Range());
  if (!at)
    hover.range.reset();
  std::string &text = hover.contents.value;
  text = "```mdl\n";
  text += info->name.empty() ? info->type : info->name + ": " + info->type;
  text += "\n```";
  if (!info->deviceOrigin.empty())
    text += "\n\ndevice: " + info->deviceOrigin;
  if (!info->doc.empty())
    text += "\n\n---\n" + info->doc;
  return hover;
}

std::vector<proto::Location> DocumentAnalysis::definition(SMLoc loc) const {
  std::vector<proto::Location> result;
  // An import's path goes to the file it reads.
  if (const ast::Module *main = compilation_->mainModule())
    for (const ast::ImportDecl &import : main->imports)
      if (contains(import.range, loc)) {
        const ast::Module *module = moduleForImport(import);
        if (!module)
          return result;
        if (Expected<proto::URIForFile> uri = proto::URIForFile::fromFile(module->fileName))
          result.emplace_back(*uri, proto::Range(proto::Position(0, 0)));
        else
          consumeError(uri.takeError());
        return result;
      }
  std::optional<SymbolInfo> info = compilation_->symbolAt(loc);
  if (info && info->definition)
    if (std::optional<proto::Location> at = toLocation(*info->definition))
      result.push_back(*at);
  return result;
}

std::vector<proto::DocumentSymbol> DocumentAnalysis::symbols() const {
  std::vector<proto::DocumentSymbol> result;
  const ast::Module *main = compilation_->mainModule();
  if (!main)
    return result;
  auto symbol = [&](StringRef name, proto::SymbolKind kind, Range range, Range nameRange,
                    std::string detail) -> std::optional<proto::DocumentSymbol> {
    std::optional<proto::Location> full = toLocation(range);
    std::optional<proto::Location> selection = toLocation(nameRange);
    if (!full || !selection || name.empty())
      return std::nullopt;
    proto::DocumentSymbol result(name, kind, full->range, selection->range);
    result.detail = std::move(detail);
    return result;
  };
  for (const ast::ModelDecl &model : main->models) {
    std::optional<proto::DocumentSymbol> modelSym =
        symbol(model.name.name, proto::SymbolKind::Class, model.range, model.name.range,
               modelSignature(model));
    if (!modelSym)
      continue;
    for (const ast::StateDecl &state : model.state)
      if (auto sym =
              symbol(state.name.name, proto::SymbolKind::Field, state.range, state.name.range,
                     (state.kind == ast::StateDecl::Kind::Param ? "param " : "buffer ") +
                         typeText(state.type)))
        modelSym->children.push_back(std::move(*sym));
    for (const ast::SubmodelDecl &sub : model.submodels)
      if (auto sym = symbol(sub.name.name, proto::SymbolKind::Object, sub.range, sub.name.range,
                            sub.init ? sub.init->range.text().str() : ""))
        modelSym->children.push_back(std::move(*sym));
    for (const ast::FnDecl &fn : model.fns)
      if (auto sym = symbol(fn.name.name, proto::SymbolKind::Method, fn.range, fn.name.range,
                            fnSignature(fn)))
        modelSym->children.push_back(std::move(*sym));
    // Children in source order, whatever their kind.
    std::vector<proto::DocumentSymbol> &children = modelSym->children;
    std::vector<size_t> order(children.size());
    std::iota(order.begin(), order.end(), 0);
    llvm::stable_sort(order, [&](size_t a, size_t b) {
      return children[a].range.start < children[b].range.start;
    });
    std::vector<proto::DocumentSymbol> sorted;
    for (size_t index : order)
      sorted.push_back(std::move(children[index]));
    children = std::move(sorted);
    result.push_back(std::move(*modelSym));
  }
  return result;
}

proto::CompletionList DocumentAnalysis::complete(StringRef currentText, proto::Position pos) const {
  proto::CompletionList list;
  std::optional<size_t> offset = offsetOf(currentText, pos);
  if (!offset)
    return list;
  // The identifier being typed, and the name before a `.` in front of it.
  auto isIdentChar = [](char c) { return isAlnum(c) || c == '_'; };
  size_t start = *offset;
  while (start > 0 && isIdentChar(currentText[start - 1]))
    --start;
  std::optional<std::string> base;
  if (start > 0 && currentText[start - 1] == '.') {
    size_t baseEnd = start - 1, baseStart = baseEnd;
    while (baseStart > 0 && isIdentChar(currentText[baseStart - 1]))
      --baseStart;
    base = currentText.slice(baseStart, baseEnd).str();
  }

  // Only names that start with what is typed; editors filter further.
  StringRef prefix = currentText.slice(start, *offset);
  StringSet<> seen;
  auto add = [&](StringRef label, proto::CompletionItemKind kind, StringRef detail, StringRef doc,
                 StringRef sortGroup) {
    if (!label.starts_with(prefix) || label.empty() || !seen.insert(label).second)
      return;
    proto::CompletionItem item(label, kind, (sortGroup + label).str());
    item.detail = detail.str();
    if (!doc.empty())
      item.documentation = proto::MarkupContent{proto::MarkupKind::Markdown, doc.str()};
    list.items.push_back(std::move(item));
  };
  auto addMembers = [&](const ast::ModelDecl &model) {
    for (const ast::StateDecl &state : model.state)
      add(state.name.name, proto::CompletionItemKind::Field, typeText(state.type), state.doc, "0");
    for (const ast::SubmodelDecl &sub : model.submodels)
      add(sub.name.name, proto::CompletionItemKind::Field, sub.init ? sub.init->range.text() : "",
          sub.doc, "0");
    for (const ast::FnDecl &fn : model.fns)
      add(fn.name.name, proto::CompletionItemKind::Method, fnSignature(fn), fn.doc, "1");
  };

  const ast::Module *main = compilation_->mainModule();
  if (base) {
    if (!main)
      return list;
    // `nn.` lists the models of the imported module.
    for (const ast::ImportDecl &import : main->imports)
      if (!import.path.empty() && import.path.back().name == *base) {
        if (const ast::Module *module = moduleForImport(import))
          for (const ast::ModelDecl &model : module->models)
            add(model.name.name, proto::CompletionItemKind::Class, modelSignature(model), model.doc,
                "0");
        return list;
      }
    // `fc1.` lists the state and fns of the submodel's model.
    for (const ast::ModelDecl &model : main->models)
      for (const ast::SubmodelDecl &sub : model.submodels)
        if (sub.name.name == *base)
          if (std::optional<std::string> created = createdModelName(sub.init.get()))
            if (const ast::ModelDecl *decl = findModel(*created)) {
              addMembers(*decl);
              return list;
            }
    return list;
  }

  if (main) {
    // Where the cursor is, in terms of the checked text: the same offset
    // is close enough for scoping while the user types.
    StringRef checked = compilation_->sourceMgr().getMemoryBuffer(mainBuffer_)->getBuffer();
    SMLoc loc = SMLoc::getFromPointer(checked.data() + std::min(*offset, checked.size()));
    for (const ast::ModelDecl &model : main->models) {
      if (!contains(model.range, loc))
        continue;
      for (const ast::FnDecl &fn : model.fns) {
        if (!contains(fn.range, loc))
          continue;
        std::vector<std::pair<std::string, std::string>> locals;
        for (const ast::FnParam &param : fn.params)
          locals.emplace_back(param.name.name, typeText(param.type));
        collectLocals(fn.body, loc, locals);
        for (auto &[name, type] : llvm::reverse(locals))
          add(name, proto::CompletionItemKind::Variable, type, "", "0");
      }
      addMembers(model);
      for (const ast::ValueParam &param : model.valueParams)
        add(param.name.name, proto::CompletionItemKind::Variable, ast::valueParamTypeText(param),
            "", "1");
      for (const ast::DeviceParam &param : model.deviceParams)
        add(param.name.name, proto::CompletionItemKind::TypeParameter, "device", "", "1");
    }
    for (const ast::ModelDecl &model : main->models)
      add(model.name.name, proto::CompletionItemKind::Class, modelSignature(model), model.doc, "2");
    for (const ast::ImportDecl &import : main->imports)
      if (!import.path.empty())
        add(import.path.back().name, proto::CompletionItemKind::Module, "import", "", "2");
  }
  for (const sema::BuiltinSignature &builtin : sema::builtinSignatures())
    add(builtin.name, proto::CompletionItemKind::Function,
        (builtin.name + "(" + builtin.params + ")").str(), "", "3");
  for (StringRef keyword :
       {"let",    "return", "for",  "in",   "if",     "else", "fn",    "param", "buffer", "model",
        "assert", "import", "cpu",  "cuda", "device", "true", "false", "inf",   "and",    "or",
        "not",    "f16",    "bf16", "f32",  "f64",    "i32",  "i64",   "bool",  "int",    "float"})
    add(keyword, proto::CompletionItemKind::Keyword, "", "", "9");
  return list;
}

json::Array DocumentAnalysis::codeActions(proto::Range range) const {
  json::Array actions;
  for (const PublishedDiagnostic &diag : diags_) {
    if (!overlaps(diag.range, range))
      continue;
    for (const QuickFix &fix : diag.fixes) {
      proto::CodeAction action;
      action.title = fix.title;
      action.kind = proto::CodeAction::kQuickFix.str();
      action.isPreferred = diag.fixes.size() == 1;
      action.edit = fix.edit;
      json::Value value = toJSON(action);
      value.getAsObject()->insert({"diagnostics", json::Array{diag.json}});
      actions.push_back(std::move(value));
    }
  }
  return actions;
}

} // namespace modelc::lsp
