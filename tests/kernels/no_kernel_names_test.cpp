// Kernel identity lives in kernels/registry.cpp: no source under sim/ compares a string with a
// registered kernel name (or a measured-data alias of one); other layers ask the KernelEntry.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "kernels/registry.h"

namespace attnsim::kernels {
namespace {

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const KernelEntry& e : kernel_registry()) {
    out.emplace_back(e.name);
    for (std::string_view alias : e.measured_names) out.emplace_back(alias);
  }
  return out;
}

// True if `line` compares something with the string literal of a registered kernel name
// (`x == "flash2"`, `"flash2" != x`, `x.compare("flash2")`, `x.starts_with("flash")`).
bool compares_kernel_name(const std::string& line, const std::vector<std::string>& kernel_names) {
  for (const std::string& n : kernel_names) {
    const std::string lit = "\"" + n + "\"";
    if (line.find(lit) == std::string::npos) continue;
    const std::regex cmp("(==|!=)\\s*" + lit + "|" + lit + "\\s*(==|!=)|(compare|starts_with|find)\\(\\s*" + lit);
    if (std::regex_search(line, cmp)) return true;
  }
  return false;
}

TEST(NoKernelNames, DetectorFlagsComparisons) {
  const std::vector<std::string> n = names();
  EXPECT_TRUE(compares_kernel_name(R"(  if (w.kernel == "pointer_chase") x();)", n));
  EXPECT_TRUE(compares_kernel_name(R"(  return "flash2" != k;)", n));
  EXPECT_TRUE(compares_kernel_name(R"(  if (v == "sdpa_flash" || v == "flash2") {)", n));
  EXPECT_FALSE(compares_kernel_name(R"(  w.kernel = "flash2";  // standard, flash1)", n));
  EXPECT_FALSE(compares_kernel_name(R"(  if (name == "point_index") continue;)", n));
}

TEST(NoKernelNames, NoSourceOutsideKernelsComparesKernelNames) {
  const std::vector<std::string> n = names();
  const std::filesystem::path root = std::filesystem::path(ATTNSIM_SOURCE_DIR) / "sim";
  ASSERT_TRUE(std::filesystem::is_directory(root));
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    for (int no = 1; std::getline(in, line); ++no)
      EXPECT_FALSE(compares_kernel_name(line, n)) << entry.path().string() << ":" << no << ": " << line;
  }
  EXPECT_GT(files, 50u);
}

}  // namespace
}  // namespace attnsim::kernels
