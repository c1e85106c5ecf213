//===- Compilation.cpp - Parse a file with its imports and check it -------===//

#include "sema/Compilation.h"
#include "parse/Parser.h"
#include "sema/CheckedProgram.h"
#include "sema/Checker.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace modelc;

#ifndef MODELC_STDLIB_DIR
#define MODELC_STDLIB_DIR "stdlib"
#endif

struct Compilation::Impl {
  std::vector<std::unique_ptr<ast::Module>> modules; // main first
  llvm::StringMap<unsigned> bufferByPath;
  llvm::StringMap<const ast::Module *> moduleByPath;
  llvm::StringSet<> inProgress;
  std::vector<llvm::StringMap<const ast::Module *>> importMaps; // parallel to modules
  std::optional<unsigned> mainBuffer;
  std::string mainPath;
  sema::CheckedProgram program;
  bool checked = false;
};

Compilation::Compilation(CompileOptions options)
    : options_(std::move(options)), diags_(sourceMgr_), impl_(std::make_unique<Impl>()) {}

Compilation::~Compilation() = default;

/// An absolute, normalized spelling of `path` (symlinks resolved when the
/// file exists), so one file is loaded once however it is named.
static std::string canonicalPath(llvm::StringRef path) {
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real))
    return std::string(real);
  llvm::SmallString<256> abs(path);
  llvm::sys::fs::make_absolute(abs);
  llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
  return std::string(abs);
}

/// The overlay text for `path`, if an editor has the file open.
static const std::string *findOverlay(const CompileOptions &options, llvm::StringRef path) {
  for (const auto &[overlayPath, text] : options.overlays)
    if (overlayPath == path || canonicalPath(overlayPath) == path)
      return &text;
  return nullptr;
}

/// Loads `path` (canonical) into `sm`. A file read from disk is named
/// `shownPath` in diagnostics: the path as the user typed it.
static std::optional<unsigned> loadBuffer(llvm::SourceMgr &sm, const CompileOptions &options,
                                          const std::string &path, std::string &error,
                                          llvm::StringRef shownPath = {}) {
  if (const std::string *text = findOverlay(options, path))
    return sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(*text, path), llvm::SMLoc());
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(shownPath.empty() ? llvm::StringRef(path) : shownPath,
                                  /*IsText=*/true);
  if (!file) {
    error = file.getError().message();
    return std::nullopt;
  }
  return sm.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
}

std::optional<unsigned> Compilation::addFile(llvm::StringRef path) {
  std::string canonical = canonicalPath(path);
  std::string error;
  std::optional<unsigned> id = loadBuffer(sourceMgr_, options_, canonical, error, path);
  if (!id) {
    diags_.report(DiagId::UnknownModule, Range(), path).note("cannot read it: " + error);
    return std::nullopt;
  }
  impl_->mainBuffer = id;
  impl_->mainPath = canonical;
  impl_->bufferByPath[canonical] = *id;
  return id;
}

unsigned Compilation::addBuffer(llvm::StringRef name, llvm::StringRef text) {
  unsigned id = sourceMgr_.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name),
                                              llvm::SMLoc());
  impl_->mainBuffer = id;
  // A buffer named like a file imports relative to that file's folder.
  impl_->mainPath = llvm::sys::path::is_absolute(name) ? canonicalPath(name) : name.str();
  impl_->bufferByPath[impl_->mainPath] = id;
  return id;
}

std::string Compilation::stdlibDirectory() const {
  if (!options_.stdlibDir.empty())
    return options_.stdlibDir;
  if (std::optional<std::string> env = llvm::sys::Process::GetEnv("MODELC_STDLIB"))
    if (!env->empty())
      return *env;
  return MODELC_STDLIB_DIR;
}

