// The byte-moving half of a Transport: how bytes get between a socket and the transport's
// buffers. Plain TCP moves them with readv/writev; TLS (core/tls/) runs them through OpenSSL.
// A Transport owns exactly one TransportIo and calls it on its worker thread only.
#pragma once

#include <event2/buffer.h>
#include <sys/uio.h>

#include <cstddef>
#include <string>

namespace sluice::event {

// What one I/O step did.
enum class IoStatus {
  kOk,         // progress (bytes moved, or the handshake finished)
  kWantRead,   // nothing more now: wait until the socket is readable, then call again
  kWantWrite,  // blocked: wait until the socket is writable, then call again
  kEof,        // the peer closed cleanly (FIN, or a TLS close_notify)
  kError,      // failed; lastError() says why
};

class TransportIo {
 public:
  virtual ~TransportIo() = default;

  // Advances the handshake. kOk once it is complete (plain TCP: at once). Called until kOk;
  // no read() or write() happens before that.
  virtual IoStatus handshake(int fd) = 0;
  // Reads into `iov` (`n_iov` entries, together at most the bytes the caller may take).
  // kOk sets *n > 0.
  virtual IoStatus read(int fd, const iovec* iov, int n_iov, size_t* n) = 0;
  // Writes from the front of `out` and drains what went out. kOk: `out` is empty (Transport
  // relies on it and does not ask the buffer again); kWantWrite: bytes are left, to go when the
  // socket drains; kWantRead (TLS): some may be left, to go when the socket is readable.
  virtual IoStatus write(int fd, evbuffer* out) = 0;
  // True when bytes already read from the socket wait inside the Io (TLS records decrypted
  // ahead): the caller must read again without waiting for the socket.
  virtual bool hasPending() const { return false; }
  // Starts a clean close of the sending side (TLS: one close_notify alert, best effort). The
  // caller then shuts the socket's write side.
  virtual void shutdown(int fd) {}
  // False when an idle connection's peer has closed it or sent bytes (a connection in a pool).
  virtual bool idleAndOpen(int fd) = 0;
  // Why the last call returned kError ("" if it did not).
  virtual const std::string& lastError() const = 0;
};

// Plain TCP.
class PlainIo final : public TransportIo {
 public:
  IoStatus handshake(int) override { return IoStatus::kOk; }
  IoStatus read(int fd, const iovec* iov, int n_iov, size_t* n) override;
  IoStatus write(int fd, evbuffer* out) override;
  bool idleAndOpen(int fd) override;
  const std::string& lastError() const override { return error_; }

 private:
  std::string error_;
};

}  // namespace sluice::event
