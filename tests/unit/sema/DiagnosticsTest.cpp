//===- DiagnosticsTest.cpp - Each code the checker emits, and no cascades -===//

#include "SemaTestSupport.h"

using namespace modelc;
using namespace modelc::test;

namespace {

Checked check(llvm::StringRef src) { return checkSource(src); }

TEST(DiagnosticsTest, UnknownNameReportedOncePerFn) {
  Checked c = check(R"(model M<D: device>(n: int) {
  fn f(x: f32[n]) -> f32[n] {
    let a = x + foo
    let b = foo * 2
    return relu(foo)
  }
  fn g(x: f32[n]) -> f32[n] { return foo }
})");
  EXPECT_EQ(c.codes(), (std::vector<std::string>{"E0101", "E0101"})) << c.dump();
  EXPECT_EQ(c.find("E0101")->message, "cannot find `foo` in this scope");
  EXPECT_EQ(c.find("E0101")->primaryRange().text(), "foo");
}

TEST(DiagnosticsTest, ErrorsDoNotCascade) {
  Checked c = check(R"(model M<D: device>(n: int) {
  param w: f32[n, n]
  fn f(x: f32[B, n], y: f32[B, 3]) -> f32[B, n] {
    let bad = x + y
    let worse = relu(bad) @ w
    let still = worse.sum(dim: 0) + x
    return still
  }
})");
  EXPECT_EQ(c.codes(), std::vector<std::string>{"E0401"}) << c.dump();
  const Diagnostic &d = *c.find("E0401");
  EXPECT_EQ(d.message, "shapes [B, n] and [B, 3] cannot be broadcast in `+`");
}

TEST(DiagnosticsTest, IndependentErrorsAreAllReported) {
  Checked c = check(R"(model M<D: device>(n: int) {
  buffer s: f32[n] @ cpu
  fn f(x: f32[n], i: f32[n]) -> f32[n] {
    let a = x + s
    let b = exp(cast(i, i32))
    let e = embedding(i, zeros([n, n]) @ D)
    return x
  }
})");
  EXPECT_EQ(c.codes(), (std::vector<std::string>{"E0301", "E0202", "E0203"})) << c.dump();
}

TEST(DiagnosticsTest, NamesAndStructure) {
  Checked dup = check("model A<D: device> { }\nmodel A<D: device> { }");
  EXPECT_EQ(dup.codes(), std::vector<std::string>{"E0102"});
  Checked state = check(R"(model A<D: device>(n: int) {
  param w: f32[n]
  param w: f32[n]
})");
  EXPECT_EQ(state.codes(), std::vector<std::string>{"E0102"}) << state.dump();
  Checked member = check(R"(import std.nn
model A<D: device>(n: int) {
  l = nn.Linear(n, n)
  fn f(x: f32[B, n]) -> f32[B, n] { return l.nope(x) }
})");
  EXPECT_EQ(member.codes(), std::vector<std::string>{"E0104"}) << member.dump();
  EXPECT_EQ(member.find("E0104")->message, "model Linear<D> has no member `nope`");
  Checked notCallable = check(R"(model A<D: device>(n: int) {
  param w: f32[n]
  fn f(x: f32[n]) -> f32[n] { return w(x) }
})");
  EXPECT_EQ(notCallable.codes(), std::vector<std::string>{"E0108"}) << notCallable.dump();
  Checked devVar = check("model A<D: device>(n: int) {\n  param w: f32[n] @ E\n}");
  EXPECT_EQ(devVar.codes(), std::vector<std::string>{"E0110"});
  Checked assign = check(R"(model A<D: device>(n: int) {
  fn f(x: f32[n]) -> f32[n] {
    x = relu(x)
    return x
  }
})");
  EXPECT_EQ(assign.codes(), std::vector<std::string>{"E0111"}) << assign.dump();
  Checked entry = check(R"(model Inner<D: device>(n: int) { fn g(x: f32[n]) -> f32[n] { return x } }
model A<D: device>(n: int) {
  i = Inner(n)
  fn f(x: f32[n]) -> f32[n] { return i(x) }
})");
  EXPECT_EQ(entry.codes(), std::vector<std::string>{"E0113"}) << entry.dump();
}

