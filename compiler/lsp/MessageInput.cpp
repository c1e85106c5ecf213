//===- MessageInput.cpp - LSP input that turns bad messages into errors ---===//

#include "lsp/MessageInput.h"

using namespace llvm;

namespace modelc::lsp {

bool MessageInput::rewriteInvalid(std::string &json) {
  auto rewrite = [&](json::Value id, llvm::lsp::ErrorCode code, std::string why) {
    json::Value request =
        json::Object{{"jsonrpc", "2.0"},
                     {"id", std::move(id)},
                     {"method", kInvalidMessageMethod},
                     {"params", json::Object{{"code", int64_t(code)}, {"message", why}}}};
    json = formatv("{0}", request).str();
    return true;
  };
  Expected<json::Value> doc = json::parse(json);
  if (!doc)
    return rewrite(nullptr, llvm::lsp::ErrorCode::ParseError,
                   "invalid JSON: " + toString(doc.takeError()));
  const json::Object *object = doc->getAsObject();
  if (!object)
    return rewrite(nullptr, llvm::lsp::ErrorCode::InvalidRequest,
                   "a message must be a JSON object");
  const json::Value *id = object->get("id");
  json::Value replyId = id ? *id : json::Value(nullptr);
  if (object->getString("jsonrpc") != std::optional<StringRef>("2.0"))
    return rewrite(replyId, llvm::lsp::ErrorCode::InvalidRequest,
                   "a message must have \"jsonrpc\": \"2.0\"");
  // A response needs an id; a request or notification a string method.
  const json::Value *method = object->get("method");
  if (method ? !method->getAsString() : !id)
    return rewrite(replyId, llvm::lsp::ErrorCode::InvalidRequest,
                   "a message must have a string \"method\" or an \"id\"");
  return false;
}

LogicalResult MessageInput::readDelimitedMessage(std::string &json) {
  if (failed(file_.readDelimitedMessage(json)))
    return failure();
  // Trailing comments and blank lines after the last delimiter are no message.
  if (StringRef(json).trim().empty())
    return failure();
  rewriteInvalid(json);
  return success();
}

LogicalResult MessageInput::readStandardMessage(std::string &json) {
  if (failed(file_.readStandardMessage(json)))
    return failure();
  rewriteInvalid(json);
  return success();
}

} // namespace modelc::lsp
