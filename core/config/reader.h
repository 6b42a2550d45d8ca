// Internal helpers for walking a YAML document into config structs: error collection with
// marks, mapping iteration with unknown/duplicate key detection, and typed scalar readers.
// Not part of the public config API.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/config/config.h"

namespace sluice::config::internal {

// Concatenates anything an ostream prints (strings, string_views, integers) into a message.
// (Debian's abseil uses its own string_view, so absl::StrCat does not take std::string_view.)
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

// Collects problems while one document is walked, and hands them out as "file:line:col: reason"
// lines in document order.
class Context {
 public:
  // `file` names the source in marks; `base_dir` (absolute) is where relative paths in the
  // document are resolved.
  Context(std::string file, std::string base_dir);

  const std::string& file() const { return file_; }
  const std::string& baseDir() const { return base_dir_; }
  // The 1-based position of `node`; line/column 0 when the node has no position.
  Mark markOf(const YAML::Node& node) const;
  // Records one problem at `mark`.
  void error(const Mark& mark, const std::string& reason);
  // Number of problems recorded so far.
  size_t errorCount() const { return problems_.size(); }
  // Appends every problem to *errors as "file:line:col: reason", sorted by position (stable:
  // problems at one position keep the order they were found in).
  void appendTo(std::vector<std::string>* errors) const;

 private:
  std::string file_;
  std::string base_dir_;
  std::vector<std::pair<Mark, std::string>> problems_;
};

// One value being read, with its path used in messages ("listeners[0].address"; "" for the
// document itself) and the place to report problems at (the value, or its key when the value
// is empty).
struct Field {
  std::string label;
  std::string key;  // the mapping key this value is under; "" for list items and the document
  YAML::Node value;
  Mark mark;
};

// Iterates the mapping `node`, which messages call `what` (e.g. "listener"). A null node is an
// empty mapping. Reports a non-mapping value, non-string keys, keys not in `allowed` (listing
// the allowed ones) and duplicate keys; calls `fn` once for every allowed key, with the label
// "<node.label>.<key>". Returns false if `node` is not a mapping at all.
bool forEachField(const Field& node, std::string_view what,
                  const std::vector<std::string_view>& allowed, Context& ctx,
                  const std::function<void(const Field&)>& fn);

// Reports each key of `required` missing from the mapping `node` (nothing if it is not a
// mapping: forEachField reports that).
void requireFields(const Field& node, const std::vector<std::string_view>& required, Context& ctx);

// Iterates the sequence in `list` (a null value is an empty list), calling fn(item) with labels
// "<label>[i]". Reports a value that is not a list and returns false.
bool forEachItem(const Field& list, Context& ctx, const std::function<void(const Field&)>& fn);

// Reads a scalar string (any plain or quoted scalar). Reports lists, mappings and nulls.
bool readString(const Field& field, Context& ctx, std::string* out);
// Reads a non-empty string made of [A-Za-z0-9._-] (cluster, listener and plugin names).
bool readName(const Field& field, Context& ctx, std::string* out);
// Reads an unquoted decimal integer in [min, max]; reports other values with the range.
bool readUint64(const Field& field, uint64_t min, uint64_t max, Context& ctx, uint64_t* out);
bool readUint32(const Field& field, uint32_t min, uint32_t max, Context& ctx, uint32_t* out);
// Reads a timeout in milliseconds: an integer 1..4294967295.
bool readTimeoutMs(const Field& field, Context& ctx, uint32_t* out);
// Reads `true` or `false` (YAML 1.2 spellings, unquoted).
bool readBool(const Field& field, Context& ctx, bool* out);
// Reads a "host:port" address (see splitHostPort in address.h).
bool readAddress(const Field& field, Context& ctx, std::string* out);

// Parses a plain (unquoted) decimal integer scalar; false for anything else or on overflow.
bool parseDecimal(const YAML::Node& node, uint64_t* out);

// `path` made absolute against ctx.baseDir() (when relative) and lexically normalised.
std::string resolvePath(const Context& ctx, const std::string& path);

// "a list", "a mapping", "nothing", or the scalar in quotes: for "got ..." in messages.
std::string describe(const YAML::Node& node);

}  // namespace sluice::config::internal
