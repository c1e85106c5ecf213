//===- MessageInput.h - LSP input that turns bad messages into errors -*- C++ -*-===//
//
// LLVM's JSONTransport logs and skips a message that is not JSON, and stops
// the server on JSON that is not a JSON-RPC object. This input reads
// messages with LLVM's reader and rewrites either kind into a request for
// the internal method `$/modelc/invalidMessage`, whose handler answers with
// the JSON-RPC error (ParseError or InvalidRequest) the client is owed.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_LSP_MESSAGEINPUT_H
#define MODELC_LSP_MESSAGEINPUT_H

#include "llvm/Support/LSP/Transport.h"

#include <cstdio>
#include <string>

namespace modelc::lsp {

/// The method a rejected message is rewritten to.
inline constexpr llvm::StringLiteral kInvalidMessageMethod = "$/modelc/invalidMessage";

class MessageInput : public llvm::lsp::JSONTransportInput {
public:
  MessageInput(std::FILE *in, llvm::lsp::JSONStreamStyle style)
      : JSONTransportInput(style), file_(in, style) {}

  bool hasError() const override { return file_.hasError(); }
  bool isEndOfInput() const override { return file_.isEndOfInput(); }
  llvm::LogicalResult readDelimitedMessage(std::string &json) override;
  llvm::LogicalResult readStandardMessage(std::string &json) override;

  /// Replaces `json` by an `$/modelc/invalidMessage` request when it is not
  /// a JSON-RPC 2.0 object. Returns true when it did.
  static bool rewriteInvalid(std::string &json);

private:
  llvm::lsp::JSONTransportInputOverFile file_;
};

} // namespace modelc::lsp

#endif // MODELC_LSP_MESSAGEINPUT_H