const ast::Module *Compilation::loadModule(unsigned bufferId, const std::string &path,
                                           unsigned depth) {
  ParseOptions parseOptions;
  parseOptions.disableFree = options_.disableFree;
  std::unique_ptr<ast::Module> parsed = parseModule(sourceMgr_, bufferId, diags_, parseOptions);
  if (!parsed)
    return nullptr;
  if (parsed->fileName.empty())
    parsed->fileName = path;
  const ast::Module *module = parsed.get();
  size_t index = impl_->modules.size();
  impl_->modules.push_back(std::move(parsed));
  impl_->importMaps.emplace_back();
  impl_->moduleByPath[path] = module;
  impl_->inProgress.insert(path);

  llvm::StringMap<const ast::Module *> imports;
  llvm::SmallString<256> folder(path);
  llvm::sys::path::remove_filename(folder);
  for (const ast::ImportDecl &import : module->imports) {
    if (import.path.empty())
      continue;
    std::string dotted;
    for (const ast::Ident &part : import.path)
      dotted += (dotted.empty() ? "" : ".") + part.name;
    // `std.a.b` lives in the stdlib folder as a/b.mdl; `a.b` as a/b.mdl next
    // to the importing file or in an import path.
    bool isStd = import.path.front().name == "std" && import.path.size() > 1;
    llvm::SmallString<128> relative;
    for (size_t i = isStd ? 1 : 0; i < import.path.size(); ++i)
      llvm::sys::path::append(relative, import.path[i].name);
    relative += ".mdl";
    std::vector<std::string> roots;
    if (isStd) {
      roots.push_back(stdlibDirectory());
    } else {
      roots.push_back(std::string(folder));
      roots.insert(roots.end(), options_.importPaths.begin(), options_.importPaths.end());
    }
    std::optional<std::string> found;
    for (const std::string &root : roots) {
      llvm::SmallString<256> candidate(root);
      llvm::sys::path::append(candidate, relative);
      std::string canonical = canonicalPath(candidate);
      if (impl_->moduleByPath.count(canonical) || findOverlay(options_, canonical) ||
          llvm::sys::fs::exists(canonical)) {
        found = canonical;
        break;
      }
    }
    if (!found) {
      auto diag = diags_.report(DiagId::UnknownModule, import.range, dotted);
      diag.primary("no file `" + std::string(relative) + "` found");
      for (const std::string &root : roots)
        diag.note("searched " + root);
      imports.try_emplace(import.path.back().name, nullptr);
      continue;
    }
    const ast::Module *target = nullptr;
    if (impl_->inProgress.count(*found)) {
      diags_.report(DiagId::ImportCycle, import.range, dotted)
          .primary("this import leads back to a module that is still being loaded");
      imports.try_emplace(import.path.back().name, nullptr);
      continue;
    }
    if (auto it = impl_->moduleByPath.find(*found); it != impl_->moduleByPath.end()) {
      target = it->second;
    } else if (depth > 64) {
      diags_.report(DiagId::UnsupportedFeature, import.range, "imports nested over 64 deep");
      continue;
    } else {
      std::string error;
      std::optional<unsigned> id = loadBuffer(sourceMgr_, options_, *found, error);
      if (!id) {
        diags_.report(DiagId::UnknownModule, import.range, dotted).note("cannot read it: " + error);
        imports.try_emplace(import.path.back().name, nullptr);
        continue;
      }
      impl_->bufferByPath[*found] = *id;
      target = loadModule(*id, *found, depth + 1);
    }
    if (!target)
      continue;
    const std::string &alias = import.path.back().name;
    auto [it, inserted] = imports.try_emplace(alias, target);
    if (!inserted && it->second != target)
      diags_.report(DiagId::DuplicateDefinition, import.path.back().range, alias)
          .primary("another import is also named `" + alias + "`");
  }
  impl_->inProgress.erase(path);
  impl_->importMaps[index] = std::move(imports);
  return module;
}

bool Compilation::check() {
  if (impl_->checked || !impl_->mainBuffer)
    return !diags_.hasErrors();
  impl_->checked = true;
  loadModule(*impl_->mainBuffer, impl_->mainPath, 0);
  // Where the parser recovered, the checker sees a statement cut short (a
  // member without its call, a fn without its `return`): what it reports
  // there follows from the syntax error, which says what is wrong.
  std::vector<const char *> syntaxErrors;
  for (const Diagnostic &diag : diags_.diagnostics())
    if (diag.code().starts_with("E00") && diag.primaryRange().isValid())
      syntaxErrors.push_back(diag.primaryRange().begin.getPointer());
  sema::Checker checker(diags_, impl_->program);
  for (size_t i = 0; i < impl_->modules.size(); ++i)
    checker.addModule(*impl_->modules[i], impl_->importMaps[i]);
  checker.checkAll();
  if (!syntaxErrors.empty())
    dropFollowOnErrors(syntaxErrors);
  return !diags_.hasErrors();
}

void Compilation::dropFollowOnErrors(llvm::ArrayRef<const char *> syntaxErrors) {
  auto between = [&](const char *from, const char *to) {
    return llvm::any_of(syntaxErrors, [&](const char *at) { return from <= at && at <= to; });
  };
  // Each fn reaches to the next fn of its file (its recovered range may end
  // early).
  std::vector<std::pair<const char *, const char *>> fnNames; // (name, end of its region)
  for (const auto &module : impl_->modules) {
    const llvm::MemoryBuffer *buffer = sourceMgr_.getMemoryBuffer(module->bufferId);
    std::vector<const ast::FnDecl *> fns;
    for (const ast::ModelDecl &model : module->models)
      for (const ast::FnDecl &fn : model.fns)
        fns.push_back(&fn);
    llvm::sort(fns, [](const ast::FnDecl *a, const ast::FnDecl *b) {
      return a->range.begin.getPointer() < b->range.begin.getPointer();
    });
    for (size_t i = 0; i < fns.size(); ++i)
      fnNames.push_back(
          {fns[i]->name.range.begin.getPointer(),
           i + 1 < fns.size() ? fns[i + 1]->range.begin.getPointer() : buffer->getBufferEnd()});
  }
  diags_.eraseIf([&](const Diagnostic &diag) {
    Range at = diag.primaryRange();
    if (diag.code().starts_with("E00") || !at.isValid())
      return false;
    unsigned id = sourceMgr_.FindBufferContainingLoc(at.begin);
    if (id == 0)
      return false;
    const llvm::MemoryBuffer *buffer = sourceMgr_.getMemoryBuffer(id);
    if (diag.id == DiagId::MissingReturn)
      for (auto [name, end] : fnNames)
        if (name == at.begin.getPointer() && between(name, end))
          return true;
    // The line of the recovered statement.
    const char *lineStart = at.begin.getPointer(), *lineEnd = at.begin.getPointer();
    while (lineStart > buffer->getBufferStart() && lineStart[-1] != '\n')
      --lineStart;
    while (lineEnd < buffer->getBufferEnd() && *lineEnd != '\n')
      ++lineEnd;
    return between(lineStart, lineEnd);
  });
}

