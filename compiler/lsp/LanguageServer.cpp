//===- LanguageServer.cpp - `modelc lsp`: the language server -------------===//
//
// The message thread (LLVM's JSONTransport) keeps the open documents and
// answers requests; a CheckScheduler worker checks documents and publishes
// their diagnostics. Requests about a document wait until the check of its
// current text is in, so answers match what the user sees.
//
//===----------------------------------------------------------------------===//

#include "lsp/LanguageServer.h"
#include "lsp/CheckScheduler.h"
#include "lsp/DocumentAnalysis.h"
#include "lsp/MessageInput.h"
#include "lsp/SourceText.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/LSP/Logging.h"
#include "llvm/Support/LSP/Protocol.h"
#include "llvm/Support/LSP/Transport.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <ctime>
#include <exception>
#include <map>
#include <memory>
#include <mutex>

using namespace llvm;
using llvm::lsp::Callback;
using llvm::lsp::Logger;

#ifndef MODELC_SOURCE_DIR
#define MODELC_SOURCE_DIR ""
#endif

namespace modelc::lsp {
namespace {

namespace proto = llvm::lsp;

/// How long a request waits for the check of the document's current text
/// (a 5 MB file takes seconds on a busy machine). Past that it fails with
/// ContentModified rather than answer from older text.
constexpr std::chrono::seconds kRequestWait{30};

/// CPU time of the calling thread (wall time on a loaded machine says
/// little about the check itself).
double threadCpuMs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

std::string normalizedPath(StringRef path) {
  SmallString<256> result(path);
  sys::path::remove_dots(result, /*remove_dot_dot=*/true);
  return result.str().str();
}

Error unknownDocument(const proto::URIForFile &uri) {
  return make_error<proto::LSPError>(
      formatv("unknown document {0}: open it first", uri.uri()).str(),
      proto::ErrorCode::InvalidParams);
}

struct OpenDocument {
  proto::URIForFile uri;
  std::string text;
  int64_t version = 0;
};

/// The `$/modelc/invalidMessage` params MessageInput builds.
struct InvalidMessageParams {
  int64_t code = 0;
  std::string message;
};
bool fromJSON(const json::Value &value, InvalidMessageParams &result, json::Path path) {
  json::ObjectMapper o(value, path);
  return o && o.map("code", result.code) && o.map("message", result.message);
}

class Server {
public:
  Server(const LspOptions &options, proto::MessageHandler &handler);

  bool shutdownRequested() const { return shutdownRequested_; }

private:
  // Lifecycle.
  void onInitialize(const proto::InitializeParams &, Callback<json::Value>);
  void onInitialized(const proto::InitializedParams &) {}
  void onShutdown(const proto::NoParams &, Callback<std::nullptr_t>);
  void onInvalidMessage(const InvalidMessageParams &, Callback<json::Value>);

  // Document sync.
  void onOpen(const proto::DidOpenTextDocumentParams &);
  void onChange(const proto::DidChangeTextDocumentParams &);
  void onClose(const proto::DidCloseTextDocumentParams &);
  void onSave(const proto::DidCloseTextDocumentParams &);

  // Features.
  void onHover(const proto::TextDocumentPositionParams &, Callback<json::Value>);
  void onDefinition(const proto::TextDocumentPositionParams &, Callback<json::Value>);
  void onDocumentSymbol(const proto::DocumentSymbolParams &, Callback<json::Value>);
  void onCompletion(const proto::CompletionParams &, Callback<json::Value>);
  void onCodeAction(const proto::CodeActionParams &, Callback<json::Value>);

  /// Runs on the worker: checks the document at `path`.
  CheckScheduler::Commit check(StringRef path);
  /// Schedules `path` and every open document that imports it.
  void recheck(StringRef path);
  void recheckDependents(StringRef path);
  /// The analysis of the document's current text (waiting for it).
  Expected<std::shared_ptr<const DocumentAnalysis>> analysisFor(const proto::URIForFile &uri);

  CompileOptions baseOptions_;
  std::string explainUrl_;
  bool shutdownRequested_ = false;
  proto::OutgoingNotification<json::Value> publishDiagnostics_;

