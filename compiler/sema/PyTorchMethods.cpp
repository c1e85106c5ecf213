//===- PyTorchMethods.cpp - PyTorch's tensor methods, spelled as here -----===//
//
// Ported code calls tensor methods that .mdl spells differently or does not
// need. Where such a call is E0104 (no such member) or E0105 (a list given
// as separate arguments), the help rewrites it: the edits are exact, so the
// fix is machine-applicable (fixes/apply-suggestions.test applies each).
// PyTorch's namespaces (`torch.flatten`, `F.relu`) name built-ins that are
// global here: the help drops the prefix.
//
//===----------------------------------------------------------------------===//

#include "sema/Checker.h"
#include "sema/ResolveName.h"

using namespace modelc;
using namespace modelc::sema;

std::vector<Edit> Checker::wrapArgsInList(const ast::CallExpr &call, size_t first) {
  if (first >= call.args.size())
    return {};
  for (size_t i = first; i < call.args.size(); ++i)
    if (call.args[i].name || !call.args[i].value)
      return {};
  if (llvm::isa<ast::ListExpr>(call.args[first].value.get()))
    return {};
  Range open = call.args[first].range, close = call.args.back().range;
  return {{{open.begin, open.begin}, "["}, {close.after(), "]"}};
}

void Checker::helpWithDeviceArgument(DiagnosticBuilder &diag, const ast::CallExpr &call,
                                     const ast::Arg &arg) {
  auto at = llvm::find_if(call.args, [&](const ast::Arg &a) { return &a == &arg; });
  if (at == call.args.end() || !arg.value)
    return;
  // With the `,` before it (or after it, when it comes first).
  Range removed = arg.range;
  if (at != call.args.begin())
    removed.begin = std::prev(at)->range.end;
  else if (std::next(at) != call.args.end())
    removed.end = std::next(at)->range.begin;
  diag.help("a tensor's device is part of its type, not an argument: without it the device is "
            "inferred from the value's use; `" +
                call.callee->range.text().str() + "(...) @ " + arg.value->range.text().str() +
                "` places it explicitly",
            {{removed, ""}});
}

bool Checker::helpWithTorchMethod(DiagnosticBuilder &diag, const ast::CallExpr &call,
                                  const ast::MemberExpr &method, const Type &tensor) {
  llvm::StringRef name = method.member.name;
  // From the method's name to the call's `)`.
  Range nameToEnd{method.member.range.begin, call.range.end};
  bool positional = llvm::all_of(call.args, [](const ast::Arg &a) { return !a.name; });
  if (name == "size" && call.args.size() <= 1 && positional) {
    std::string replacement =
        call.args.empty() ? "shape" : "shape[" + call.args[0].value->range.text().str() + "]";
    diag.help("PyTorch's `size` is `shape` here, a tuple of the dims of the tensor's type",
              {{nameToEnd, replacement}});
    return true;
  }
  if (name == "view" && !call.args.empty() && positional) {
    std::vector<Edit> edits = {{method.member.range, "reshape"}};
    if (call.args.size() > 1 || !llvm::isa<ast::ListExpr>(call.args[0].value.get())) {
      std::vector<Edit> wrap = wrapArgsInList(call, 0);
      edits.insert(edits.end(), wrap.begin(), wrap.end());
    }
    diag.help("PyTorch's `view` is `reshape` here, which takes the sizes as one list", edits);
    return true;
  }
  // Tensors are values here: there is no storage to make contiguous, no
  // autograd graph to detach from, and nothing a copy would protect.
  if ((name == "contiguous" || name == "detach" || name == "clone") && call.args.empty()) {
    diag.help("`" + name.str() + "()` has nothing to do here (tensors are values): remove it",
              {{{method.base->range.end, call.range.end}, ""}});
    return true;
  }
  if (name == "pow" && call.args.size() == 1 && positional) {
    const ast::Expr &exponent = *call.args[0].value;
    bool simple = llvm::isa<ast::IntLitExpr, ast::FloatLitExpr, ast::NameExpr>(exponent);
    std::string text = exponent.range.text().str();
    diag.help(
        "PyTorch's `pow` is the operator `**` here",
        {{{method.base->range.end, call.range.end}, " ** " + (simple ? text : "(" + text + ")")}});
    return true;
  }
  // PyTorch's conversions by dtype name: `cast` here.
  static const std::pair<llvm::StringRef, llvm::StringRef> kConversions[] = {
      {"half", "f16"}, {"bfloat16", "bf16"}, {"double", "f64"}, {"long", "i64"}};
  for (auto [torchName, dtype] : kConversions)
    if (name == torchName && call.args.empty()) {
      diag.help(
          "PyTorch's `." + name.str() + "()` is `cast(x, " + dtype.str() + ")` here",
          {{call.range, "cast(" + method.base->range.text().str() + ", " + dtype.str() + ")"}});
      return true;
    }
  if (name == "t" && call.args.empty() && !tensor.shape.hasPack() &&
      tensor.shape.dims.size() == 2) {
    diag.help("PyTorch's `t()` is `.T` here", {{nameToEnd, "T"}});
    return true;
  }
  if ((name == "dim" || name == "ndimension") && call.args.empty() && !tensor.shape.hasPack()) {
    diag.help("the rank is in the type: " + std::to_string(tensor.shape.dims.size()),
              {{call.range, std::to_string(tensor.shape.dims.size())}});
    return true;
  }
  return false;
}

bool Checker::reportTorchNamespace(const ast::CallExpr &call, const ast::MemberExpr &callee) {
  // The names of the chain, root first: `torch.nn.functional.relu`.
  llvm::SmallVector<llvm::StringRef, 4> path = {callee.member.name};
  const ast::Expr *at = callee.base.get();
  while (auto *member = llvm::dyn_cast<ast::MemberExpr>(at)) {
    path.insert(path.begin(), member->member.name);
    at = member->base.get();
  }
  auto *root = llvm::dyn_cast<ast::NameExpr>(at);
  if (!root || !isBuiltin(callee.member.name))
    return false;
  path.insert(path.begin(), root->name);
  llvm::ArrayRef<llvm::StringRef> prefix = llvm::ArrayRef(path).drop_back();
  auto is = [&](std::initializer_list<llvm::StringRef> names) {
    return prefix.size() == names.size() && std::equal(names.begin(), names.end(), prefix.begin());
  };
  bool torch = is({"torch"}) || is({"F"}) || is({"torch", "nn", "functional"});
  bool functional = is({"nn", "functional"});
  // `torch` and `F` only where they name nothing here.
  if (!(torch && detail::resolveName(*this, root->name).kind == detail::Resolved::Kind::None) &&
      !functional)
    return false;
  for (const ast::Arg &a : call.args)
    if (a.value)
      checkExpr(*a.value);
  std::string written = callee.range.text().str();
  auto diag = functional ? diags_.report(DiagId::UnknownMember, callee.base->range, "module `nn`",
                                         "functional")
                         : diags_.report(DiagId::UnknownName, root->range, root->name);
  if (!functional)
    diag.primary("not found in this scope");
  // The arguments may still be written PyTorch's way (`zeros(2, 3)`):
  // review the call after the rewrite.
  diag.help("PyTorch's `" + written + "` is the built-in `" + callee.member.name + "` here",
            {{{root->range.begin, callee.member.range.begin}, ""}}, Applicability::MaybeIncorrect);
  return true;
}
