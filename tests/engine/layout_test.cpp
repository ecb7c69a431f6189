// The engine stays in small parts: no source file under sim/engine is over 400 lines
// (docs/architecture.md lists the parts); it names no metric (sim/io does) and its GPU memory and
// tile-access path have no scratchpad branch (ScratchpadMemory is its own class).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace attnsim::engine {
namespace {

std::filesystem::path engine_dir() { return std::filesystem::path(ATTNSIM_SOURCE_DIR) / "sim" / "engine"; }

std::string text_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

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

TEST(EngineLayout, NamesNoMetric) {
  // String literals that start like an Nsight Compute or attnsim__ metric name.
  const char* prefixes[] = {"\"dram__", "\"lts__", "\"gpu__", "\"sm__", "\"launch__", "\"l1tex__", "\"attnsim__"};
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(engine_dir())) {
    if (!entry.is_regular_file()) continue;
    ++files;
    const std::string text = text_of(entry.path());
    for (const char* p : prefixes) EXPECT_EQ(text.find(p), std::string::npos) << entry.path().string() << ": " << p;
  }
  EXPECT_GT(files, 10u);
}

TEST(EngineLayout, GpuAccessPathHasNoScratchpadBranch) {
  for (const char* f : {"memory_system.h", "memory_system.cpp", "tile_access.h", "tile_access.cpp"}) {
    const std::string text = text_of(engine_dir() / f);
    ASSERT_FALSE(text.empty()) << f;
    EXPECT_EQ(text.find("kScratchpad"), std::string::npos) << f;
    EXPECT_EQ(text.find("scratchpad_)"), std::string::npos) << f;  // the old `if (scratchpad_)`
  }
}

}  // namespace
}  // namespace attnsim::engine
