// The layering rules of docs/ARCHITECTURE.md, checked on the source tree
// (GPKV_SOURCE_DIR):
//  - a family's layout.h includes only the standard library, format/ headers
//    and the shared log's tables/log/layout.h, which themselves include only
//    the standard library and format/;
//  - nothing outside gpu/, tables/<family>/gpu/, bench/gpu/ and the device
//    tests includes CUDA (a CUDA header, CUB, NVTX or a .cuh file), and the
//    public headers never do;
//  - no family includes another family's files (tables/family.h,
//    tables/table_options.h, tables/catalog_entry.h, tables/root_reader.h,
//    tables/table_check.h, tables/family_table.h, tables/hash_family_table.h,
//    tables/stats_builder.h, tables/hash_backend.h, tables/table_facade.h and tables/range_limit.h
//    are every family's, and so is the shared log, tables/log/, which
//    includes only those and its own files);
//  - engine/ and recovery/ reach families only through tables/registry.h and
//    tables/family.h (and the engine's table wraps a family's as a
//    tables/table_facade.h);
//  - bench/ (the benchmark program gpkv-bench) and tools/ (the gpkv tool)
//    include nothing of each other;
//  - bench/ reaches tables through the public API and documented hooks:
//    nothing of a family's backends (tables/<family>/cpu/, gpu/).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace gpkv {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = GPKV_SOURCE_DIR;

struct Include {
  std::string target;  // what is included
  bool angled = false;
  int line = 0;
};

std::vector<Include> IncludesOf(const fs::path& file) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::vector<Include> out;
  std::ifstream in(file);
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    std::smatch match;
    if (std::regex_search(text, match, kInclude)) {
      out.push_back({match[2].str(), match[1].str() == "<", line});
    }
  }
  return out;
}

// Source files under `dir` (relative to the root), recursively.
std::vector<fs::path> SourcesUnder(const std::string& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(kRoot / dir)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(kRoot / dir)) {
    const std::string extension = entry.path().extension().string();
    if (extension == ".h" || extension == ".cc" || extension == ".cu" || extension == ".cuh") {
      out.push_back(fs::relative(entry.path(), kRoot));
    }
  }
  return out;
}

// The shared batch log: tables/log/ is a component every family may use, not
// a family.
const char kLogDir[] = "log";

std::vector<std::string> Families() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(kRoot / "tables")) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name != kLogDir) out.push_back(name);
  }
  return out;
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

bool IsCudaInclude(const Include& include) {
  const std::string& t = include.target;
  const bool cuh = t.size() > 4 && t.compare(t.size() - 4, 4, ".cuh") == 0;
  return StartsWith(t, "cuda") || StartsWith(t, "cub/") || StartsWith(t, "thrust/") ||
         StartsWith(t, "nvtx") || StartsWith(t, "cooperative_groups") || cuh;
}

TEST(Layering, TheTreeHasFamilies) {
  ASSERT_FALSE(Families().empty()) << kRoot;
  ASSERT_TRUE(fs::exists(kRoot / "tables/gphash/layout.h"));
}

TEST(Layering, ALayoutHeaderIncludesOnlyTheStandardLibraryAndFormat) {
  std::vector<std::string> owners = Families();
  owners.push_back(kLogDir);
  for (const std::string& family : owners) {
    const fs::path layout = fs::path("tables") / family / "layout.h";
    if (!fs::exists(kRoot / layout)) continue;
    std::vector<fs::path> to_check = {layout};
    for (size_t i = 0; i < to_check.size(); ++i) {
      for (const Include& include : IncludesOf(kRoot / to_check[i])) {
        if (include.angled) {
          // Standard headers have no directory and no .h (<cstdint>, ...).
          EXPECT_EQ(include.target.find_first_of("/."), std::string::npos)
              << to_check[i] << ":" << include.line << " includes <" << include.target
              << ">, not a standard library header";
          continue;
        }
        const bool log_layout =
            include.target == "tables/log/layout.h" && i == 0 && family != kLogDir;
        EXPECT_TRUE(StartsWith(include.target, "format/") || log_layout)
            << to_check[i] << ":" << include.line << " includes \"" << include.target
            << "\": a layout.h may include only the standard library, format/ and "
               "tables/log/layout.h";
        if (StartsWith(include.target, "format/") || log_layout) {
          to_check.push_back(include.target);
        }
      }
    }
  }
}