TEST(DiagnosticsTest, SubmodelArguments) {
  std::string lib = R"(import std.nn
model A<D: device>(n: int) {
  l = nn.Linear(n, 4)
  fn f(x: f32[B, n], y: f16[B, n], z: f32[B, 3], w: f32[B, n] @ cpu) -> f32[B, 4] {
)";
  Checked dtype = check(lib + "    return l(y)\n  }\n}");
  ASSERT_EQ(dtype.codes(), std::vector<std::string>{"E0201"}) << dtype.dump();
  EXPECT_EQ(dtype.find("E0201")->message, "mismatched dtypes: f16 and f32 in `l`");
  Checked shape = check(lib + "    return l(z)\n  }\n}");
  ASSERT_EQ(shape.codes(), std::vector<std::string>{"E0408"}) << shape.dump();
  EXPECT_EQ(shape.find("E0408")->message, "shape mismatch: expected [B, n], found [B, 3]");
  Checked device = check(lib + "    return l(w)\n  }\n}");
  ASSERT_EQ(device.codes(), std::vector<std::string>{"E0305"}) << device.dump();
  const Diagnostic &d = *device.find("E0305");
  EXPECT_EQ(d.message, "argument `x` of `l` is on cpu, expected D");
  EXPECT_EQ(d.primaryRange().text(), "w");
  ASSERT_EQ(d.notes.size(), 2u) << device.dump();
  EXPECT_EQ(d.notes[0].message, "`w` is a fn parameter declared on cpu here");
  EXPECT_EQ(d.notes[1].message, "submodel `l` is placed with the model on D here");
  ASSERT_FALSE(d.suggestions.empty());
  EXPECT_EQ(d.suggestions[0].edits[0].replacement, ".to(D)");
  Checked count = check(lib + "    return l(x, x)\n  }\n}");
  EXPECT_EQ(count.codes(), std::vector<std::string>{"E0105"});
  Checked ok = check(lib + "    return l(x)\n  }\n}");
  EXPECT_TRUE(ok.ok) << ok.dump();
}

TEST(DiagnosticsTest, ReturnTypes) {
  std::string head =
      "model A<D: device>(n: int) {\n  fn f(x: f32[B, n], c: f32[B, n] @ cpu) -> f32[B, n] {\n";
  Checked device = check(head + "    return c\n  }\n}");
  ASSERT_EQ(device.codes(), std::vector<std::string>{"E0307"}) << device.dump();
  EXPECT_EQ(device.find("E0307")->message,
            "returned value is on cpu, but `f` returns f32[B, n] @ D");
  EXPECT_EQ(device.find("E0307")->suggestions[0].edits[0].replacement, ".to(D)");
  Checked shape = check(head + "    return sum(x, dim: 0)\n  }\n}");
  EXPECT_EQ(shape.codes(), std::vector<std::string>{"E0408"}) << shape.dump();
  Checked dtype = check(head + "    return cast(x, f16)\n  }\n}");
  EXPECT_EQ(dtype.codes(), std::vector<std::string>{"E0201"}) << dtype.dump();
  Checked missing = check(head + "    let y = x\n  }\n}");
  EXPECT_EQ(missing.codes(), std::vector<std::string>{"E0503"}) << missing.dump();
  Checked extra = check("model A<D: device>(n: int) {\n  fn f(x: f32[n]) {\n    return x\n  }\n}");
  EXPECT_EQ(extra.codes(), std::vector<std::string>{"E0505"}) << extra.dump();
}

TEST(DiagnosticsTest, DeviceInference) {
  // The first use binds the noise's device; a second, different one conflicts.
  Checked c = check(R"(model A(n: int) {
  fn f(x: f32[n] @ cuda:0, y: f32[n] @ cuda:1) -> f32[n] @ cuda:0 {
    let noise = randn([n])
    let a = x + noise
    let b = y + noise
    return a
  }
})");
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0301"}) << c.dump();
  const Diagnostic &d = *c.find("E0301");
  EXPECT_EQ(d.primaryRange().text(), "y");
  bool noteNamesFirstUse = llvm::any_of(d.notes, [](const Note &n) {
    return n.message == "the device cuda:0 of `randn([n])` was inferred from `x + noise` here" &&
           !n.labels.empty() && n.labels[0].range.text() == "x + noise";
  });
  EXPECT_TRUE(noteNamesFirstUse) << c.dump();

  // Inference through a chain of creations and a call argument.
  Checked chain = check(R"(import std.nn
model A<D: device>(n: int) {
  l = nn.Linear(n, n)
  fn f(x: f32[B, n]) -> f32[B, n] {
    let a = zeros([B, n])
    let b = a + ones([B, n])
    return l(b) + x
  }
})");
  EXPECT_TRUE(chain.ok) << chain.dump();

  // Two creations used only with each other: one report for the class.
  Checked loose = check(R"(model A<D: device>(n: int) {
  fn f(x: f32[n]) -> f32[n] {
    let a = zeros([n]) + ones([n])
    return x
  }
})");
  EXPECT_EQ(loose.codes(), std::vector<std::string>{"E0302"}) << loose.dump();
  EXPECT_EQ(loose.find("E0302")->primaryRange().text(), "zeros([n])");
}

TEST(DiagnosticsTest, PlacementOfExistingValue) {
  Checked c = check(R"(model A<D: device>(n: int) {
  fn f(x: f32[n] @ cpu) -> f32[n] {
    return x @ D
  }
})");
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0306"}) << c.dump();
  const Diagnostic &d = *c.find("E0306");
  EXPECT_EQ(d.message, "`@ D` can only place a newly created tensor");
  EXPECT_EQ(d.primaryRange().text(), "@ D");
  ASSERT_EQ(d.suggestions.size(), 1u);
  EXPECT_NE(applyEdits(c, d.suggestions[0]).find("return x.to(D)\n"), std::string::npos)
      << applyEdits(c, d.suggestions[0]);
}

