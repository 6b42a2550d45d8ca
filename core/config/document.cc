#include "core/config/document.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <sstream>

namespace sluice::config::internal {
namespace {

Mark toMark(const std::string& file, const YAML::Mark& m) {
  Mark mark;
  mark.file = file;
  if (m.line >= 0 && m.column >= 0) {
    mark.line = static_cast<uint32_t>(m.line) + 1;
    mark.column = static_cast<uint32_t>(m.column) + 1;
  }
  return mark;
}

// Remembers where the current document's root starts and whether it is more than a null.
class RootProbe : public YAML::EventHandler {
 public:
  void reset() {
    seen_root_ = false;
    non_null_ = false;
  }
  bool nonNull() const { return non_null_; }
  const YAML::Mark& rootMark() const { return root_mark_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { root(mark, false); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { root(mark, true); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    root(mark, true);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    root(mark, true);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    root(mark, true);
  }
  void OnMapEnd() override {}

 private:
  void root(const YAML::Mark& mark, bool non_null) {
    if (seen_root_) return;
    seen_root_ = true;
    non_null_ = non_null;
    root_mark_ = mark;
  }
  bool seen_root_ = false;
  bool non_null_ = false;
  YAML::Mark root_mark_;
};

// Reports a second document with content. Stops when the parser makes no progress: yaml-cpp
// 0.7 then returns the same bogus empty document forever.
void checkSingleDocument(const std::string& text, Context& ctx) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  RootProbe probe;
  int documents = 0;
  int last_pos = -1;
  while (parser.HandleNextDocument(probe)) {
    if (probe.rootMark().pos <= last_pos) return;
    last_pos = probe.rootMark().pos;
    if (++documents > 1 && probe.nonNull()) {
      ctx.error(toMark(ctx.file(), probe.rootMark()),
                "only one YAML document is allowed in a config file");
      return;
    }
    probe.reset();
  }
}

}  // namespace

YAML::Node loadDocument(const std::string& text, Context& ctx) {
  try {
    YAML::Node root = YAML::Load(text);
    // yaml-cpp 0.7 reads a document that starts with ',' as null instead of failing.
    YAML::Mark m = root.Mark();
    if (root.IsNull() && m.pos >= 0 && static_cast<size_t>(m.pos) < text.size() &&
        text[static_cast<size_t>(m.pos)] == ',') {
      ctx.error(toMark(ctx.file(), m), "unexpected ','");
      return YAML::Node();
    }
    checkSingleDocument(text, ctx);
    return root;
  } catch (const YAML::Exception& e) {
    ctx.error(toMark(ctx.file(), e.mark), e.msg);
    return YAML::Node();
  }
}

}  // namespace sluice::config::internal