TEST(Layering, OnlyGpuFoldersIncludeCuda) {
  size_t checked = 0;
  for (const std::string& dir : {"include", "engine", "pm", "format", "util", "recovery", "tools",
                                 "tables", "bench", "gpu", "tests"}) {
    for (const fs::path& file : SourcesUnder(dir)) {
      const std::string path = file.string();
      const bool gpu_folder = !StartsWith(path, "include/") &&
                              (StartsWith(path, "gpu/") || path.find("/gpu/") != std::string::npos);
      if (gpu_folder) continue;
      ++checked;
      for (const Include& include : IncludesOf(kRoot / file)) {
        EXPECT_FALSE(IsCudaInclude(include))
            << path << ":" << include.line << " includes " << include.target
            << " outside gpu/ and tables/<family>/gpu/";
      }
    }
  }
  EXPECT_GT(checked, 100u);
}

// Beside its own files a family may include the headers every family shares:
// the interface and the volatile and persistent families' bases, the shared
// option checks, catalog entry and root reading, verify's and repair's
// shared steps, the fronts' bases, their
// stats, the hash backends' batch interface, the CPU backends' exception
// status, the resolution of mixed write batches and the volatile hash table
// opened as a persistent hash table's index.
bool IsSharedTablesHeader(const std::string& target) {
  for (const char* shared :
       {"tables/family.h", "tables/volatile_family.h", "tables/persistent_family.h",
        "tables/table_options.h", "tables/catalog_entry.h", "tables/root_reader.h",
        "tables/table_check.h", "tables/family_table.h", "tables/ordered_family_table.h",
        "tables/hash_family_table.h", "tables/stats_builder.h", "tables/hash_backend.h",
        "tables/exception_status.h", "tables/table_facade.h", "tables/range_limit.h",
        "tables/write_batch.h", "tables/hash_index.h"}) {
    if (target == shared) return true;
  }
  return StartsWith(target, std::string("tables/") + kLogDir + "/");
}

TEST(Layering, NoFamilyIncludesAnother) {
  for (const std::string& family : Families()) {
    for (const fs::path& file : SourcesUnder("tables/" + family)) {
      for (const Include& include : IncludesOf(kRoot / file)) {
        if (include.angled || !StartsWith(include.target, "tables/")) continue;
        const bool own = StartsWith(include.target, "tables/" + family + "/");
        EXPECT_TRUE(own || IsSharedTablesHeader(include.target))
            << file << ":" << include.line << " includes " << include.target;
      }
    }
  }
}

TEST(Layering, TheLogIncludesNoFamily) {
  for (const fs::path& file : SourcesUnder(std::string("tables/") + kLogDir)) {
    for (const Include& include : IncludesOf(kRoot / file)) {
      if (include.angled || !StartsWith(include.target, "tables/")) continue;
      EXPECT_TRUE(IsSharedTablesHeader(include.target))
          << file << ":" << include.line << " includes " << include.target;
    }
  }
}

TEST(Layering, EngineAndRecoveryReachFamiliesOnlyThroughTheRegistry) {
  for (const std::string& dir : {"engine", "recovery"}) {
    for (const fs::path& file : SourcesUnder(dir)) {
      for (const Include& include : IncludesOf(kRoot / file)) {
        if (include.angled || !StartsWith(include.target, "tables/")) continue;
        EXPECT_TRUE(include.target == "tables/registry.h" || include.target == "tables/family.h" ||
                    include.target == "tables/table_facade.h")
            << file << ":" << include.line << " includes " << include.target;
      }
    }
  }
}

TEST(Layering, BenchAndToolsIncludeNothingOfEachOther) {
  size_t checked = 0;
  for (const auto& [dir, other] : {std::pair<std::string, std::string>{"bench", "tools/"},
                                   std::pair<std::string, std::string>{"tools", "bench/"}}) {
    for (const fs::path& file : SourcesUnder(dir)) {
      ++checked;
      for (const Include& include : IncludesOf(kRoot / file)) {
        EXPECT_FALSE(StartsWith(include.target, other))
            << file << ":" << include.line << " includes " << include.target;
      }
    }
  }
  EXPECT_GT(checked, 40u);
}

TEST(Layering, BenchIncludesNoBackendOfAFamily) {
  const std::regex backend_header("^tables/[a-z_]+/(cpu|gpu)/");
  size_t checked = 0;
  for (const fs::path& file : SourcesUnder("bench")) {
    ++checked;
    for (const Include& include : IncludesOf(kRoot / file)) {
      EXPECT_FALSE(std::regex_search(include.target, backend_header))
          << file << ":" << include.line << " includes " << include.target;
    }
  }
  EXPECT_GT(checked, 40u);
}

}  // namespace
}  // namespace gpkv
