// Reading sluice's access log files in tests: lines, parsed JSON lines, and waiting until the
// writer thread has written some (the wait is a bound on how long to look, not a timing
// assertion).
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "test/harness/harness.h"

namespace sluice::test {

// The complete lines of `path` (without their '\n'); a partial last line is left out.
inline std::vector<std::string> logLines(const std::string& path) {
  std::string text = readFile(path);
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

// Waits (up to 10 s) until `path` has at least `n` lines whose text contains `needle`; returns
// those lines (fewer on timeout).
inline std::vector<std::string> waitForLines(const std::string& path, size_t n,
                                             const std::string& needle = "") {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::vector<std::string> matching;
  while (true) {
    matching.clear();
    for (std::string& line : logLines(path)) {
      if (line.find(needle) != std::string::npos) matching.push_back(std::move(line));
    }
    if (matching.size() >= n || std::chrono::steady_clock::now() > deadline) return matching;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The JSON lines of `path` whose "path" field equals `request_path`, waiting (up to 10 s) for
// at least `n`. A line that is not valid JSON fails the test.
inline std::vector<nlohmann::json> waitForRequests(const std::string& path,
                                                   const std::string& request_path, size_t n = 1) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::vector<nlohmann::json> out;
  while (true) {
    out.clear();
    for (const std::string& line : logLines(path)) {
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) {
        ADD_FAILURE() << "not a JSON line: " << line;
        continue;
      }
      if (j.value("path", "") == request_path) out.push_back(std::move(j));
    }
    if (out.size() >= n || std::chrono::steady_clock::now() > deadline) return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The response_flags of a JSON line as a list.
inline std::vector<std::string> flagsOf(const nlohmann::json& line) {
  std::vector<std::string> out;
  std::string flags = line.value("response_flags", "");
  size_t start = 0;
  while (start < flags.size()) {
    size_t comma = flags.find(',', start);
    if (comma == std::string::npos) comma = flags.size();
    out.push_back(flags.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// True when the line's response_flags list `flag`.
inline bool hasFlag(const nlohmann::json& line, const std::string& flag) {
  for (const std::string& f : flagsOf(line)) {
    if (f == flag) return true;
  }
  return false;
}

}  // namespace sluice::test