  std::mutex docsMutex_; // documents_ is read by the worker
  std::map<std::string, OpenDocument> documents_;
  std::mutex analysesMutex_;
  StringMap<std::shared_ptr<const DocumentAnalysis>> analyses_;

  // Last: destroyed first, so the worker stops before the state it uses.
  CheckScheduler scheduler_;
};

Server::Server(const LspOptions &options, proto::MessageHandler &handler)
    : scheduler_([this](StringRef path) { return check(path); }) {
  baseOptions_.importPaths = options.importPaths;
  baseOptions_.stdlibDir = options.stdlibDir;
  explainUrl_ = options.explainUrl;
  if (explainUrl_.empty())
    explainUrl_ = "file://" MODELC_SOURCE_DIR "/docs/diagnostics/{0}.md";
  publishDiagnostics_ =
      handler.outgoingNotification<json::Value>("textDocument/publishDiagnostics");

  handler.method("initialize", this, &Server::onInitialize);
  handler.notification("initialized", this, &Server::onInitialized);
  handler.method("shutdown", this, &Server::onShutdown);
  handler.method(kInvalidMessageMethod, this, &Server::onInvalidMessage);
  handler.notification("textDocument/didOpen", this, &Server::onOpen);
  handler.notification("textDocument/didChange", this, &Server::onChange);
  handler.notification("textDocument/didClose", this, &Server::onClose);
  // didSave carries the same identifier as didClose (text is not asked for).
  handler.notification("textDocument/didSave", this, &Server::onSave);
  handler.method("textDocument/hover", this, &Server::onHover);
  handler.method("textDocument/definition", this, &Server::onDefinition);
  handler.method("textDocument/documentSymbol", this, &Server::onDocumentSymbol);
  handler.method("textDocument/completion", this, &Server::onCompletion);
  handler.method("textDocument/codeAction", this, &Server::onCodeAction);
}

//===----------------------------------------------------------------------===//
// Lifecycle
//===----------------------------------------------------------------------===//

void Server::onInitialize(const proto::InitializeParams &, Callback<json::Value> reply) {
  json::Object capabilities{
      {"textDocumentSync", json::Object{{"openClose", true},
                                        {"change", int(proto::TextDocumentSyncKind::Incremental)},
                                        {"save", json::Object{{"includeText", false}}}}},
      {"hoverProvider", true},
      {"definitionProvider", true},
      {"documentSymbolProvider", true},
      {"completionProvider",
       json::Object{{"triggerCharacters", json::Array{"."}}, {"resolveProvider", false}}},
      {"codeActionProvider", json::Object{{"codeActionKinds", json::Array{"quickfix"}}}},
  };
  reply(json::Object{
      {"capabilities", std::move(capabilities)},
      {"serverInfo", json::Object{{"name", "modelc-lsp"}, {"version", "0.1.0"}}},
  });
}

void Server::onShutdown(const proto::NoParams &, Callback<std::nullptr_t> reply) {
  // Let queued checks publish, so a client sees the final diagnostics.
  scheduler_.waitIdle();
  shutdownRequested_ = true;
  reply(nullptr);
}

void Server::onInvalidMessage(const InvalidMessageParams &params, Callback<json::Value> reply) {
  reply(make_error<proto::LSPError>(params.message, proto::ErrorCode(params.code)));
}

//===----------------------------------------------------------------------===//
// Documents and checks
//===----------------------------------------------------------------------===//

CheckScheduler::Commit Server::check(StringRef path) {
  CompileOptions options = baseOptions_;
  OpenDocument document;
  {
    std::lock_guard<std::mutex> lock(docsMutex_);
    auto it = documents_.find(path.str());
    if (it == documents_.end())
      return nullptr;
    document = it->second;
    for (const auto &[file, open] : documents_)
      options.overlays.emplace_back(file, open.text);
  }
  std::shared_ptr<const DocumentAnalysis> analysis;
  auto started = std::chrono::steady_clock::now();
  double cpuStarted = threadCpuMs();
  try {
    analysis = std::make_shared<const DocumentAnalysis>(
        std::move(options), path.str(), document.version, document.text, explainUrl_);
  } catch (const std::exception &error) {
    Logger::error("checking {0} failed: {1}", path, error.what());
    return nullptr;
  }
  Logger::info("checked {0} (version {1}) in {2} ms ({3:f1} ms of CPU)", path, document.version,
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - started)
                   .count(),
               threadCpuMs() - cpuStarted);
  return [this, analysis, uri = document.uri] {
    publishDiagnostics_(analysis->publishParams(uri));
    std::lock_guard<std::mutex> lock(analysesMutex_);
    analyses_[analysis->path()] = analysis;
  };
}

void Server::recheck(StringRef path) {
  scheduler_.schedule(path);
  recheckDependents(path);
}

void Server::recheckDependents(StringRef path) {
  // Open files that import `path`, and those not checked yet (whose first
  // check may have read the old text), see the new text on a new check.
  std::vector<std::string> others;
  {
    std::lock_guard<std::mutex> lock(docsMutex_);
    for (const auto &entry : documents_)
      if (entry.first != path)
        others.push_back(entry.first);
  }
  std::lock_guard<std::mutex> lock(analysesMutex_);
  for (const std::string &other : others) {
    auto it = analyses_.find(other);
    if (it == analyses_.end() || llvm::any_of(it->second->dependencies(), [&](StringRef dep) {
          return normalizedPath(dep) == path;
        }))
      scheduler_.schedule(other);
  }
}

void Server::onOpen(const proto::DidOpenTextDocumentParams &params) {
  std::string path = normalizedPath(params.textDocument.uri.file());
  {
    std::lock_guard<std::mutex> lock(docsMutex_);
    documents_[path] = {params.textDocument.uri, params.textDocument.text,
                        params.textDocument.version};
  }
  recheck(path);
}

void Server::onChange(const proto::DidChangeTextDocumentParams &params) {
  std::string path = normalizedPath(params.textDocument.uri.file());
  {
    std::lock_guard<std::mutex> lock(docsMutex_);
    auto it = documents_.find(path);
    if (it == documents_.end()) {
      Logger::error("didChange for {0}, which is not open", params.textDocument.uri.uri());
      return;
    }
    OpenDocument &document = it->second;
    for (const proto::TextDocumentContentChangeEvent &change : params.contentChanges)
      if (Error error = applyChange(document.text, change)) {
        // The editor and the server disagree now; keep what applied.
        Logger::error("didChange for {0}: {1}", params.textDocument.uri.uri(),
                      toString(std::move(error)));
        break;
      }
    document.version = params.textDocument.version;
  }
  recheck(path);
}

void Server::onClose(const proto::DidCloseTextDocumentParams &params) {
  std::string path = normalizedPath(params.textDocument.uri.file());
  {
    std::lock_guard<std::mutex> lock(docsMutex_);
    if (!documents_.erase(path))
      return;
  }
  scheduler_.cancel(path);
  scheduler_.waitFor(path, kRequestWait);
  {
    std::lock_guard<std::mutex> lock(analysesMutex_);
    analyses_.erase(path);
  }
  // Clear its diagnostics; files importing it now read it from disk.
  publishDiagnostics_(
      json::Object{{"uri", params.textDocument.uri.uri().str()}, {"diagnostics", json::Array()}});
  recheckDependents(path);
}

void Server::onSave(const proto::DidCloseTextDocumentParams &params) {
  std::string path = normalizedPath(params.textDocument.uri.file());
  {
    std::lock_guard<std::mutex> lock(docsMutex_);
    if (!documents_.count(path))
      return;
  }
  recheck(path);
}

Expected<std::shared_ptr<const DocumentAnalysis>>
Server::analysisFor(const proto::URIForFile &uri) {
  std::string path = normalizedPath(uri.file());
  {
    std::lock_guard<std::mutex> lock(docsMutex_);
    if (!documents_.count(path))
      return unknownDocument(uri);
  }
  if (!scheduler_.waitFor(path, kRequestWait))
    return make_error<proto::LSPError>(
        formatv("{0} is still being checked; try again", uri.uri()).str(),
        proto::ErrorCode::ContentModified);
  std::lock_guard<std::mutex> lock(analysesMutex_);
  auto it = analyses_.find(path);
  if (it == analyses_.end())
    return make_error<proto::LSPError>(formatv("{0} could not be checked", uri.uri()).str(),
                                       proto::ErrorCode::RequestFailed);
  return it->second;
}

//===----------------------------------------------------------------------===//
// Features
//===----------------------------------------------------------------------===//

void Server::onHover(const proto::TextDocumentPositionParams &params, Callback<json::Value> reply) {
  auto analysis = analysisFor(params.textDocument.uri);
  if (!analysis)
    return reply(analysis.takeError());
  Expected<SMLoc> loc = (*analysis)->locate(params.position);
  if (!loc)
    return reply(loc.takeError());
  std::optional<proto::Hover> hover = (*analysis)->hover(*loc);
  reply(hover ? toJSON(*hover) : json::Value(nullptr));
}

void Server::onDefinition(const proto::TextDocumentPositionParams &params,
                          Callback<json::Value> reply) {
  auto analysis = analysisFor(params.textDocument.uri);
  if (!analysis)
    return reply(analysis.takeError());
  Expected<SMLoc> loc = (*analysis)->locate(params.position);
  if (!loc)
    return reply(loc.takeError());
  json::Array locations;
  for (const proto::Location &location : (*analysis)->definition(*loc))
    locations.push_back(locationToJSON(location));
  reply(std::move(locations));
}

void Server::onDocumentSymbol(const proto::DocumentSymbolParams &params,
                              Callback<json::Value> reply) {
  auto analysis = analysisFor(params.textDocument.uri);
  if (!analysis)
    return reply(analysis.takeError());
  json::Array symbols;
  for (const proto::DocumentSymbol &symbol : (*analysis)->symbols())
    symbols.push_back(toJSON(symbol));
  reply(std::move(symbols));
}

void Server::onCompletion(const proto::CompletionParams &params, Callback<json::Value> reply) {
  auto analysis = analysisFor(params.textDocument.uri);
  if (!analysis)
    return reply(analysis.takeError());
  std::string text;
  {
    std::lock_guard<std::mutex> lock(docsMutex_);
    auto it = documents_.find(normalizedPath(params.textDocument.uri.file()));
    if (it == documents_.end())
      return reply(unknownDocument(params.textDocument.uri));
    text = it->second.text;
  }
  if (!offsetOf(text, params.position))
    return reply(make_error<proto::LSPError>(
        formatv("position {0} is outside the document", params.position).str(),
        proto::ErrorCode::InvalidParams));
  reply(toJSON((*analysis)->complete(text, params.position)));
}

void Server::onCodeAction(const proto::CodeActionParams &params, Callback<json::Value> reply) {
  auto analysis = analysisFor(params.textDocument.uri);
  if (!analysis)
    return reply(analysis.takeError());
  reply((*analysis)->codeActions(params.range));
}

} // namespace
} // namespace modelc::lsp

namespace modelc {

int runLanguageServer(const LspOptions &options) {
  Logger::setLogLevel(options.logLevel == "debug"  ? Logger::Level::Debug
                      : options.logLevel == "info" ? Logger::Level::Info
                                                   : Logger::Level::Error);
  raw_ostream &out = options.out ? *options.out : llvm::outs();
  auto style = options.litTest ? llvm::lsp::JSONStreamStyle::Delimited
                               : llvm::lsp::JSONStreamStyle::Standard;
  llvm::lsp::JSONTransport transport(std::make_unique<lsp::MessageInput>(options.in, style), out,
                                     options.litTest || options.prettyOutput);
  llvm::lsp::MessageHandler handler(transport);
  lsp::Server server(options, handler);
  // run() returns success after `exit`; an error at the end of the input
  // (the client went away), which ends the server just as cleanly.
  if (Error error = transport.run(handler)) {
    Logger::info("end of input: {0}", toString(std::move(error)));
    return 0;
  }
  return server.shutdownRequested() ? 0 : 1;
}

} // namespace modelc
