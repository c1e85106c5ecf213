//===- MessageInputTest.cpp - Bad messages become JSON-RPC errors ---------===//

#include "lsp/MessageInput.h"

#include <gtest/gtest.h>

using namespace modelc::lsp;

namespace {

/// The rewritten request's id, error code and message.
struct Rewritten {
  llvm::json::Value id = nullptr;
  int64_t code = 0;
};

std::optional<Rewritten> rewrite(std::string json) {
  if (!MessageInput::rewriteInvalid(json))
    return std::nullopt;
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(json);
  EXPECT_TRUE(static_cast<bool>(value));
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *object = value->getAsObject();
  EXPECT_EQ(object->getString("method"), kInvalidMessageMethod);
  Rewritten result;
  result.id = *object->get("id");
  result.code = *object->getObject("params")->getInteger("code");
  return result;
}

TEST(MessageInput, ValidMessagesPassUnchanged) {
  EXPECT_FALSE(rewrite(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})"));
  EXPECT_FALSE(rewrite(R"({"jsonrpc":"2.0","method":"initialized"})"));
  EXPECT_FALSE(rewrite(R"({"jsonrpc":"2.0","id":4,"result":null})")); // a response
}

TEST(MessageInput, MalformedJsonIsAParseError) {
  auto result = rewrite(R"({"jsonrpc":"2.0","id":1,"method":)");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->code, -32700);
  EXPECT_EQ(result->id, llvm::json::Value(nullptr));
  ASSERT_TRUE(rewrite("\xff\xfe not json"));
}

TEST(MessageInput, WrongShapesAreInvalidRequestsKeepingTheirId) {
  auto notObject = rewrite("[1, 2, 3]");
  ASSERT_TRUE(notObject);
  EXPECT_EQ(notObject->code, -32600);

  auto noVersion = rewrite(R"({"id":7,"method":"initialize"})");
  ASSERT_TRUE(noVersion);
  EXPECT_EQ(noVersion->code, -32600);
  EXPECT_EQ(noVersion->id, llvm::json::Value(7));

  auto numericMethod = rewrite(R"({"jsonrpc":"2.0","id":"x","method":42})");
  ASSERT_TRUE(numericMethod);
  EXPECT_EQ(numericMethod->id, llvm::json::Value("x"));

  auto neither = rewrite(R"({"jsonrpc":"2.0"})");
  ASSERT_TRUE(neither);
  EXPECT_EQ(neither->code, -32600);
}

} // namespace