const ast::Module *Compilation::mainModule() const {
  return impl_->modules.empty() ? nullptr : impl_->modules.front().get();
}

std::vector<const ast::Module *> Compilation::modules() const {
  std::vector<const ast::Module *> out;
  for (const auto &m : impl_->modules)
    out.push_back(m.get());
  return out;
}

const sema::CheckedProgram *Compilation::program() const {
  return impl_->checked ? &impl_->program : nullptr;
}

std::optional<unsigned> Compilation::bufferForPath(llvm::StringRef path) const {
  auto it = impl_->bufferByPath.find(path);
  if (it != impl_->bufferByPath.end())
    return it->second;
  it = impl_->bufferByPath.find(canonicalPath(path));
  if (it != impl_->bufferByPath.end())
    return it->second;
  return std::nullopt;
}

static bool contains(Range r, llvm::SMLoc loc) {
  return r.isValid() && r.begin.getPointer() <= loc.getPointer() &&
         loc.getPointer() < r.end.getPointer();
}

std::string Compilation::describeOrigin(const sema::DeviceOrigin &origin) const {
  if (!origin.isKnown())
    return "";
  std::string at;
  if (origin.range.isValid()) {
    auto [line, col] = sourceMgr_.getLineAndColumn(origin.range.begin);
    at = " at " + std::to_string(line) + ":" + std::to_string(col);
  }
  switch (origin.kind) {
  case sema::DeviceOrigin::Kind::Inferred:
    if (!origin.subject.empty() && origin.message.contains("was inferred"))
      return "inferred from `" + origin.subject.str() + "`" + at;
    return "not yet inferred (created" + at + ")";
  case sema::DeviceOrigin::Kind::Placed:
    return "placed explicitly" + at;
  case sema::DeviceOrigin::Kind::Declared:
    return "declared" + at;
  case sema::DeviceOrigin::Kind::FnParam:
    return "from the fn parameter declared" + at;
  case sema::DeviceOrigin::Kind::Submodel:
    return "from the submodel's placement" + at;
  case sema::DeviceOrigin::Kind::Transfer:
    return "set by `.to`" + at;
  case sema::DeviceOrigin::Kind::None:
    break;
  }
  return "";
}

std::optional<SymbolInfo> Compilation::symbolAt(llvm::SMLoc loc) const {
  const sema::CheckedProgram &program = impl_->program;
  // A declared name wins: it is the smallest thing there.
  for (const sema::DeclSymbol &d : program.decls) {
    if (!contains(d.range, loc))
      continue;
    SymbolInfo info;
    info.range = d.range;
    info.name = d.name;
    info.type = d.typeText.empty() ? d.type.str() : d.typeText;
    if (d.type.isTensor() || d.type.kind() == sema::Type::Kind::Model)
      info.deviceOrigin = describeOrigin(d.origin);
    info.definition = d.range;
    info.doc = d.doc;
    return info;
  }
  const ast::Expr *best = nullptr;
  const sema::ExprInfo *bestInfo = nullptr;
  program.forEachExpr([&](const ast::Expr *expr, const sema::ExprInfo &info) {
    if (!contains(expr->range, loc))
      return;
    if (!best || expr->range.size() < best->range.size()) {
      best = expr;
      bestInfo = &info;
    }
  });
  if (!best)
    return std::nullopt;
  SymbolInfo info;
  info.range = best->range;
  info.name = bestInfo->name;
  if (info.name.empty() && llvm::isa<ast::NameExpr>(best))
    info.name = llvm::cast<ast::NameExpr>(best)->name;
  info.type = bestInfo->type.isError() ? "" : bestInfo->type.str();
  if (bestInfo->type.isTensor())
    info.deviceOrigin = describeOrigin(bestInfo->origin);
  info.definition = bestInfo->definition;
  info.doc = bestInfo->doc;
  return info;
}
