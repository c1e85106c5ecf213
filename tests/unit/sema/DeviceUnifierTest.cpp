//===- DeviceUnifierTest.cpp - Union-find over device variables -----------===//

#include "sema/DeviceUnifier.h"

#include <gtest/gtest.h>

using namespace modelc;
using namespace modelc::sema;

namespace {

DeviceOrigin because(const char *why) {
  DeviceOrigin o;
  o.kind = DeviceOrigin::Kind::Inferred;
  o.message = why;
  return o;
}

TEST(DeviceUnifierTest, BindsVariableToDevice) {
  DeviceUnifier u;
  Device v = u.fresh({}, "randn([B])");
  EXPECT_TRUE(u.resolve(v).isVar());
  EXPECT_TRUE(u.unify(v, Device::cuda(0), because("x + noise")));
  EXPECT_EQ(u.resolve(v), Device::cuda(0));
  ASSERT_NE(u.bindingOrigin(v), nullptr);
  EXPECT_EQ(u.bindingOrigin(v)->message, "x + noise");
  EXPECT_TRUE(u.unboundClasses().empty());
}

TEST(DeviceUnifierTest, SecondBindingConflicts) {
  DeviceUnifier u;
  Device v = u.fresh({}, "zeros([3])");
  EXPECT_TRUE(u.unify(Device::cuda(0), v, because("first")));
  EXPECT_FALSE(u.unify(v, Device::cuda(1), because("second")));
  EXPECT_EQ(u.bindingOrigin(v)->message, "first");
}

TEST(DeviceUnifierTest, RigidParametersDifferFromConcreteDevices) {
  DeviceUnifier u;
  Device d = Device::param(nullptr, 0);
  EXPECT_TRUE(u.unify(d, d, because("same")));
  EXPECT_FALSE(u.unify(d, Device::cpu(), because("cpu")));
  EXPECT_FALSE(u.unify(Device::cuda(0), Device::cpu(), because("x")));
  EXPECT_FALSE(u.unify(Device::cuda(0), Device::cuda(1), because("x")));
}

TEST(DeviceUnifierTest, ClassesMergeAndBindTogether) {
  DeviceUnifier u;
  Device a = u.fresh({}, "a"), b = u.fresh({}, "b"), c = u.fresh({}, "c");
  EXPECT_TRUE(u.unify(a, b, because("a + b")));
  EXPECT_EQ(u.unboundClasses().size(), 2u); // {a, b} and {c}
  EXPECT_EQ(u.unboundClasses().front().text, "a");
  EXPECT_TRUE(u.unify(b, Device::cpu(), because("b + cpu")));
  EXPECT_EQ(u.resolve(a), Device::cpu());
  EXPECT_EQ(u.creationText(a), "a");
  ASSERT_EQ(u.unboundClasses().size(), 1u);
  EXPECT_EQ(u.unboundClasses().front().text, "c");
  u.poison(c);
  EXPECT_TRUE(u.unboundClasses().empty());
}

TEST(DeviceUnifierTest, LongChainsStayFlat) {
  DeviceUnifier u;
  std::vector<Device> vars;
  for (int i = 0; i < 10000; ++i)
    vars.push_back(u.fresh({}, "v"));
  for (int i = 1; i < 10000; ++i)
    EXPECT_TRUE(u.unify(vars[i - 1], vars[i], because("chain")));
  EXPECT_TRUE(u.unify(vars.back(), Device::cuda(3), because("end")));
  EXPECT_EQ(u.resolve(vars.front()), Device::cuda(3));
}

} // namespace
