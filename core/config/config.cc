// Mark formatting and the two entry points: read the text, parse it with yaml-cpp (document.cc),
// walk it into structs (parse.cc, parse_cluster.cc) and cross-check (validate.cc).
#include "core/config/config.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/config/document.h"
#include "core/config/parse.h"
#include "core/config/reader.h"
#include "core/config/validate.h"

namespace sluice::config {
namespace {

using internal::cat;

// Parses `text` (named `name` in marks) with relative paths resolved against `base_dir`.
std::shared_ptr<const Config> load(const std::string& text, const std::string& name,
                                   const std::string& base_dir, std::vector<std::string>* errors) {
  internal::Context ctx(name, base_dir);
  auto config = std::make_shared<Config>();
  config->file = name;
  config->text = text;
  YAML::Node root = internal::loadDocument(text, ctx);
  if (ctx.errorCount() == 0) {
    try {
      internal::Spans spans;
      internal::parseDocument(root, ctx, config.get(), &spans);
      internal::validate(*config, spans, ctx);
    } catch (const YAML::Exception& e) {  // not expected: the walk only reads checked nodes
      ctx.error(ctx.markOf(root), e.what());
    }
  }
  if (ctx.errorCount() > 0) {
    ctx.appendTo(errors);
    return nullptr;
  }
  return config;
}

}  // namespace

std::string Mark::str() const {
  if (line == 0) return file;
  if (column == 0) return cat(file, ":", line);
  return cat(file, ":", line, ":", column);
}

std::shared_ptr<const Config> loadFile(const std::string& path, std::vector<std::string>* errors) {
  std::vector<std::string> ignored;
  if (errors == nullptr) errors = &ignored;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    errors->push_back(cat(path, ": cannot read config file: it is a directory"));
    return nullptr;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  if (in) text << in.rdbuf();
  if (!in || in.bad()) {
    errors->push_back(cat(path, ": cannot read config file: ", std::strerror(errno)));
    return nullptr;
  }
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  std::string base_dir = ec ? "." : absolute.parent_path().lexically_normal().string();
  return load(text.str(), path, base_dir, errors);
}

std::shared_ptr<const Config> loadString(const std::string& text, const std::string& name,
                                         std::vector<std::string>* errors) {
  std::vector<std::string> ignored;
  if (errors == nullptr) errors = &ignored;
  std::error_code ec;
  std::filesystem::path cwd = std::filesystem::current_path(ec);
  return load(text, name, ec ? "." : cwd.string(), errors);
}

}  // namespace sluice::config
