// Runs the built gpkv tool (GPKV_TOOL_PATH) as a child process for the tests
// under tests/tools, and gives each test a scratch directory for its pools:
// RunTool / StartTool run the binary and capture its output and exit code;
// ToolTest is the fixture every tool test derives from.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gpkv::testing {

struct ToolResult {
  int exit_code = -1;  // the exit status, or 128 + signal
  std::string out;     // stdout
  std::string err;     // stderr
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A directory on /dev/shm (else /tmp), removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string pattern = base + "/gpkv-tool-test-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) != nullptr) path_ = buffer.data();
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Runs `gpkv args...` with stdin from `input`, stdout and stderr captured
// through files in `scratch`.
inline ToolResult RunTool(const ScratchDir& scratch, const std::vector<std::string>& args,
                          const std::string& input = "") {
  const std::string in_path = scratch.File(".stdin");
  const std::string out_path = scratch.File(".stdout");
  const std::string err_path = scratch.File(".stderr");
  {
    std::ofstream in(in_path, std::ios::binary | std::ios::trunc);
    in << input;
  }
  std::vector<std::string> argv_strings = {GPKV_TOOL_PATH};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);

  ToolResult result;
  pid_t pid = fork();
  if (pid == 0) {
    int in_fd = open(in_path.c_str(), O_RDONLY);
    int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in_fd < 0 || out_fd < 0 || err_fd < 0) _exit(126);
    dup2(in_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (pid < 0) return result;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return result;
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadWholeFile(out_path);
  result.err = ReadWholeFile(err_path);
  return result;
}

// A gpkv tool started by StartTool that is still running: the test writes
// its stdin through `input_fd` and collects it with FinishTool.
struct RunningTool {
  pid_t pid = -1;
  int input_fd = -1;
  std::string out_path;
  std::string err_path;
};

// Starts `gpkv args...` with stdin from a pipe the caller feeds, stdout and
// stderr captured through files in `scratch` named after `tag`, and returns
// without waiting for it.
inline RunningTool StartTool(const ScratchDir& scratch, const std::vector<std::string>& args,
                             const std::string& tag) {
  RunningTool tool;
  tool.out_path = scratch.File("." + tag + ".stdout");
  tool.err_path = scratch.File("." + tag + ".stderr");
  std::vector<std::string> argv_strings = {GPKV_TOOL_PATH};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int input[2];
  if (pipe2(input, O_CLOEXEC) != 0) return tool;
  tool.pid = fork();
  if (tool.pid == 0) {
    int out_fd = open(tool.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err_fd = open(tool.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_fd < 0 || err_fd < 0) _exit(126);
    dup2(input[0], STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(input[0]);
  if (tool.pid < 0) {
    close(input[1]);
    return tool;
  }
  tool.input_fd = input[1];
  return tool;
}

// Writes `text` to the stdin of a started tool; false if it could not.
inline bool FeedTool(const RunningTool& tool, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t wrote = write(tool.input_fd, text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    done += static_cast<size_t>(wrote);
  }
  return true;
}

// Closes the tool's stdin, waits for it to end and collects what it printed.
inline ToolResult FinishTool(RunningTool& tool) {
  ToolResult result;
  if (tool.input_fd >= 0) close(tool.input_fd);
  tool.input_fd = -1;
  if (tool.pid < 0) return result;
  int status = 0;
  while (waitpid(tool.pid, &status, 0) < 0) {
    if (errno != EINTR) return result;
  }
  tool.pid = -1;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadWholeFile(tool.out_path);
  result.err = ReadWholeFile(tool.err_path);
  return result;
}

// The lines of `text`, without their newlines.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// The pair lines of `gpkv dump` output: its lines without the header line
// ("# gpkv-dump ...").
inline std::vector<std::string> DumpedPairs(const std::string& text) {
  std::vector<std::string> pairs;
  for (std::string& line : Lines(text)) {
    if (line.rfind("# gpkv-dump ", 0) != 0) pairs.push_back(std::move(line));
  }
  return pairs;
}

// The fixture of the tool tests: a scratch directory, the path of a pool in
// it (pool_, made by CreatePool) and Run, which runs gpkv there.
class ToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(scratch_.ok());
    pool_ = scratch_.File("pool.gpkv");
  }

  // Runs `gpkv args...` with `input` on its stdin.
  ToolResult Run(const std::vector<std::string>& args, const std::string& input = "") {
    return RunTool(scratch_, args, input);
  }

  // `gpkv create pool_ --size size`; a fatal failure unless it exits 0 (call
  // it under ASSERT_NO_FATAL_FAILURE).
  void CreatePool(const std::string& size) {
    ToolResult created = Run({"create", pool_, "--size", size});
    ASSERT_EQ(created.exit_code, 0) << created.err;
  }

  ScratchDir scratch_;
  std::string pool_;
};

}  // namespace gpkv::testing
