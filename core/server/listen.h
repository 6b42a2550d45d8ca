// Listening sockets: one per worker per listener, sharing the address through SO_REUSEPORT among
// this process's own workers only. Main thread.
//
// Why not simply SO_REUSEPORT on every socket: Linux lets any socket with SO_REUSEPORT and the
// same effective UID join a listening address, so a second sluice started by mistake on the same
// address would bind too and silently take a share of the connections. Instead:
//
//   1. The first socket of a listener binds with SO_REUSEADDR but *without* SO_REUSEPORT. The
//      kernel refuses that bind (EADDRINUSE) while any other socket listens on (or is bound
//      without SO_REUSEADDR to) an overlapping address, whatever that socket's flags or owner.
//      The bind itself is the check: there is no window between testing and taking the address.
//   2. Only once it is bound does that socket get SO_REUSEPORT (Linux reads the flag at each
//      later bind's conflict check and at listen(), not only at the socket's own bind), then it
//      listens; the other workers' sockets bind with SO_REUSEPORT and join its group.
//
// Another sluice doing the same fails at step 1 against our listening socket, so it never
// joins. What remains possible is a program that binds with SO_REUSEPORT on purpose under the
// same UID; an explicit hand-over (a binary upgrade passing its listening sockets to the new
// process, as nginx does) would be the sanctioned way to share and is left for later.
#pragma once

#include <string>
#include <vector>

namespace sluice::server {

// The addresses this process listens on, as listenOn() and checkBindable() need them.
struct OwnAddresses {
  // Addresses a new socket may join with SO_REUSEPORT: those of listeners that a reload moves
  // away or removes, whose sockets close once the workers run the new config.
  std::vector<std::string> joinable;
  // Every address this process listens on (or opened earlier in the same pass), to say whose
  // socket is in the way when a bind fails.
  std::vector<std::string> all;
};

// Opens `count` non-blocking TCP sockets bound to `address` ("ip:port", "[v6]:port"), all in one
// SO_REUSEPORT group (so each worker owns one and the kernel spreads connections), listening
// with `backlog`. When `address` resolves to one of `own.joinable`, every socket binds with
// SO_REUSEPORT and joins our own group; otherwise the first one binds exclusively (steps 1 and 2
// above). On success appends the sockets to *fds and returns true; on failure closes what it
// opened and returns false with *error set, e.g. "cannot bind 127.0.0.1:8080: address already in
// use (held by another process)".
bool listenOn(const std::string& address, int backlog, size_t count, const OwnAddresses& own,
              std::vector<int>* fds, std::string* error);

// The listen queue length a listener gets when its config sets no `backlog`: the kernel's
// net.core.somaxconn (read from /proc/sys/net/core/somaxconn at each call; 4096, Linux's default
// since 5.4, when it cannot be read). Never below 1.
int defaultBacklog();

// Whether listenOn() could take `address` now: true at once when it is in `own.joinable`;
// otherwise binds a socket the way step 1 does (without listen(), so it never receives a
// connection) and closes it again. For --validate, dry-run reloads and the admin address. False
// with *error worded as listenOn() words it.
bool checkBindable(const std::string& address, const OwnAddresses& own, std::string* error);

}  // namespace sluice::server
