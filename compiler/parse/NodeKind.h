//===- NodeKind.h - The exact kind of a parse-tree node ---------*- C++ -*-===//
//
// Finds what a parse-tree child is with one virtual call (accept) instead
// of a chain of failing dynamic_casts, which dominated the AST builder's
// time: ANTLR's contexts share long type names, so each failed cast costs
// several strcmp calls.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PARSE_NODEKIND_H
#define MODELC_PARSE_NODEKIND_H

#include "MdlBaseVisitor.h"
#include "MdlParser.h"

#include <cstdint>

namespace modelc::parse {

// Every labelled alternative and rule of the grammar the builder looks at.
#define MODELC_PARSE_NODE_KINDS(X)                                                                 \
  X(ImportDecl)                                                                                    \
  X(QualifiedName)                                                                                 \
  X(ModelDecl)                                                                                     \
  X(DevParams)                                                                                     \
  X(DevParam)                                                                                      \
  X(ValueParams)                                                                                   \
  X(ValueParam) X(StateMember) X(SubmodelMember) X(FnMember) X(FnParam) X(Type) X(TensorType)      \
      X(ScalarType) X(Dtype) X(Dim) X(DimAtom) X(Device) X(Block) X(LetStmt) X(ReturnStmt)         \
          X(ForStmt) X(AssignStmt) X(ExprStmt) X(Expr) X(Operand) X(CallPostfix) X(MemberPostfix)  \
              X(IndexPostfix) X(InstantiatePrimary) X(NamePrimary) X(IntPrimary) X(FloatPrimary)   \
                  X(BoolPrimary) X(StringPrimary) X(CpuPrimary) X(CudaPrimary) X(DtypePrimary)     \
                      X(ListPrimary) X(RepeatPrimary) X(ParenPrimary) X(Args) X(Arg) X(Slice)      \
                          X(SliceTail) X(ResultType) X(IfMember) X(MemberIf) X(MemberBlock)        \
                              X(OptionType) X(IfStmt) X(StmtIf) X(AssertMember) X(FnDTypes)        \
                                  X(FnDType)

enum class NodeKind : uint8_t {
  Other, // a rule the builder never looks at through a parent
  Token, // a real token
  Error, // a token conjured or skipped by error recovery
#define MODELC_NODE_ENUM(Name) Name,
  MODELC_PARSE_NODE_KINDS(MODELC_NODE_ENUM)
#undef MODELC_NODE_ENUM
};

struct Classified {
  NodeKind kind = NodeKind::Other;
  antlr4::ParserRuleContext *ctx = nullptr;    // rule kinds
  antlr4::tree::TerminalNode *token = nullptr; // Token and Error
  /// The context as its exact class; only valid for the matching kind.
  template <typename T> T *as() const { return static_cast<T *>(ctx); }
};

class NodeClassifier : public grammar::MdlBaseVisitor {
public:
  Classified classify(antlr4::tree::ParseTree *node) {
    result_ = {};
    if (node)
      node->accept(this);
    return result_;
  }

  antlrcpp::Any visitChildren(antlr4::tree::ParseTree * /*node*/) override { return {}; }
  antlrcpp::Any visitTerminal(antlr4::tree::TerminalNode *node) override {
    result_ = {NodeKind::Token, nullptr, node};
    return {};
  }
  antlrcpp::Any visitErrorNode(antlr4::tree::ErrorNode *node) override {
    result_ = {NodeKind::Error, nullptr, node};
    return {};
  }
#define MODELC_NODE_VISIT(Name)                                                                    \
  antlrcpp::Any visit##Name(grammar::MdlParser::Name##Context *ctx) override {                     \
    result_ = {NodeKind::Name, ctx, nullptr};                                                      \
    return {};                                                                                     \
  }
  MODELC_PARSE_NODE_KINDS(MODELC_NODE_VISIT)
#undef MODELC_NODE_VISIT

private:
  Classified result_;
};

} // namespace modelc::parse

#endif // MODELC_PARSE_NODEKIND_H
