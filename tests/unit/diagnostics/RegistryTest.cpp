//===- RegistryTest.cpp - Diagnostics.def, lookups and explanations -------===//

#include "diagnostics/Diagnostic.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Regex.h"

#include <gtest/gtest.h>

using namespace modelc;

namespace {

TEST(RegistryTest, EveryEntryIsIndexedByItsId) {
  llvm::ArrayRef<DiagInfo> infos = allDiagInfos();
  ASSERT_FALSE(infos.empty());
  for (size_t i = 0; i < infos.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(infos[i].id), i);
    EXPECT_EQ(&getDiagInfo(infos[i].id), &infos[i]);
  }
  EXPECT_EQ(getDiagInfo(DiagId::DeviceMismatch).code, "E0301");
  EXPECT_EQ(getDiagInfo(DiagId::DeviceMismatch).name, "DeviceMismatch");
  EXPECT_EQ(getDiagInfo(DiagId::DeviceMismatch).severity, Severity::Error);
  EXPECT_EQ(getDiagInfo(DiagId::RedundantTransfer).severity, Severity::Warning);
}

TEST(RegistryTest, CodesAreUniqueAndWellFormed) {
  llvm::StringSet<> codes;
  llvm::Regex codeShape("^[EW][0-9]{4}$");
  for (const DiagInfo &info : allDiagInfos()) {
    EXPECT_TRUE(codes.insert(info.code).second) << "duplicate code " << info.code.str();
    EXPECT_TRUE(codeShape.match(info.code)) << info.code.str();
    EXPECT_EQ(info.code.front() == 'W', info.severity == Severity::Warning) << info.code.str();
  }
}

TEST(RegistryTest, HeadlinesFollowTheHouseStyle) {
  for (const DiagInfo &info : allDiagInfos()) {
    ASSERT_FALSE(info.format.empty()) << info.code.str();
    EXPECT_FALSE(info.format.ends_with(".")) << info.code.str() << ": trailing period";
    EXPECT_FALSE(llvm::isUpper(info.format.front())) << info.code.str() << ": capitalised";
    // Placeholders are numbered 0..n-1 with no gap, so report() can fill them.
    unsigned used = 0, highest = 0;
    llvm::StringRef rest = info.format;
    while (true) {
      size_t open = rest.find('{');
      if (open == llvm::StringRef::npos)
        break;
      unsigned index;
      llvm::StringRef digits =
          rest.substr(open + 1).take_while([](char c) { return llvm::isDigit(c); });
      ASSERT_FALSE(digits.getAsInteger(10, index)) << info.code.str();
      used |= 1u << index;
      highest = std::max(highest, index + 1);
      rest = rest.substr(open + 1);
    }
    EXPECT_EQ(used, (1u << highest) - 1) << info.code.str() << ": placeholder gap";
  }
}

TEST(RegistryTest, LookupByCode) {
  EXPECT_EQ(lookupDiagCode("E0301"), DiagId::DeviceMismatch);
  EXPECT_EQ(lookupDiagCode("w0310"), DiagId::RedundantTransfer);
  EXPECT_EQ(lookupDiagCode("E9999"), std::nullopt);
  EXPECT_EQ(lookupDiagCode(""), std::nullopt);
  for (const DiagInfo &info : allDiagInfos())
    EXPECT_EQ(lookupDiagCode(info.code), info.id);
}

TEST(RegistryTest, EveryCodeHasAnEmbeddedExplanation) {
  for (const DiagInfo &info : allDiagInfos()) {
    llvm::StringRef text = getDiagExplanation(info.code);
    EXPECT_TRUE(text.starts_with("# " + info.code.str() + ":")) << info.code.str();
    EXPECT_TRUE(text.contains("## Erroneous example")) << info.code.str();
    EXPECT_TRUE(text.contains("## Corrected example")) << info.code.str();
  }
  EXPECT_TRUE(getDiagExplanation("E0301").contains(
      "Expected all tensors to be on the same device, but found at least two devices"));
  EXPECT_EQ(getDiagExplanation("e0301"), getDiagExplanation("E0301"));
  EXPECT_TRUE(getDiagExplanation("E9999").empty());
  EXPECT_TRUE(getDiagExplanation("").empty());
}

TEST(RegistryTest, Names) {
  EXPECT_EQ(severityName(Severity::Error), "error");
  EXPECT_EQ(severityName(Severity::Warning), "warning");
  EXPECT_EQ(severityName(Severity::Note), "note");
  EXPECT_EQ(severityName(Severity::Help), "help");
  EXPECT_EQ(applicabilityName(Applicability::MachineApplicable), "machine-applicable");
  EXPECT_EQ(applicabilityName(Applicability::MaybeIncorrect), "maybe-incorrect");
  EXPECT_EQ(applicabilityName(Applicability::HasPlaceholders), "has-placeholders");
}

} // namespace
