// Helpers shared by the plugin host's files. Not part of the plugin host interface.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/api/common.h"
#include "core/config/config.h"

namespace sluice::plugin::internal {

// "file:line:col" ("file" alone when the line is unknown; "<config>" when the file is).
std::string where(const config::Mark& mark);

// "filter", "balancer", "discovery", or "unknown kind N".
std::string kindName(sluice_plugin_kind kind);

// Where plugin `ref` of `kind` may be, in search order (see Loader).
std::vector<std::string> candidates(const config::PluginRef& ref, sluice_plugin_kind kind,
                                    const std::vector<std::string>& search_paths);

// The built-in fallback directory of `kind`: the kind's folder ("filters", "balancers",
// "discovery") beside the directory of the sluice executable (see setExecutablePath); "" when
// unknown.
std::string kindDir(sluice_plugin_kind kind);

// The first of `paths` that is a regular file, absolute and lexically normalised but with its
// symbolic links kept (the path the user knows, not where a build tool's cache put the file);
// "" when none is. *canonical (may be null) gets its realpath(), the file's identity.
std::string findFile(const std::vector<std::string>& paths, std::string* canonical = nullptr);

// `text` with every occurrence of `from` replaced by `to` (dlerror() names the private copy).
std::string replaceAll(std::string text, const std::string& from, const std::string& to);

// Levenshtein distance between two names (for "did you mean").
size_t editDistance(const std::string& a, const std::string& b);

// A plugin file's bytes, read once: what is hashed is what gets loaded.
struct FileBytes {
  std::string bytes;
  uint64_t hash = 0;  // FNV-1a 64 of `bytes`
};

// Reads `path`; false and *error ("cannot be read: ...") when it cannot be.
bool readFile(const std::string& path, FileBytes* out, std::string* error);

// dlopen(RTLD_NOW | RTLD_LOCAL) of a private copy of `file` (named "<hash>-<name of path>" in a
// fresh mkdtemp directory, both removed before returning); when no copy can be made or mapped
// (no writable $TMPDIR, a noexec /tmp), of `path` itself. nullptr with dlerror() set on failure.
// *copy_path (may be null) gets the private copy's path ("" when `path` itself was opened), so
// messages can name the user's file instead.
void* openCopy(const std::string& path, const FileBytes& file, std::string* copy_path = nullptr);

}  // namespace sluice::plugin::internal
