// The engine stays in small parts: no source file under sim/engine is over 400 lines
// (docs/architecture.md lists the parts).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace attnsim::engine {
namespace {

TEST(EngineLayout, NoSourceFileOver400Lines) {
  const std::filesystem::path dir = std::filesystem::path(ATTNSIM_SOURCE_DIR) / "sim" / "engine";
  ASSERT_TRUE(std::filesystem::is_directory(dir));
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
    ++files;
    std::ifstream in(entry.path());
    std::size_t lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    EXPECT_LE(lines, 400u) << entry.path().string();
  }
  EXPECT_GT(files, 10u);
}

}  // namespace
}  // namespace attnsim::engine
