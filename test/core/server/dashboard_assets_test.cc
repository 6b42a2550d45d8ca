// The dashboard's compiled-in files (core/server/dashboard): served paths and types, and what
// the Content-Security-Policy (default-src 'self', nothing inline) and "no external assets" need
// of them: no inline script or style, nothing loaded from another origin, no POST.
#include "core/server/dashboard/assets.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace sluice::server::dashboard {
namespace {

std::string body(const char* path) {
  const Asset* a = findAsset(path);
  return a != nullptr ? std::string(a->body, a->size) : "";
}

TEST(DashboardAssets, PageScriptAndStylesAtFixedPaths) {
  ASSERT_EQ(kAssetCount, 3u);
  const Asset* page = findAsset("/");
  ASSERT_NE(page, nullptr);
  EXPECT_STREQ(page->content_type, "text/html; charset=utf-8");
  ASSERT_NE(findAsset("/dashboard/app.js"), nullptr);
  EXPECT_STREQ(findAsset("/dashboard/app.js")->content_type, "text/javascript; charset=utf-8");
  ASSERT_NE(findAsset("/dashboard/style.css"), nullptr);
  EXPECT_STREQ(findAsset("/dashboard/style.css")->content_type, "text/css; charset=utf-8");
  EXPECT_EQ(findAsset("/app.js"), nullptr);
  EXPECT_EQ(findAsset("/dashboard/"), nullptr);
  for (size_t i = 0; i < kAssetCount; ++i) {
    EXPECT_GT(kAssets[i].size, 100u) << kAssets[i].path;
    EXPECT_EQ(kAssets[i].body[kAssets[i].size], '\0');  // the literal's end, not data
  }
}

TEST(DashboardAssets, NothingInlineNothingExternal) {
  const std::string html = body("/");
  EXPECT_NE(html.find("<script src=\"/dashboard/app.js\" defer></script>"), std::string::npos);
  EXPECT_NE(html.find("<link rel=\"stylesheet\" href=\"/dashboard/style.css\">"),
            std::string::npos);
  // Every <script> has a src (inline code would be refused by the CSP) and no style= attribute.
  EXPECT_FALSE(std::regex_search(html, std::regex("<script(?![^>]*src=)"))) << "inline script";
  EXPECT_EQ(html.find(" style="), std::string::npos);
  EXPECT_EQ(html.find("<style"), std::string::npos);
  for (const char* path : {"/", "/dashboard/app.js", "/dashboard/style.css"}) {
    std::string text = body(path);
    // The only absolute URL is the SVG namespace name (never fetched).
    text = std::regex_replace(text, std::regex("http://www\\.w3\\.org/2000/svg"), "");
    EXPECT_EQ(text.find("http://"), std::string::npos) << path;
    EXPECT_EQ(text.find("https://"), std::string::npos) << path;
    EXPECT_EQ(text.find("//cdn"), std::string::npos) << path;
    EXPECT_EQ(text.find("@import"), std::string::npos) << path;
  }
}

TEST(DashboardAssets, ThePageOnlyReads) {
  const std::string js = body("/dashboard/app.js");
  EXPECT_NE(js.find("getJson('/stats/summary')"), std::string::npos);
  EXPECT_NE(js.find("getJson('/clusters')"), std::string::npos);
  EXPECT_EQ(js.find("'POST'"), std::string::npos);
  EXPECT_EQ(js.find("\"POST\""), std::string::npos);
  EXPECT_EQ(js.find("method:"), std::string::npos);    // every fetch is a GET
  EXPECT_EQ(js.find("innerHTML"), std::string::npos);  // names from the config go in as text
  EXPECT_EQ(js.find("eval("), std::string::npos);
}

}  // namespace
}  // namespace sluice::server::dashboard
