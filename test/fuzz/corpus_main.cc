// Runs a fuzz target as an ordinary test: every file under the given corpus directories (or the
// given files), then --mutations=N (default 2000) deterministic mutations of them (fixed seed,
// --seed=S to change it). On a crash the input being run is written to
// $TEST_UNDECLARED_OUTPUTS_DIR/crash-input (or ./crash-input) and its origin printed.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "test/fuzz/mutator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

// What is running, for the crash handler.
const std::string* g_input = nullptr;
char g_origin[512];
char g_dump_path[1024];

void writeAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void onCrash(int sig) {
  const char kMsg[] = "\n*** crash while running: ";
  writeAll(2, kMsg, sizeof(kMsg) - 1);
  writeAll(2, g_origin, strlen(g_origin));
  if (g_input != nullptr) {
    int fd = open(g_dump_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      writeAll(fd, g_input->data(), g_input->size());
      close(fd);
      const char kSaved[] = "\n*** input saved to ";
      writeAll(2, kSaved, sizeof(kSaved) - 1);
      writeAll(2, g_dump_path, strlen(g_dump_path));
    }
  }
  writeAll(2, "\n", 1);
  signal(sig, SIG_DFL);
  raise(sig);
}

void installCrashHandler() {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  std::snprintf(g_dump_path, sizeof(g_dump_path), "%s/crash-input", dir != nullptr ? dir : ".");
  for (int sig : {SIGILL, SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGTRAP}) signal(sig, onCrash);
}

void runOne(const std::string& input) {
  g_input = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  g_input = nullptr;
}

void collect(const fs::path& p, std::vector<fs::path>* files) {
  if (fs::is_directory(p)) {
    for (const auto& e : fs::recursive_directory_iterator(p)) {
      if (fs::is_regular_file(e.path())) files->push_back(e.path());
    }
  } else if (fs::is_regular_file(p)) {
    files->push_back(p);
  }
}

}  // namespace

int main(int argc, char** argv) {
  size_t mutations = 2000;
  uint64_t seed = 20240601;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--mutations=", 0) == 0) {
      mutations = std::strtoull(arg.c_str() + 12, nullptr, 10);
    } else if (arg == "--strict") {
      setenv("SLUICE_FUZZ_STRICT", "1", 1);
    } else if (arg.rfind("--seed=", 0) == 0) {
      seed = std::strtoull(arg.c_str() + 7, nullptr, 10);
    } else {
      collect(arg, &files);
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "no corpus files found in the arguments\n");
    return 1;
  }
  installCrashHandler();
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> inputs;
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    inputs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    std::snprintf(g_origin, sizeof(g_origin), "%s", f.c_str());
    runOne(inputs.back());
  }
  sluice::fuzz::Mutator mutator(seed);
  for (size_t i = 0; i < mutations; ++i) {
    size_t base = i % inputs.size();
    std::string input = mutator.mutate(inputs[base], inputs);
    std::snprintf(g_origin, sizeof(g_origin), "mutation %zu of %s (--seed=%llu)", i,
                  files[base].c_str(), static_cast<unsigned long long>(seed));
    runOne(input);
  }
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("ran %zu corpus files and %zu mutations in %.0f ms\n", files.size(), mutations, ms);
  return 0;
}
