// GET / and /dashboard/*: the dashboard's compiled-in files (dashboard/assets.h). Main thread.
//
// The page is same-origin with the JSON it reads, so the Content-Security-Policy allows only this
// origin for scripts, styles and fetches, nothing inline, no frames, no forms, no plugins: a
// browser runs nothing but app.js here. The page has no control that sends a POST.
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "core/server/admin.h"
#include "core/server/dashboard/assets.h"

namespace sluice::server {

namespace {

constexpr char kContentSecurityPolicy[] =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

}  // namespace

bool Admin::serveDashboard(evhttp_request* req, const std::string& path) {
  const dashboard::Asset* asset = dashboard::findAsset(path == "/index.html" ? "/" : path);
  if (asset == nullptr) return false;
  evkeyvalq* out = evhttp_request_get_output_headers(req);
  evhttp_add_header(out, "Content-Type", asset->content_type);
  evhttp_add_header(out, "Cache-Control", "no-store");
  evhttp_add_header(out, "Content-Security-Policy", kContentSecurityPolicy);
  evhttp_add_header(out, "X-Content-Type-Options", "nosniff");
  evhttp_add_header(out, "X-Frame-Options", "DENY");
  evhttp_add_header(out, "Referrer-Policy", "no-referrer");
  evbuffer* buf = evbuffer_new();
  evbuffer_add_reference(buf, asset->body, asset->size, nullptr, nullptr);
  evhttp_send_reply(req, 200, "OK", buf);
  evbuffer_free(buf);
  return true;
}

}  // namespace sluice::server