TEST(DiagnosticsTest, StateNeedsADevice) {
  Checked c = check(R"(model A(n: int) {
  param w: f32[n]
})");
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0308"}) << c.dump();
  const Diagnostic &d = *c.find("E0308");
  EXPECT_EQ(d.message, "cannot place `w`: model `A` has no device parameter");
  ASSERT_EQ(d.suggestions.size(), 2u);
  EXPECT_EQ(d.suggestions[0].edits[0].replacement, "<D: device>");
  EXPECT_NE(applyEdits(c, d.suggestions[0]).find("model A<D: device>(n: int)"), std::string::npos);
  Checked sub = check("import std.nn\nmodel A(n: int) {\n  l = nn.Linear(n, n)\n}");
  EXPECT_EQ(sub.codes(), std::vector<std::string>{"E0308"}) << sub.dump();
  Checked pinned = check("import std.nn\nmodel A(n: int) {\n  l = nn.Linear<cuda:0>(n, n)\n}");
  EXPECT_TRUE(pinned.ok) << pinned.dump();
}

TEST(DiagnosticsTest, StateInitialisers) {
  Checked ok = check(R"(model A<D: device>(n: int) {
  buffer running: f32[n] = zeros([n])
  buffer host: f32[n] @ cpu = ones([n])
})");
  EXPECT_TRUE(ok.ok) << ok.dump();
  Checked bad = check(R"(import std.nn
model A<D: device>(n: int) {
  buffer running: f32[n] = zeros([n]) @ cpu
  buffer wrong: f32[n] = zeros([3])
  buffer layer: f32[n] = nn.Linear(n, n)
})");
  EXPECT_EQ(bad.codes(), (std::vector<std::string>{"E0303", "E0408", "E0502"})) << bad.dump();
}

TEST(DiagnosticsTest, DeviceGenericModelsKeepDRigid) {
  Checked c = check(R"(model A<D: device>(n: int) {
  fn f(x: f32[n], y: f32[n] @ cuda:0) -> f32[n] {
    return x + y
  }
})");
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0301"}) << c.dump();
  EXPECT_EQ(c.find("E0301")->primaryRange().text(), "y");
}

TEST(DiagnosticsTest, ImportsResolveAndReportMissingModules) {
  Checked missing = check("import std.nope\nmodel A<D: device> { }");
  ASSERT_EQ(missing.codes(), std::vector<std::string>{"E0103"}) << missing.dump();
  EXPECT_EQ(missing.find("E0103")->message, "cannot find module `std.nope`");
  Checked unknownModel = check(R"(import std.nn
model A<D: device>(n: int) {
  l = nn.Lineer(n, n)
})");
  EXPECT_EQ(unknownModel.codes(), std::vector<std::string>{"E0104"}) << unknownModel.dump();
}

TEST(DiagnosticsTest, LoopsOverSubmodelLists) {
  Checked ok = check(R"(import std.nn
model Stack<D: device>(d: int) {
  layers = [nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)]
  fn forward(x: f32[B, d]) -> f32[B, d] {
    let h = x
    for layer in layers {
      h = relu(layer(h))
    }
    return h + layers[0](x)
  }
})");
  EXPECT_TRUE(ok.ok) << ok.dump();
  Checked bad = check(R"(model A<D: device>(d: int) {
  fn forward(x: f32[B, d]) -> f32[B, d] {
    for layer in x { }
    return x
  }
})");
  EXPECT_EQ(bad.codes(), std::vector<std::string>{"E0506"}) << bad.dump();
  Checked rebind = check(R"(model A<D: device>(d: int) {
  fn forward(x: f32[B, d]) -> f32[B, d] {
    let h = x
    h = sum(x, dim: 1)
    return h
  }
})");
  EXPECT_EQ(rebind.codes(), std::vector<std::string>{"E0408"}) << rebind.dump();
}

// Malformed input is reported (with the code that names the mistake), never
// a crash and never accepted.
TEST(DiagnosticsTest, BadInputNeverCrashes) {
  EXPECT_TRUE(check("").ok) << "an empty file is a valid module";
  const std::pair<const char *, const char *> cases[] = {
      {"model", "E0001"},
      {"model A<", "E0001"},
      {"model A<D: device>(n: int) { fn f(", "E0001"},
      {"model A<D: device>(n: int) { param w: f32[n / 0] }", "E0504"},
      {"model A<D: device>(n: int) { fn f(x: f32[..., ...]) { } }", "E0507"},
      {"model A<D: device>(n: int) { a = A(n) fn f(x: f32[n]) { a(x) } }", "E0113"},
      {"model A<D: device> { fn f() -> f32[] { return zeros([]) @ cuda:99999999999999999999 } }",
       "E0005"},
      {"model A<D: device>(n: int) { fn f(x: f32[n]) { let y = x[1:2:0] } }", "E0504"},
      {"model A<D: device>(n: float) { param w: f32[n] }", "E0502"}};
  for (auto [src, code] : cases) {
    Checked c = check(src);
    EXPECT_FALSE(c.ok) << src;
    EXPECT_GE(c.count(code), 1u) << src << "\n" << c.dump();
  }
}

} // namespace
