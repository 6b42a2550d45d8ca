// One client connection of the echo backend, living on one worker's event loop.
#pragma once

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <llhttp.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "tools/echo_backend/request.h"

namespace sluice::echo {

// Parses requests with llhttp as bytes arrive (bodies are hashed and dropped, never buffered),
// answers them one at a time in order (pipelined requests wait, with reading paused), streams
// `/bytes/N` replies under output watermarks, and honours keep-alive. Owned by its worker, which
// it asks to destroy it through `on_dead` (called last thing in a libevent callback).
class Connection {
 public:
  // Takes ownership of the accepted socket `fd`; `client` is the peer's "ip:port". `backend`
  // (the --name) must outlive the connection.
  Connection(event_base* base, evutil_socket_t fd, std::string client, const std::string& backend,
             std::function<void(Connection*)> on_dead);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

 private:
  struct BevDeleter {
    void operator()(bufferevent* bev) const { bufferevent_free(bev); }
  };
  struct EventDeleter {
    void operator()(event* ev) const { event_free(ev); }
  };

  static void readCb(bufferevent* bev, void* arg);
  static void writeCb(bufferevent* bev, void* arg);
  static void eventCb(bufferevent* bev, short what, void* arg);
  static void timerCb(evutil_socket_t fd, short what, void* arg);
  static const llhttp_settings_t* parserSettings();

  // Feeds buffered input to the parser until a response is in progress or input runs out.
  void parseInput();
  // Acts on the request that just completed (the parser is paused right after it).
  void respond();
  // Writes the JSON echo reply with `status` (no body for HEAD, 204, 304).
  void sendEcho(int status);
  // Writes an error reply and closes the connection once it is flushed.
  void sendError(int status, const std::string& reason);
  // Starts a `/bytes/N` reply; the rest is written from writeCb as the output drains.
  void startBytes(uint64_t count, bool content_length);
  // Tops up the output buffer of a `/bytes/N` reply; finishes the reply after the last byte.
  void fillBytes();
  // The current reply is fully queued: close if asked to, otherwise accept the next request.
  void finishResponse();
  // Stops reading and closes once the output buffer is empty.
  void closeAfterFlush();
  // Destroys this connection if it is finished. Must be the last call in a callback.
  void reapIfDead();

  event_base* base_;
  std::unique_ptr<bufferevent, BevDeleter> bev_;
  std::unique_ptr<event, EventDeleter> timer_;
  std::string client_;
  const std::string& backend_;
  std::function<void(Connection*)> on_dead_;
  llhttp_t parser_;
  Request request_;
  bool field_open_ = false;  // the parser is inside a header name
  bool busy_ = false;        // a reply is in progress; parsing waits
  bool streaming_ = false;   // a /bytes/N body is being written
  bool closing_ = false;     // close after the output drains
  bool dead_ = false;        // destroy at the end of the current callback
  uint64_t bytes_left_ = 0;
  uint64_t bytes_sent_ = 0;
  bool chunked_ = false;
};

}  // namespace sluice::echo
